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

  clear(): void {
    this.active = this.queued = this.oldestQueuedMs = this.oldestActiveMs = 0;
    this.activeAgeSumMs = this.activeAgeCount = 0;
    this.maxSockets = Number.POSITIVE_INFINITY;
    this.completions = -1;
  }
}

/** @internal */
export class PoolReading {
  /** Connections carrying a request, connecting ones included. */
  active = 0;
  /** Open connections carrying none. */
  idle = 0;
  /** Requests waiting for a connection (or a stream slot). */
  queued = 0;
  /** The connection limit reported in `getStats()`; `null` = unlimited or unknown. */
  maxSockets: number | null = null;
  oldestQueuedMs = 0;
  unconsumedCount = 0;
  unconsumedOldestMs = 0;
  readonly evidence = new SampleEvidence();

  clear(): void {
    this.active = this.idle = this.queued = this.oldestQueuedMs = 0;
    this.unconsumedCount = this.unconsumedOldestMs = 0;
    this.maxSockets = null;
    this.evidence.clear();
  }
}
