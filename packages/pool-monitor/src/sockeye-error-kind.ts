/**
 * The brand that tells Sockeye's errors apart without `instanceof` or message matching, and its guards: a
 * non-enumerable `Symbol.for` property, so copies of the package agree and a branded error prints as any other.
 */

/** What kind of failure a branded error stands for. @public */
export type SockeyeErrorKind = "timeout" | "abort" | "handler_destroyed" | "connection_reset" | "queue_full";

/**
 * Which deadline a timeout error stands for: `connectionTimeout`, `requestTimeout` with `throwOnRequestTimeout`, an
 * inactivity timeout (`socketTimeout`, HTTP/2's `requestTimeout`), `socketAcquisitionTimeout` or `unreadBodyTimeout`.
 * @public
 */
export type TimeoutDeadline = "connection" | "request" | "idle" | "acquisition" | "unread_body";

/** A timeout a Sockeye handler raised: `name` `"TimeoutError"`, `code` `"ETIMEDOUT"` where upstream sets it. @public */
export interface SockeyeTimeoutError extends Error {
  code?: string;
  /** Which deadline expired (non-enumerable). */
  readonly deadline: TimeoutDeadline;
}

/** An abort (the request's abort signal fired): `name` `"AbortError"`, `cause` the signal's `Error` reason. @public */
export interface SockeyeAbortError extends Error {
  cause?: unknown;
}

/** A request ended by `destroy()`: `name` `"HandlerDestroyedError"`, `code` `"ERR_HANDLER_DESTROYED"`. @public */
export interface HandlerDestroyedError extends Error {
  code?: string;
}

/** The connection closed or reset before the response: `name` `"TimeoutError"`, upstream's `code`. @public */
export interface ConnectionResetError extends Error {
  code?: string;
}

/** A request rejected as its origin's queue was full: `QueueFullError`, `code` `"ERR_SOCKEYE_QUEUE_FULL"`. @public */
export interface QueueFullError extends Error {
  code?: string;
}

const KIND: unique symbol = Symbol.for("@sockeye/error-kind") as never;

/** Brands `error` as `kind`. @internal */
export function brand<E extends Error>(error: E, kind: SockeyeErrorKind): E {
  Object.defineProperty(error, KIND, { value: kind, enumerable: false, configurable: true, writable: true });
  return error;
}

/** Brands `error` as a timeout of `deadline`. @internal */
export function brandTimeout<E extends Error>(error: E, deadline: TimeoutDeadline): E {
  Object.defineProperty(error, "deadline", { value: deadline, enumerable: false, configurable: true, writable: true });
  return brand(error, "timeout");
}

/** Every `SockeyeErrorKind`: a brand with another value (a foreign `Symbol.for` user's) is no kind. */
const KINDS: ReadonlySet<unknown> = new Set<SockeyeErrorKind>([
  "timeout",
  "abort",
  "handler_destroyed",
  "connection_reset",
  "queue_full",
]);

/** The kind of a Sockeye error, or `undefined` for any other value. @public */
export function sockeyeErrorKind(error: unknown): SockeyeErrorKind | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const kind = (error as { [KIND]?: unknown })[KIND];
  return KINDS.has(kind) ? (kind as SockeyeErrorKind) : undefined;
}

/** True for a timeout a Sockeye handler raised (its `deadline` says which), not the transport's own. @public */
export function isSockeyeTimeoutError(error: unknown): error is SockeyeTimeoutError {
  return sockeyeErrorKind(error) === "timeout";
}

/** True for the error a request rejects with when its abort signal fires (`AbortError`, `cause` = reason). @public */
export function isSockeyeAbortError(error: unknown): error is SockeyeAbortError {
  return sockeyeErrorKind(error) === "abort";
}

/** True for the error a request rejects with when the handler's `destroy()` ended it. @public */
export function isHandlerDestroyedError(error: unknown): error is HandlerDestroyedError {
  return sockeyeErrorKind(error) === "handler_destroyed";
}

/** True for a connection closed or reset under a request before its response (retried by the SDK). @public */
export function isConnectionResetError(error: unknown): error is ConnectionResetError {
  return sockeyeErrorKind(error) === "connection_reset";
}

/** True for a request rejected at once because its origin's queue was full (`maxQueuedRequests`). @public */
export function isQueueFullError(error: unknown): error is QueueFullError {
  return sockeyeErrorKind(error) === "queue_full";
}
