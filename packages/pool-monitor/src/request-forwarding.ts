/**
 * The standalone `PoolMonitor`'s request paths (`trackRequest()`, `trackUnpooledRequest()`): the request's state is
 * hung on the request under `kRequestState`, and its events reach it either through four `on()` registrations of the
 * *same* module functions below (no closures, no `once()` wrappers) or, with `listen = false`, through the caller's
 * `PoolMonitor.requestSocket()` etc., which find it there. Each function hands the event to the state's handle
 * methods (`TrackedRequestState` in `request-listeners.ts`), the path an embedder's `attachRequest()` handle takes.
 * Only `pool-monitor.ts` imports this module, so an app that uses only a handler does not bundle it.
 *
 * Errors are observed through `events.errorMonitor`, which does not count as handling the error: an application that
 * relied on an unhandled `'error'` crashing the process keeps that behaviour.
 */
import { errorMonitor } from "node:events";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { TrackedRequestState } from "./request-listeners";
import type { TrackedRequest } from "./tracking-state";

/** Symbol under which a request tracked with `trackRequest()` carries its state. */
const kRequestState = Symbol("sockeye.pool-monitor.request");

type StatefulRequest = TrackedRequest & { [kRequestState]?: TrackedRequestState };

/** Hangs `st` on `req`; with `listen`, the module listeners below forward the request's events to it. @internal */
export function hangOnRequest(req: TrackedRequest, st: TrackedRequestState, listen: boolean): void {
  (req as StatefulRequest)[kRequestState] = st;
  if (!listen) return;
  req.on("socket", onRequestSocket);
  req.on("response", onRequestResponse);
  req.on("close", onRequestClose);
  req.on(errorMonitor, onRequestError);
}

/** The state `trackRequest()` hung on `req`, if any. @internal */
export function stateOnRequest(req: TrackedRequest): TrackedRequestState | undefined {
  return (req as StatefulRequest)[kRequestState];
}

/**
 * The request listeners, for callers that already listen to the request and forward its events by request (one
 * listener registration per event instead of two). Each is called with the request as `this`.
 * @internal
 */
export const requestEventHandlers = {
  socket: onRequestSocket,
  response: onRequestResponse,
  error: onRequestError,
  close: onRequestClose,
} as const;

function onRequestSocket(this: TrackedRequest, socket: Socket): void {
  stateOnRequest(this)?.onSocket(socket);
}

function onRequestResponse(this: TrackedRequest, res: IncomingMessage): void {
  stateOnRequest(this)?.onResponse(res);
}

function onRequestError(this: TrackedRequest, error?: unknown): void {
  stateOnRequest(this)?.onError(error);
}

function onRequestClose(this: TrackedRequest): void {
  stateOnRequest(this)?.onClose();
}
