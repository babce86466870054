/**
 * Every error a handler builds when it, not the transport, ends a request, and the shapes it gives transport
 * failures: upstream's `name`, `message` and `code` where upstream has the same failure (the SDK's retries read them,
 * log alerts match messages). Errors a caller may tell apart carry a brand (sockeye-error-kind.ts).
 */
import {
  brand,
  brandTimeout,
  type ConnectionResetError,
  type HandlerDestroyedError,
  type QueueFullError,
  type SockeyeAbortError,
  type SockeyeTimeoutError,
  sockeyeErrorKind,
  type TimeoutDeadline,
} from "./sockeye-error-kind";

/** Socket error codes upstream relabels `TimeoutError`. */
const NODEJS_TIMEOUT_ERROR_CODES: readonly string[] = ["ECONNRESET", "EPIPE", "ETIMEDOUT"];

function timeoutError(message: string, deadline: TimeoutDeadline, code?: string, cause?: Error): SockeyeTimeoutError {
  const error = (cause === undefined ? new Error(message) : new Error(message, { cause })) as SockeyeTimeoutError;
  error.name = "TimeoutError";
  if (code !== undefined) error.code = code;
  return brandTimeout(error, deadline);
}

/** `connectionTimeout` expired: upstream's message, then `detail`; `cause`: the transport's error. @internal */
export function connectionTimeoutError(
  prefix: string,
  ms: number | undefined,
  detail?: string,
  cause?: Error
): SockeyeTimeoutError {
  let message = `${prefix} - the request socket did not establish a connection with the server within the configured timeout of ${ms} ms.`;
  if (detail !== undefined) message += ` ${detail}`;
  return timeoutError(message, "connection", undefined, cause);
}

/** An HTTP/2 session was not established within `connectionTimeout` (`code` `ETIMEDOUT`). @internal */
export function sessionConnectTimeoutError(
  prefix: string,
  origin: string,
  ms: number | undefined
): SockeyeTimeoutError {
  return timeoutError(
    `${prefix} - HTTP/2 session to ${origin} was not established (TCP, TLS and the server's SETTINGS) within connectionTimeout=${ms} ms.`,
    "connection",
    "ETIMEDOUT"
  );
}

/** Upstream's `requestTimeout` text, `[ERROR]` when it throws, `[WARN]` when it only warns. @internal */
export function requestTimeoutMessage(prefix: string, ms: number | undefined, throws: boolean): string {
  return `${prefix} - [${throws ? "ERROR" : "WARN"}] a request has exceeded the configured ${ms} ms requestTimeout.`;
}

/** What follows the `[WARN]` message of a `requestTimeout` that only warns. @internal */
export const REQUEST_TIMEOUT_HINT =
  "Init client requestHandler with throwOnRequestTimeout=true to turn this into an error.";

/** `requestTimeout` expired with `throwOnRequestTimeout: true` (`code` `ETIMEDOUT`). @internal */
export function requestTimeoutError(prefix: string, ms: number | undefined): SockeyeTimeoutError {
  return timeoutError(requestTimeoutMessage(prefix, ms, true), "request", "ETIMEDOUT");
}

/** `socketAcquisitionTimeout` expired after `waitedMs` queued; `queue` e.g. `maxSockets=50, 12 queued`. @internal */
export function acquisitionTimeoutError(
  prefix: string,
  ms: number | undefined,
  waitedMs: number,
  what: "socket" | "connection",
  queue: string
): SockeyeTimeoutError {
  return timeoutError(
    `${prefix} - the request waited ${Math.round(waitedMs)} ms for a free ${what} (${queue}) and exceeded the configured socketAcquisitionTimeout of ${ms} ms. Raise maxSockets, lower concurrency, or make sure response bodies are consumed.`,
    "acquisition",
    "ETIMEDOUT"
  );
}

/** `socketTimeout` (inactivity) expired; the message says whether the limit was the service's default. @internal */
export function socketIdleTimeoutError(
  prefix: string,
  ms: number | undefined,
  serviceDefault: boolean,
  cause?: Error
): SockeyeTimeoutError {
  return timeoutError(
    `${prefix} - the request socket timed out after ${ms} ms of inactivity (${serviceDefault ? "service default socket timeout" : "configured by client requestHandler"}).`,
    "idle",
    undefined,
    cause
  );
}

