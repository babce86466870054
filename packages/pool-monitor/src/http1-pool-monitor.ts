/**
 * `Http1PoolMonitor`: the node:http reader of the `TelemetryCore` (`read()`: agent maps and the tracker's requests into
 * gauges and evidence); `NodeHttpHandler`'s monitor, and the base of the standalone `PoolMonitor`.
 */
import type { Socket } from "node:net";
import type { PoolReading } from "./pool-reading";
import { TelemetryCore } from "./telemetry-core";
import { AgentLinks, type Http1Requests, OriginState, socketStateOf } from "./tracking-state";

/** Telemetry and saturation detection of `NodeHttpHandler` (`handler.poolMonitor`), fed by the handler. @public */
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
    o.poll(this.originLinks, this.requests, now, r);
    this.requests?.readUnread(o, now, r);
  }

  /** The caller is closing `socket` on purpose (idle too long, or too old): its close counts under that reason. */
  noteSocketClose(socket: Socket, reason: "idle_timeout" | "max_lifetime"): void {
    const ss = socketStateOf(socket);
    if (ss !== undefined && ss.core === this && !ss.closed) ss.closedBy = reason;
  }
}
