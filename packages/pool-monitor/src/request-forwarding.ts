/**
 * The standalone `PoolMonitor`'s per-request state (`TrackedRequestState`: a `RequestState` and its `RequestTracking`
 * handle). `trackRequest()` hangs it on the request, whose events reach it through four shared module functions (no
 * closures). Errors are observed through `events.errorMonitor`, so an unhandled `'error'` still crashes as before.
 */
import { errorMonitor } from "node:events";
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import {
  noteRequestOutcome,
  requestClosed,
  requestDispatched,
  requestError,
  requestResponse,
  requestSocket,
} from "./request-listeners";
import { RequestState, type RequestTracking } from "./tracking-state";

/** A request's state, and the handle an embedder forwards the request's events to. @internal */
export class TrackedRequestState extends RequestState implements RequestTracking {
  /** @param agent - the request's agent (`undefined` as never for an unpooled request: never read). */
  constructor(
    readonly agent: Agent,
    readonly beganAt: number
  ) {
    super();
  }

  onSocket(socket: Socket, now?: number): void {
    requestSocket(this, socket, now);
  }

  onResponse(res: IncomingMessage, now?: number): void {
    requestResponse(this, res, now);
  }

  onError(error?: unknown): void {
    requestError(this, error);
  }

  onClose(error?: unknown, now?: number): void {
    requestClosed(this, error, now);
  }

  dispatched(req: ClientRequest): void {
    requestDispatched(this, req);
  }

  noteOutcome(outcome: "aborted" | "timed_out"): void {
    noteRequestOutcome(this, outcome);
  }
}

/** Symbol under which a request tracked with `trackRequest()` carries its state. */
const kRequestState = Symbol("sockeye.pool-monitor.request");

type StatefulRequest = ClientRequest & { [kRequestState]?: TrackedRequestState };

/** Hangs `st` on `req`; with `listen`, the module listeners below forward the request's events to it. @internal */
export function hangOnRequest(req: ClientRequest, st: TrackedRequestState, listen: boolean): void {
  (req as StatefulRequest)[kRequestState] = st;
  if (!listen) return;
  req.on("socket", onRequestSocket);
  req.on("response", onRequestResponse);
  req.on("close", onRequestClose);
  req.on(errorMonitor, onRequestError);
}

/** The state `trackRequest()` hung on `req`, if any. @internal */
export function stateOnRequest(req: ClientRequest): TrackedRequestState | undefined {
  return (req as StatefulRequest)[kRequestState];
}

/**
 * The request listeners, for callers that already listen to the request and forward its events by request (one
 * listener registration per event instead of two). Each is called with the request as `this`. @internal
 */
export const requestEventHandlers = {
  socket: onRequestSocket,
  response: onRequestResponse,
  error: onRequestError,
  close: onRequestClose,
} as const;

function onRequestSocket(this: ClientRequest, socket: Socket): void {
  stateOnRequest(this)?.onSocket(socket);
}

function onRequestResponse(this: ClientRequest, res: IncomingMessage): void {
  stateOnRequest(this)?.onResponse(res);
}

function onRequestError(this: ClientRequest, error?: unknown): void {
  stateOnRequest(this)?.onError(error);
}

function onRequestClose(this: ClientRequest): void {
  stateOnRequest(this)?.onClose();
}
