/**
 * UndiciPoolMonitor: the undici reader of the one telemetry core (`TelemetryCore`). Gauges come from undici's
 * `PoolStats` at read time (`OriginPoolState.poll()`; an `_OTHER` entry sums its origins' pools), connections from the
 * tracked connector, request lists from the handler's requests.
 */
import type { RequestOutcome } from "@sockeye/pool-monitor";
import { type PoolReading, TelemetryCore } from "@sockeye/pool-monitor/internal";
import { OriginPoolState, type PoolRequestNode } from "./origin-pool-state";

export type { RequestOutcome };

/**
 * Telemetry and saturation detection of an `UndiciHttpHandler`'s pools: the one telemetry core with an undici reader.
 * Same `getStats()` / `subscribe()` contract as `PoolMonitor`, so `registerPoolMetrics(handler.poolMonitor)` works
 * unchanged. @public
 */
export class UndiciPoolMonitor extends TelemetryCore<OriginPoolState> {
  /** @internal */
  protected newOrigin(key: string): OriginPoolState {
    return new OriginPoolState(key, this.monitorOptions);
  }

  /** @internal */
  protected read(o: OriginPoolState, now: number, r: PoolReading): void {
    o.poll(now, r);
  }

  /** The handler no longer gates its requests (a caller's dispatcher replaced its own): plain `waitList`s. @internal */
  ungateAll(): void {
    for (const o of this.origins.values()) {
      o.gatedHere = false;
      o.gateQueues.clear();
    }
  }

  /** The handler destroyed its dispatcher: every registered pool and gate queue is forgotten. @internal */
  releasePools(): void {
    for (const o of this.origins.values()) o.releasePools();
  }

  /**
   * A request started: its `OriginGate` admits or queues it (`gated`), else it waits in `waitList`. Returns whether it
   * waits behind others at the origin's limit. @internal
   */
  requestStarted(o: OriginPoolState, n: PoolRequestNode, gated: boolean): boolean {
    if (this.coreDestroyed || gated) return false;
    const limit = o.connLimit;
    const queued = limit !== null && o.heldCount + o.waitList.nodeCount >= limit;
    o.waitList.linkTail(n);
    return queued;
  }

  /** The request was given a connection (once); returns whether the connection carried a request before. @internal */
  markAcquired(o: OriginPoolState, n: PoolRequestNode, now: number): boolean {
    if (this.coreDestroyed) return true;
    o.leaveWaitList(n);
    if (n.listTag === 0) o.holders.linkTail(n);
    n.heldSince = now;
    if (o.freshConns > 0) {
      o.freshConns--;
      return false;
    }
    return true;
  }

  /** The request stopped using its connection (response complete or failed). @internal */
  requestReleased(o: OriginPoolState, n: PoolRequestNode): void {
    if (this.coreDestroyed || n.heldSince < 0) return;
    o.holders.unlinkNode(n);
  }

  /** The request is over for the caller: it leaves its list. @internal */
  markClosed(o: OriginPoolState, n: PoolRequestNode): void {
    if (this.coreDestroyed) return;
    o.leaveWaitList(n);
    // Each list unlinks only its own nodes.
    o.pausedList.unlinkNode(n);
    o.holders.unlinkNode(n);
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
