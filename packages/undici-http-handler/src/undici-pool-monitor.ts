/**
 * UndiciPoolMonitor: the undici reader of the one telemetry core (`TelemetryCore` of `@sockeye/pool-monitor`, which
 * counts, samples, delivers and builds snapshots exactly as for `PoolMonitor`), for pools that undici owns.
 *
 * Data sources:
 * - undici's own `PoolStats` of each origin's `Pool` (connected, free, pending), read only in `getStats()` and
 *   `sample()`: active = busy + connecting connections, idle = free, queued = pending − connecting. The `_OTHER`
 *   entry registers one `Pool` per overflowed origin while undici keeps it open (origin-pool-state.ts): its gauges
 *   and `maxSockets` are sums over the live ones, and
 *   the detector is fed per-pool evidence (only the pools full with a queue, when some are; see `sampleOrigin`).
 * - the tracked connector (`tracked-connector.ts`): connection attempts, connect/TLS time, close reason and age.
 * - the handler's request state, through the `request*` methods below: list links per request, then the core's
 *   counting methods; no allocation unless an event subscriber exists.
 *
 * Sampling (`sample(now)`, the core's) runs on the handler scheduler's recurring tick every `sampleIntervalMs` while a
 * request is in flight or an origin is not `ok`; `read()` below is O(pools + holding requests + paused bodies) per busy
 * origin. Origins only, never paths or headers.
 */
import type { RequestOutcome } from "@sockeye/pool-monitor";
import { type PoolReading, TelemetryCore, UNREAD_WHILE_QUEUED_SAMPLES } from "@sockeye/pool-monitor/internal";
import { HOLDING_LIST_TAG, OriginPoolState, type PoolRequestNode } from "./origin-pool-state";

export type { RequestOutcome };

/**
 * Telemetry and saturation detection of an `UndiciHttpHandler`'s pools: the one telemetry core with an undici reader.
 * Same `getStats()` / `subscribe()` contract as `PoolMonitor`, so `registerPoolMetrics(handler.poolMonitor)` works
 * unchanged.
 * @public
 */
export class UndiciPoolMonitor extends TelemetryCore<OriginPoolState> {
  /** @internal */
  protected newOrigin(key: string): OriginPoolState {
    return new OriginPoolState(key, this.monitorOptions);
  }

  /** @internal */
  protected read(o: OriginPoolState, now: number, r: PoolReading): void {
    o.refreshPools();
    r.activeCount = o.activeNow;
    r.idleCount = o.idle;
    r.queuedCount = o.queuedNow;
    r.socketLimit = o.connLimit;
    r.queueAgeMs = o.oldestWaitMs(now);
    const options = this.monitorOptions;
    o.readUnconsumed(now, options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * options.sampleIntervalMs, r);
    // Per-pool evidence (an `_OTHER` entry has one pool per overflowed origin): when some pool is full with a queue,
    // the sample covers those pools only; else the entry as a whole. Completions, arrivals, hold times, queue ages
    // and unconsumed bodies stay the entry's totals: the request bookkeeping is per entry, not per pool.
    const e = r.evidence;
    if (!o.poolEvidence(e)) {
      e.active = r.activeCount;
      e.maxSockets = o.connLimit ?? Number.POSITIVE_INFINITY;
      e.queued = r.queuedCount;
    }
    e.oldestQueuedMs = r.queueAgeMs;
    o.activeAges(now, e);
  }

  /** The handler no longer gates its requests (a caller's dispatcher replaced its own): plain `waitList`s. @internal */
  ungateAll(): void {
    for (const o of this.origins.values()) {
      o.gatedHere = false;
      o.gateQueues.clear();
    }
  }

  /**
   * The handler destroyed its dispatcher: every registered pool and gate queue is forgotten now (see
   * `OriginPoolState.releasePools()`). O(origin entries). @internal
   */
  releasePools(): void {
    for (const o of this.origins.values()) o.releasePools();
  }

  /**
   * A request started (before dispatch). `gated`: the handler's `OriginGate` admits it (and queues it itself, then
   * calls `requestQueued`); otherwise it waits in `waitList` until undici gives it a connection. @internal
   */
  requestStarted(o: OriginPoolState, n: PoolRequestNode, gated: boolean): void {
    if (this.coreDestroyed) return;
    this.started(o);
    if (gated) return;
    const limit = o.connLimit;
    const queued = limit !== null && o.heldCount + o.waitList.nodeCount >= limit;
    o.waitList.linkTail(n);
    if (queued) {
      n.wasQueued = true;
      this.enqueued(o);
    }
  }

  /** A gated request had to wait in its origin's `OriginGate` (it is in the gate's queue). @internal */
  requestQueued(o: OriginPoolState, n: PoolRequestNode): void {
    if (this.coreDestroyed) return;
    n.wasQueued = true;
    this.enqueued(o);
  }

  /** The request was given a connection (undici's `onRequestStart`); called once per request. @internal */
  markAcquired(o: OriginPoolState, n: PoolRequestNode, now: number): void {
    if (this.coreDestroyed) return;
    if (n.listTag === 1) {
      o.waitList.unlinkNode(n);
      o.queueShrank(o.waitList.nodeCount);
    }
    n.heldSince = now;
    if (n.listTag === 0) o.holders.linkTail(n);
    o.heldCount++;
    let reused = true;
    if (o.freshConns > 0) {
      o.freshConns--;
      reused = false;
    }
    // Queued only when it waited behind others at the limit: a request that waited only for the connection opened for
    // it is not (as a node:http request given a connecting socket), however long the connect took.
    this.acquired(o, now - n.begunAt, reused, n.wasQueued);
  }

  /** The request stopped using its connection (response complete or failed). @internal */
  requestReleased(o: OriginPoolState, n: PoolRequestNode, now: number): void {
    if (this.coreDestroyed || n.heldSince < 0) return;
    o.holders.unlinkNode(n);
    o.heldCount--;
    this.released(o, now - n.heldSince);
    n.heldSince = -1;
  }

  /** The request is over for the caller (settled and its body finished, or failed). @internal */
  markClosed(o: OriginPoolState, n: PoolRequestNode, outcome: RequestOutcome): void {
    if (this.coreDestroyed) return;
    if (n.listTag === 1) {
      o.waitList.unlinkNode(n);
      o.queueShrank(o.waitList.nodeCount);
    } else if (n.listTag === 2) {
      o.pausedList.unlinkNode(n);
    } else if (n.listTag === HOLDING_LIST_TAG) {
      o.holders.unlinkNode(n);
    }
    this.finished(o, outcome);
  }

  /** The body's consumer stopped reading (backpressure) / started again. @internal */
  bodyPaused(o: OriginPoolState, n: PoolRequestNode, now: number): void {
    if (this.coreDestroyed) return;
    o.holders.unlinkNode(n);
    if (n.listTag !== 0) return;
    n.pausedAt = now;
    o.pausedList.linkTail(n);
  }

  /** @internal */
  bodyResumed(o: OriginPoolState, n: PoolRequestNode): void {
    if (n.listTag !== 2) return;
    o.pausedList.unlinkNode(n);
    if (n.heldSince >= 0) o.holders.linkTail(n);
  }
}
