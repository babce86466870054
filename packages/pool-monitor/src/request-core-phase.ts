/**
 * Where a request is, as every transport reports it to `RequestCore`. Phases only move forward; a transport may skip
 * some (undici goes from `Created` or `Queued` straight to `Connected`). The deadline rules (`deadline-kind.ts`) are
 * written in these phases.
 * @internal
 */
export const RequestPhase = {
  /** `handle()` was called. */
  Created: 0,
  /** Waiting for a connection or a stream slot behind others. */
  Queued: 1,
  /** Given a socket, a connection or a stream slot (it may still be connecting). */
  Acquired: 2,
  /** Its connection is connected (TLS included) and the request is being sent. */
  Connected: 3,
  /** The whole request was written. */
  Sent: 4,
  /** The response headers arrived (the promise resolved). */
  Headers: 5,
  /** Finished: nothing of the request is registered anywhere any more. */
  Done: 6,
} as const;

/** @internal */
export type PhaseOf = (typeof RequestPhase)[keyof typeof RequestPhase];