/** An HTTP/2 stream's inactivity timeout (`requestTimeout`) expired: upstream's text, no code. @internal */
export function streamIdleTimeoutError(ms: number): SockeyeTimeoutError {
  return timeoutError(`Stream timed out because of no activity for ${ms} ms`, "idle");
}

/** An abort's error, as upstream's: `AbortError`, an `Error` reason as `cause`, another as message. @internal */
export function buildAbortError(abortSignal?: unknown): SockeyeAbortError {
  const reason =
    abortSignal && typeof abortSignal === "object" && "reason" in abortSignal
      ? (abortSignal as { reason?: unknown }).reason
      : undefined;
  const error: SockeyeAbortError = new Error(reason instanceof Error || !reason ? "Request aborted" : String(reason));
  error.name = "AbortError";
  if (reason instanceof Error) error.cause = reason;
  return brand(error, "abort");
}

/** `maxQueuedRequests` refused a request: `queued` requests already wait for a free `what`; not retried. @internal */
export function queueFullError(
  prefix: string,
  max: number,
  queued: number,
  what: "socket" | "connection" | "stream slot"
): QueueFullError {
  const error = new Error(
    `${prefix} - the request was rejected at once: ${queued} requests already wait for a free ${what} of this origin (maxQueuedRequests=${max}). Raise maxQueuedRequests or maxSockets, or lower concurrency.`
  ) as QueueFullError;
  error.name = "QueueFullError";
  error.code = "ERR_SOCKEYE_QUEUE_FULL";
  return brand(error, "queue_full");
}

/** `unreadBodyTimeout` expired: the response body was destroyed unread; the error of its later read. @internal */
export function unreadBodyTimeoutError(prefix: string, ms: number): SockeyeTimeoutError {
  return timeoutError(
    `${prefix} - the response body was not read within unreadBodyTimeout=${ms} ms, so it was destroyed and its connection freed.`,
    "unread_body"
  );
}

/** Whether `error` is the one `unreadBodyTimeoutError()` builds. @internal */
export function isUnreadBodyError(error: unknown): boolean {
  return sockeyeErrorKind(error) === "timeout" && (error as SockeyeTimeoutError).deadline === "unread_body";
}

/** The caller destroyed a response body before its end (handed to the transport, not to a caller). @internal */
export function bodyDestroyedError(prefix: string): Error {
  return Object.assign(new Error(`${prefix} - the response body was destroyed.`), { name: "AbortError" });
}

/** A `HandlerDestroyedError` saying `where` the request was, e.g. "while the request was in flight". @internal */
export function handlerDestroyedError(prefix: string, where: string): HandlerDestroyedError {
  const error = new Error(
    `${prefix} - the handler was destroyed (destroy() was called) ${where}; no new connection is opened for it.`
  ) as HandlerDestroyedError;
  error.name = "HandlerDestroyedError";
  error.code = "ERR_HANDLER_DESTROYED"; // not transient: the SDK does not retry it
  return brand(error, "handler_destroyed");
}

/** `NodeHttp2Handler.destroy()` failed a stream still waiting for a slot: upstream's plain `Error`. @internal */
export function http2DestroyedError(prefix: string): HandlerDestroyedError {
  return brand(new Error(`${prefix} - the handler was destroyed before a stream slot was free.`), "handler_destroyed");
}

/** Node's own code for a body that disagrees with its `content-length`. */
const CONTENT_LENGTH_MISMATCH_CODE = "ERR_HTTP_CONTENT_LENGTH_MISMATCH";

/**
 * A request body of `actual` bytes (-1: unknown) against a `content-length` of `declared`: a `TypeError` when `known`
 * before sending, else an `Error` for a stream cut off while sent. @internal
 */
