/**
 * `PoolReading`: what a transport reads from its own pool for one origin at sample and snapshot time (one instance
 * per core: reading allocates nothing): the gauges, the unread bodies, and the detector's `evidence`, which may count
 * only the sub-pools full with a queue, so idle capacity elsewhere does not dilute it.
 */
import { round3 } from "./duration-histogram";
import type { PoolGauges } from "./pool-stats";

/** The detector's figures for one sample. @internal */
export class SampleEvidence {
  active = 0;
  /** Capacity: `Infinity` when unbounded. */
  maxSockets = Number.POSITIVE_INFINITY;
  queued = 0;
  /** Completions since the last sample; `-1`: the origin's own count. */
  completions = -1;
  oldestQueuedMs = 0;
  oldestActiveMs = 0;
  activeAgeSumMs = 0;
  activeAgeCount = 0;

  /** The reading's defaults: unbounded capacity, the origin's own completions. */
  clear(): void {
    this.zero();
    this.maxSockets = Number.POSITIVE_INFINITY;
    this.completions = -1;
  }

  /** All 0: the start of a sum (`add()`). */
  zero(): this {
    this.active = this.queued = this.maxSockets = this.completions = 0;
    this.oldestQueuedMs = this.oldestActiveMs = this.activeAgeSumMs = this.activeAgeCount = 0;
    return this;
  }

  /** Adds the figures of one sub-pool: counts and sums add up, ages keep the oldest. */
  add(l: SampleEvidence): void {
    this.active += l.active;
    this.queued += l.queued;
    this.maxSockets += l.maxSockets;
    this.completions += l.completions;
    this.activeAgeSumMs += l.activeAgeSumMs;
    this.activeAgeCount += l.activeAgeCount;
    if (l.oldestQueuedMs > this.oldestQueuedMs) this.oldestQueuedMs = l.oldestQueuedMs;
    if (l.oldestActiveMs > this.oldestActiveMs) this.oldestActiveMs = l.oldestActiveMs;
  }
}

/** A response body as the unread-body rule reads it (a `Readable`). @internal */
export interface UnreadBody {
  readonly readableEnded: boolean;
  readonly destroyed: boolean;
  readonly readableFlowing: boolean | null;
  readonly readableLength: number;
}

/** A transport's bookkeeping of one open body's progress, for `PoolReading.addWatched`. @internal */
export interface UnreadWatch {
  /** The progress marker last seen (bytes read, a progress count). */
  seenProgress: number;
  /** Since when it has not moved, `timing.now()` ms. */
  progressAt: number;
}

/** @internal */
export class PoolReading {
  /** The gauges of `getStats()`, as the reader's `setGauges()` left them (every reader sets them first). */
  gauges!: PoolGauges;
  unreadCount = 0;
  unreadAgeMs = 0;
  readonly evidence = new SampleEvidence();
  /** `unconsumedBodyMs`, and the shorter threshold that applies while requests queue (`clear()`). */
  private unreadMs = 0;
  private queuedUnreadMs = 0;

  /**
   * Sets every gauge, once per reading, from a literal of the reader's (a reader missing a new gauge does not
   * compile); the snapshot spreads it. Allocates one object per reading, at sample and snapshot time only.
   */
  setGauges(g: PoolGauges): void {
    g.oldestQueuedMs = round3(g.oldestQueuedMs);
    this.gauges = g;
  }

  /**
   * The one unread-body rule: an open body is unread when it made no progress since `stillSince` for the threshold
   * (the shorter one while requests queue) and its caller is not reading it (data buffered, or paused: `body`
   * undefined); its age runs from `since`. Call after `setGauges()`.
   */
  addUnread(now: number, stillSince: number, since: number, body?: UnreadBody): void {
    const g = this.gauges;
    const limitMs = g.queued > 0 && this.queuedUnreadMs < this.unreadMs ? this.queuedUnreadMs : this.unreadMs;
    if (now - stillSince < limitMs) return;
    if (body !== undefined) {
      if (body.readableEnded || body.destroyed) return;
      if (body.readableFlowing !== null && body.readableLength === 0) return;
    }
    this.unreadCount++;
    if (now - since > this.unreadAgeMs) this.unreadAgeMs = now - since;
  }

  /** `addUnread()` for a body whose transport watches its progress marker (`progress` now; a move restarts `w`). */
  addWatched(w: UnreadWatch, progress: number, now: number, since: number, body: UnreadBody | undefined): void {
    if (progress !== w.seenProgress) {
      w.seenProgress = progress;
      w.progressAt = now;
      return;
    }
    this.addUnread(now, w.progressAt, since, body);
  }

  /** Before a reading: no unread body, the evidence's defaults, the unread thresholds (ms) of the options now. */
  clear(unreadMs: number, queuedUnreadMs: number): void {
    this.unreadCount = this.unreadAgeMs = 0;
    this.unreadMs = unreadMs;
    this.queuedUnreadMs = queuedUnreadMs;
    this.evidence.clear();
  }
}
