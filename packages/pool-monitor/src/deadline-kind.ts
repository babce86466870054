/**
 * What a request's `Deadline` stands for; passed back to `DeadlineOwner.onDeadline()` when it fires. A string union
 * (not a bare number), so a `switch` over it can be checked for exhaustiveness (`assertNever` in the `default`) and a
 * missed site fails to compile. Shared by the handlers: `NodeHttpHandler` arms all five, `UndiciHttpHandler`
 * `Connection`, `Acquire` and `Request` (plus its own socket idle kind), `NodeHttp2Handler` `Connection` (a session's)
 * and `Continue` (a stream's); their inactivity watches have owners of their own.
 * @internal
 */
export const DeadlineKind = {
  /** `connectionTimeout`: from `handle()` until the socket is connected (TLS included). */
  Connection: "connection",
  /** `requestTimeout`: from `handle()` until the response headers. */
  Request: "request",
  /** Upstream's `100 Continue` wait: send the body anyway after max(6 s, requestTimeout). */
  Continue: "continue",
  /** `socketAcquisitionTimeout`: from `handle()` until the request is given a socket. */
  Acquire: "acquire",
  /** The socket-usage warning window (`socketMonitor: "interval"` without telemetry). */
  Warning: "warning",
} as const;

/** @internal */
export type DeadlineKind = (typeof DeadlineKind)[keyof typeof DeadlineKind];
