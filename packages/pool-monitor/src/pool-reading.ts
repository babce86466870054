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

/** A transport's bookkeeping of one open body's progress, for `PoolReading.progressed`. @internal */
export interface UnreadWatch {
  /** The progress marker last seen (bytes read, a progress count). */
  seenProgress: number;
  /** Since when it has not moved, `timing.now()` ms. */
  progressAt: number;
}

/** @internal */
export class PoolReading {
  /** The gauges of `getStats()`, as `setGauges()` left them. */
  readonly gauges: PoolGauges = { maxSockets: null, active: 0, idle: 0, queued: 0, oldestQueuedMs: 0 };
  unreadCount = 0;
  unreadAgeMs = 0;
  readonly evidence = new SampleEvidence();

  /** Sets every gauge, once per reading (a reader missing a new gauge does not compile). */
  setGauges(maxSockets: number | null, active: number, idle: number, queued: number, oldestQueuedMs: number): void {
    const g = this.gauges;
    g.maxSockets = maxSockets;
    g.active = active;
    g.idle = idle;
    g.queued = queued;
    g.oldestQueuedMs = round3(oldestQueuedMs);
  }

  /** The unread-body threshold, ms: `queuedThresholdMs` if shorter while requests queue, else `thresholdMs`. */
  unreadLimit(thresholdMs: number, queuedThresholdMs: number): number {
    return this.gauges.queued > 0 && queuedThresholdMs < thresholdMs ? queuedThresholdMs : thresholdMs;
  }

  /** Whether `w`'s body made progress since the last look (`progress`: its marker now); if so, notes it at `now`. */
  static progressed(w: UnreadWatch, progress: number, now: number): boolean {
    if (progress === w.seenProgress) return false;
    w.seenProgress = progress;
    w.progressAt = now;
    return true;
  }

  /**
   * The one unread-body rule: an open body is unread when it made no progress since `stillSince` for `limitMs` and
   * its caller is not reading it (data buffered, or paused: `body` undefined); its age runs from `since`.
   */
  addUnread(now: number, limitMs: number, stillSince: number, since: number, body?: UnreadBody): void {
    if (now - stillSince < limitMs) return;
    if (body !== undefined) {
      if (body.readableEnded || body.destroyed) return;
      if (body.readableFlowing !== null && body.readableLength === 0) return;
    }
    this.unreadCount++;
    if (now - since > this.unreadAgeMs) this.unreadAgeMs = now - since;
  }

  /** Before a reading: no unread body, the evidence's defaults (the reader sets every gauge). */
  clear(): void {
    this.unreadCount = this.unreadAgeMs = 0;
    this.evidence.clear();
  }
}
