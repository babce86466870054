import type { Http1PoolMonitor } from "@sockeye/pool-monitor";
import type { Socket } from "node:net";
import type { DeadlineScheduler, OriginState } from "@sockeye/pool-monitor/internal";
import type { Admission } from "./agent-gate";
import type { LifecycleCloseReason } from "./socket-lifecycle";

/**
 * What a request needs from the handler that runs it (`HandlerRuntime`), so the request does not import the runtime.
 * Its life runs from `requestStarted` to `requestFinished` (called once). @internal
 */
export interface RequestHost<R> {
  readonly hostScheduler: DeadlineScheduler;
  /** Per-origin telemetry; `undefined` with `telemetry: false`. */
  readonly hostMonitor: Http1PoolMonitor | undefined;
  /** Counts it in flight and asks the plan's gate (if any) for a slot (see `AgentGate.admit`). */
  requestStarted(r: R, now: number): Admission;
  /** Right before the Node request is created: drop expired free sockets of its agent. */
  requestDispatching(r: R, now: number): void;
  /** The entry of the origin `key` (`scheme://host:port`) in `monitor`. */
  originOf(monitor: Http1PoolMonitor, key: string): OriginState;
  /** The promise settled: the socket-usage window no longer matters. */
  requestSettled(r: R): void;
  /** The single way out (once per request, after it was counted): every registration released. `now`: ms, if read. */
  requestFinished(r: R, now: number): void;
  /** The request's socket connected: start its inactivity watch (`socketTimeout`) from `now` (`timing.now()` ms). */
  watchIdle(r: R, socket: Socket, now: number): void;
  /** The request waited its whole socket-usage window without settling. */
  onWarningWindow(r: R): void;
  /** Telemetry for a socket the handler closes on purpose (`connectionLifetime` reached). */
  socketClosedByLimit(socket: Socket, reason: LifecycleCloseReason): void;
}
