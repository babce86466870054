/**
 * `PoolReading`: what a transport reads from its own pool for one origin, at sample and snapshot time only. The
 * telemetry core owns one instance and hands it to the transport's `read()` (cleared first), so reading allocates
 * nothing.
 *
 * Two sets of figures:
 * - the gauges of `getStats()` (`active`, `idle`, `queued`, `maxSockets`, `oldestQueuedMs`, unread bodies);
 * - the detector's evidence (`evidence`): the same figures by default, or those of only the sub-pools that are full
 *   with a queue (agent names under one origin, the pools of an `_OTHER` entry, HTTP/2 stream slots), so one
 *   saturated part is not diluted by idle capacity elsewhere. Its `maxSockets` is the capacity the detector compares
 *   with (`Infinity`: unbounded, never saturated), which for HTTP/2 counts stream slots, not sessions.
 */

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

/** @internal */
export class PoolReading {
  /** Connections carrying a request, connecting ones included. */
  activeCount = 0;
  /** Open connections carrying none. */
  idleCount = 0;
  /** Requests waiting for a connection (or a stream slot). */
  queuedCount = 0;
  /** The connection limit reported in `getStats()`; `null` = unlimited or unknown. */
  socketLimit: number | null = null;
  queueAgeMs = 0;
  unreadCount = 0;
  unreadAgeMs = 0;
  readonly evidence = new SampleEvidence();

  clear(): void {
    this.activeCount = this.idleCount = this.queuedCount = this.queueAgeMs = 0;
    this.unreadCount = this.unreadAgeMs = 0;
    this.socketLimit = null;
    this.evidence.clear();
  }
}
