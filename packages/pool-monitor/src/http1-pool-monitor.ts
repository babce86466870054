/**
 * `Http1PoolMonitor`: the node:http pool reader of `NodeHttpHandler` (the handler's monitor), and the base of the
 * standalone `PoolMonitor` (`pool-monitor.ts`), which adds its own request tracking for the user's own agents
 * (`request-listeners.ts`, `request-forwarding.ts`). The handler counts its requests on the core itself, from its
 * requests' own phases, and hands the monitor its live requests (`requests`) for the ages and unread bodies.
 *
 * Counting, sampling, delivery and snapshots are the shared `TelemetryCore` (`telemetry-core.ts`); this class is
 * its node:http reader: `read()` turns each busy origin's agent maps and its tracker's requests into the gauges and
 * the detector's evidence.
 */
import type { Socket } from "node:net";
import type { PoolReading } from "./pool-reading";
import { TelemetryCore, UNREAD_WHILE_QUEUED_SAMPLES } from "./telemetry-core";
import { AgentLinks, type Http1Requests, OriginState, socketStateOf } from "./tracking-state";

/**
 * Socket-pool telemetry and saturation detection of `NodeHttpHandler` (`handler.poolMonitor`), fed by the handler;
 * `PoolMonitor` extends it for your own agents.
 * @public
 */
export class Http1PoolMonitor extends TelemetryCore<OriginState> {
  /** Which origin each agent name belongs to. @internal */
  readonly originLinks = new AgentLinks();
  /** The requests a reading covers (their ages and unread bodies), as their tracker keeps them. @internal */
  requests: Http1Requests | undefined = undefined;

  /** @internal */
  protected newOrigin(key: string): OriginState {
    return new OriginState(key, this.monitorOptions);
  }

  /** @internal */
  protected read(o: OriginState, now: number, r: PoolReading): void {
    const requests = this.requests;
    o.poll(this.originLinks, requests, now, r);
    if (requests === undefined) return;
    const options = this.monitorOptions;
    const limit = r.unreadLimit(options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * options.sampleIntervalMs);
    requests.readUnread(o, now, limit, r);
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
