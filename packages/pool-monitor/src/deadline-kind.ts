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

/**
 * Whether an armed deadline of each kind keeps the process alive, as the native timer upstream arms for the same wait
 * does: a request in flight waits on it, even with no socket of its own to hold the loop (a request answered by
 * `nock` or `msw` waiting out its `100 Continue`). Inactivity watches, sweeps and the owner tick do not hold the loop
 * (Node's own socket and stream timeouts are unref'd too), so an idle handler keeps nothing alive.
 */
const HOLDS_LOOP: Record<DeadlineKind, boolean> = {
  connection: true,
  request: true,
  continue: true,
  acquire: true,
  warning: true,
};

/** Whether a deadline of `kind` keeps the process alive while armed (false for kinds that are not a `DeadlineKind`). @internal */
export function holdsLoop(kind: unknown): boolean {
  return typeof kind === "string" && HOLDS_LOOP[kind as DeadlineKind] === true;
}
