/**
 * What a request's `Deadline` stands for; passed back to `DeadlineOwner.onDeadline()` when it fires.
 * @internal
 */
export enum DeadlineKind {
  /** `connectionTimeout`: from `handle()` until the socket is connected (TLS included). */
  Connection = 0,
  /** `requestTimeout`: from `handle()` until the response headers. */
  Request = 1,
  /** Upstream's `100 Continue` wait: send the body anyway after max(6 s, requestTimeout). */
  Continue = 2,
  /** `socketAcquisitionTimeout`: from `handle()` until the request is given a socket. */
  Acquire = 3,
  /** The socket-usage warning window (`socketMonitor: "interval"` without telemetry). */
  Warning = 4,
}
