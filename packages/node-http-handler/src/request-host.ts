import type { Http1PoolMonitor } from "@sockeye/pool-monitor";
import type { ClientRequest } from "node:http";
import type { Socket } from "node:net";
import type { DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import type { Admission } from "./agent-gate";
import type { LifecycleCloseReason } from "./socket-lifecycle";

/**
 * What a request needs from the handler that runs it (implemented by `HandlerRuntime`). The request depends on
 * this interface only, so `in-flight-request.ts` does not import the runtime and the runtime can import the request:
 * no import cycle. `R` is the request's state type.
 *
 * The calls bracket a request's life: `requestStarted` (counted in flight) … `requestFinished` (its single way out,
 * called exactly once by `InFlightRequest.finish()`).
 * @internal
 */
export interface RequestHost<R> {
  /** The handler's shared deadline scheduler. */
  readonly hostScheduler: DeadlineScheduler;
  /** Per-origin telemetry; `undefined` with `telemetry: false`. */
  readonly hostMonitor: Http1PoolMonitor | undefined;
  /**
   * At `start()`: count it in flight and ask the plan's gate (if any) for a slot. Returns `"dispatch"` when the Node
   * request may be created now; `"queued"`: it waits in the gate, which calls `dispatchFromGate()` when its turn
   * comes; `"full"`: the gate's queue for it held `maxQueuedRequests` (counted so), it must fail at once.
   */
  requestStarted(r: R, now: number): Admission;
  /** Right before the Node request is created: drop expired free sockets of its agent. */
  requestDispatching(r: R, now: number): void;
  /** The Node request `req` exists: counted by telemetry from now (or since the gate queued it). */
  requestCreated(r: R, req: ClientRequest): void;
  /** The promise settled: the socket-usage window no longer matters. */
  requestSettled(r: R): void;
  /**
   * The single way out: every per-request registration of the handler is released, and telemetry counts its end.
   * Called once per request.
   */
  requestFinished(r: R): void;
  /** The request's socket connected: start its inactivity watch (`socketTimeout`) from `now` (`timing.now()` ms). */
  watchIdle(r: R, socket: Socket, now: number): void;
  /** The request waited its whole socket-usage window without settling. */
  onWarningWindow(r: R): void;
  /** Telemetry for a socket the handler closes on purpose (`connectionLifetime` reached). */
  socketClosedByLimit(socket: Socket, reason: LifecycleCloseReason): void;
}
