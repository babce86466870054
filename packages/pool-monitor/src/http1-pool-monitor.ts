/**
 * `Http1PoolMonitor`: the node:http pool reader of `NodeHttpHandler` (the handler's monitor), and the base of the
 * standalone `PoolMonitor` (`pool-monitor.ts`), which adds what only a monitor of the user's own agents needs
 * (`trackRequest()` with its own listeners or forwarding by request, the `attach…()` handles, `start()`'s interval).
 * An app that uses only the handler therefore bundles none of that (a class's methods cannot be tree-shaken one by
 * one; its modules can): the handler feeds the monitor from its own per-request object, through the functions of
 * `request-listeners.ts` (`@sockeye/pool-monitor/internal`).
 *
 * Counting, sampling, delivery and snapshots are the shared `TelemetryCore` (`telemetry-core.ts`); this class is
 * its node:http reader: `read()` turns each busy origin's agent maps and open responses into the gauges and the
 * detector's evidence. Cost: O(busy origins × (agent names + open responses)).
 */
import type { Socket } from "node:net";
import type { PoolReading } from "./pool-reading";
import { TelemetryCore, UNREAD_WHILE_QUEUED_SAMPLES } from "./telemetry-core";
import { AgentLinks, OriginState, socketStateOf } from "./tracking-state";

/**
 * Socket-pool telemetry and saturation detection of `NodeHttpHandler` (`handler.poolMonitor`), fed by the handler;
 * `PoolMonitor` extends it for your own agents.
 * @public
 */
export class Http1PoolMonitor extends TelemetryCore<OriginState> {
  /** Which origin each agent name belongs to. @internal */
  readonly originLinks = new AgentLinks();

  /** @internal */
  protected newOrigin(key: string): OriginState {
    return new OriginState(key, this.monitorOptions);
  }

  /** @internal */
  protected read(o: OriginState, now: number, r: PoolReading): void {
    o.poll(this.originLinks, this, now, r);
    const options = this.monitorOptions;
    o.pollUnconsumed(now, options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * options.sampleIntervalMs, r);
  }

  /**
   * Tells the monitor that the caller is closing `socket` on purpose (a pooled socket idle too long, or older than
   * its allowed lifetime), so its close is counted under that reason. Unknown sockets are ignored.
   */
  noteSocketClose(socket: Socket, reason: "idle_timeout" | "max_lifetime"): void {
    const ss = socketStateOf(socket);
    if (ss !== undefined && ss.core === this && !ss.closed) ss.closedBy = reason;
  }
}