export function contentLengthMismatchError(
  prefix: string,
  declared: number,
  actual: number,
  known: boolean,
  cause?: Error
): Error {
  let error: Error;
  if (known) {
    error = new TypeError(
      `${prefix} - the request's content-length header says ${declared} bytes but its body has ${actual}; nothing was sent.`
    );
  } else {
    const what =
      actual < 0
        ? "did not supply the bytes its content-length header declares"
        : actual > declared
          ? `ran past the ${declared} bytes its content-length header declares`
          : `ended after ${actual} of the ${declared} bytes its content-length header declares`;
    const message = `${prefix} - the request body stream ${what}; the request was cut off, no byte past the declared length was sent.`;
    error = cause === undefined ? new Error(message) : new Error(message, { cause });
  }
  return Object.assign(error, { code: CONTENT_LENGTH_MISMATCH_CODE });
}

/** A `Readable` request body that cannot be sent: destroyed, or already read while bytes are declared. @internal */
export function unusableBodyError(prefix: string, problem: "destroyed" | "consumed"): Error {
  return Object.assign(
    new Error(
      problem === "destroyed"
        ? `${prefix} - the request body stream was destroyed before it was sent; pass a new stream for each request.`
        : `${prefix} - the request body stream was already read to its end, so it cannot supply the bytes its content-length header declares; pass a new stream for each request.`
    ),
    { code: problem === "destroyed" ? "ERR_STREAM_DESTROYED" : CONTENT_LENGTH_MISMATCH_CODE }
  );
}

/**
 * A `Readable` request body destroyed without an error before its end: the request was cut off (Node's code for a
 * stream closed before its end, which the SDK does not retry). @internal
 */
export function bodyClosedEarlyError(prefix: string, cause?: Error): Error {
  const message = `${prefix} - the request body stream was destroyed before its end, without an error; the request was cut off.`;
  const error = cause === undefined ? new Error(message) : new Error(message, { cause });
  return Object.assign(error, { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

/** Relabels a socket error (`NODEJS_TIMEOUT_ERROR_CODES`) as upstream's `TimeoutError`; others unchanged. @internal */
export function relabelSocketError<E extends Error & { code?: string }>(error: E): E {
  if (!error || !NODEJS_TIMEOUT_ERROR_CODES.includes(error.code as string)) return error;
  if (sockeyeErrorKind(error) !== undefined) return error;
  error.name = "TimeoutError";
  return brand(error, "connection_reset");
}

/** The request closed (e.g. destroyed by a caller holding it) before any response or error. @internal */
export function closedBeforeResponseError(prefix: string): ConnectionResetError {
  return connectionReset(new Error(`${prefix} - the request closed before a response was received.`));
}

/** undici's "other side closed" before the response, in Node's relabelled "socket hang up" shape. @internal */
export function socketHangUpError(cause: Error): ConnectionResetError {
  return connectionReset(new Error(`socket hang up (${cause.message})`, { cause }));
}

/** Node's reset shape, as upstream relabels it: `TimeoutError`, `ECONNRESET`. */
function connectionReset(error: ConnectionResetError): ConnectionResetError {
  error.name = "TimeoutError";
  error.code = "ECONNRESET";
  return brand(error, "connection_reset");
}

/** A response body cut short, in Node's unbranded shape (`Error("aborted")`, `ECONNRESET`). @internal */
export function bodyAbortedError(cause: Error): Error {
  return Object.assign(new Error("aborted", { cause }), { code: "ECONNRESET" });
}

/** An HTTP/2 stream closed without a response; a reset when its session was destroyed under it. @internal */
export function http2NoResponseError(sessionDestroyed: boolean): Error {
  const error = new Error("Unexpected error: http2 request did not get a response");
  if (!sessionDestroyed) return error;
  error.name = "TimeoutError";
  return brand(error, "connection_reset");
}

/** An HTTP/2 stream reset by the peer or cancelled (upstream's text). @internal */
export function http2StreamAbortedError(rstCode: number | undefined): Error {
  return new Error(`HTTP/2 stream is abnormally aborted in mid-communication with result code ${rstCode}.`);
}

/** An HTTP/2 frame could not be sent (upstream's text). @internal */
export function http2FrameError(type: number, id: number, code: number): Error {
  return new Error(`Frame type id ${type} in stream id ${id} has failed with code ${code}.`);
}

/** An HTTP/2 session closed before it was established. @internal */
export function http2SessionClosedError(prefix: string, origin: string): Error {
  return new Error(`${prefix} - HTTP/2 session to ${origin} closed before it was established.`);
}
