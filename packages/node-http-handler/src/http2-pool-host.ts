/**
 * What a stream request and a session entry need from the HTTP/2 session pool (`Http2SessionPool`), so neither
 * imports the pool: no import cycle.
 */
import type { RequestOutcome } from "@sockeye/pool-monitor";
import type { Settings } from "node:http2";
import type { DeadlineScheduler } from "@sockeye/pool-monitor/internal";

/** The pool as one stream request sees it. @internal */
export interface Http2StreamHost<R, S> {
  /** `timing.now()`, ms. */
  now(): number;
  /** Places `r` on a session or queues it. Throws only if `http2.connect()` throws. */
  acquire(r: R): void;
  /**
   * Called once per request by `finish()`: takes `r` out of the queue, frees its slot (handing it on) or drops its
   * isolated session. `holdMs`: how long it held its slot (0 without a stream).
   */
  streamFinished(r: R, outcome: RequestOutcome, holdMs: number): void;
  /** The peer refused `r`'s stream on a pooled session before answering it: free the slot and place `r` again. */
  streamRefused(r: R): void;
  /** `r`'s isolated session `s` delivered its response: it takes no new stream. */
  isolatedResponded(s: S): void;
  /** A stream on `s` timed out while no stream on `s` made progress either: retire `s` unless one does by the poll phase. */
  sessionSilent(s: S): void;
}

/** The pool as one session entry sees it: the entry forwards its session's events and deadlines. @internal */
export interface Http2SessionHost<S> {
  /** The handler's one deadline scheduler (connection deadlines, `sessionTimeout`). */
  readonly sharedScheduler: DeadlineScheduler;
  /** `timing.now()`, ms. */
  now(): number;
  sessionSettings(s: S, settings: Settings): void;
  sessionGoaway(s: S, code: number): void;
  sessionError(s: S, error: Error): void;
  sessionClosed(s: S): void;
  /** `sessionTimeout` passed with no activity. */
  sessionIdle(s: S): void;
  /** `connectionTimeout` passed before the session was established. */
  connectTimedOut(s: S): void;
}
