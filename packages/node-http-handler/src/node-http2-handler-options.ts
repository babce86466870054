import type { Logger } from "@smithy/types";
import type { SharedHandlerOptions } from "@sockeye/pool-monitor";
import type { Http2SharedOption } from "@sockeye/pool-monitor/internal";
import type { ClientSessionOptions, SecureClientSessionOptions } from "node:http2";

/**
 * Options of Sockeye's `NodeHttp2Handler`: every option of upstream 4.14.2's `NodeHttp2HandlerOptions` with the same
 * meaning and default, plus Sockeye's own; the options it shares with the HTTP/1.1 handlers (`telemetry`,
 * `socketMonitor`, `saturation`, `onSaturation`, `onRecovery`) are documented on `SharedHandlerOptions`. Durations are
 * milliseconds; `undefined`, `null` and `0` disable a timeout. A bad value throws a `TypeError` naming the option and
 * the value (at construction for an options object, from `handle()` for a provider).
 * @public
 */
export interface NodeHttp2HandlerOptions extends Pick<SharedHandlerOptions, Http2SharedOption> {
  /**
   * Stream inactivity timeout, ms: a stream fails with a `TimeoutError` ("Stream timed out because of no activity
   * for N ms") when the stream itself made no progress for this long (as upstream's `stream.setTimeout`: its response
   * headers, its own DATA frames received, its own body chunks handed to the session; sibling streams on the same
   * session do not count). Overridable per call (`handle(req, { requestTimeout })`). Each progress event restarts a
   * deadline on the handler's shared scheduler (one native timer per handler), so it fires `requestTimeout` ms after
   * the stream's last progress, as promptly as a native timer. It counts from `handle()` (getting a stream is no
   * progress, as upstream), so it also bounds the wait for a session or a stream slot.
   * `undefined`/`0` = none.
   * @defaultValue `undefined`
   */
  requestTimeout?: number;
  /**
   * Session inactivity timeout, ms: a session with no activity for this long (no frame Node reports: headers, data,
   * settings; no stream write) is destroyed (its streams fail), as upstream's `session.setTimeout()`.
   * `undefined`/`0` = none. (Upstream also applies a 300 s safety timeout to event-stream sessions; Sockeye
   * destroys such a session when its only stream closes instead.)
   * @defaultValue `undefined`
   */
  sessionTimeout?: number;
  /**
   * One session per request (an "isolated" session, destroyed when the stream closes) instead of pooled sessions.
   * Generated clients that stream (Kinesis, Transcribe Streaming, Bedrock Runtime) set it to `true`.
   * @defaultValue `false`
   */
  disableConcurrentStreams?: boolean;
  /**
   * Client-side cap on concurrent streams per pooled session (an integer >= 1). The effective limit of a session is
   * the smaller of this and the peer's `maxConcurrentStreams` from its SETTINGS frame. Unlike upstream it is not
   * sent to the server as a local SETTINGS value (which only limits server-initiated streams).
   * @defaultValue `undefined` (the peer's limit only)
   */
  maxConcurrentStreams?: number;
  /** Raw options passed to `http2.connect()` (TLS options, `settings`, …). */
  nodeHttp2ConnectOptions?: Partial<SecureClientSessionOptions | ClientSessionOptions>;
  /**
   * Session establishment timeout, ms: TCP connect, TLS handshake and the server's first SETTINGS frame must complete
   * within it, else the session is destroyed and the streams waiting for it fail with a `TimeoutError`
   * (`code: "ETIMEDOUT"`). `undefined`/`0` = none (as upstream, which has no such timeout).
   * @defaultValue `undefined`
   */
  connectionTimeout?: number;
  /**
   * Maximum pooled sessions per origin (an integer >= 1, or `Infinity`). When every session is at its stream limit
   * and this many exist, new streams wait in a FIFO queue (reported as `queued`) for a stream slot instead of opening
   * yet another session. Isolated sessions (event streams, `disableConcurrentStreams`) are bounded separately (see
   * `maxIsolatedSessionsPerOrigin`).
   * @defaultValue 4
   */
  maxSessionsPerOrigin?: number;
  /**
   * Maximum isolated sessions per origin for requests that are not event streams (an integer >= 1, or `Infinity`):
   * with `disableConcurrentStreams: true` (the default of the Kinesis, Transcribe Streaming and Bedrock Runtime
   * clients) every request opens a session of its own, like an HTTP/1.1 connection without keep-alive; beyond this
   * many open, requests wait in a FIFO (reported as `queued`, seen by saturation detection) for one to close. Event
   * streams (`isEventStream`) are long-lived, so they are never queued and not counted: a bound shared with them
   * could hold a request behind streams that never end. Upstream bounds neither.
   * @defaultValue 50 (the HTTP/1.1 handler's default `maxSockets`)
   */
  maxIsolatedSessionsPerOrigin?: number;
  /** Receives the saturation warning line. A throwing logger is ignored. @defaultValue `console` */
  logger?: Logger;
}
