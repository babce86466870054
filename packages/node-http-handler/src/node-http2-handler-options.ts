import type { Logger } from "@smithy/types";
import type { SharedHandlerOptions } from "@sockeye/pool-monitor";
import type { Http2SharedOption } from "@sockeye/pool-monitor/internal";
import type { ClientSessionOptions, SecureClientSessionOptions } from "node:http2";

/**
 * Options of `NodeHttp2Handler`: upstream's `NodeHttp2HandlerOptions` with the same meaning and default, plus
 * Sockeye's own (shared ones documented on `SharedHandlerOptions`). `undefined`, `null` and `0` disable a timeout.
 * A bad value throws a `TypeError` (at construction, or from `handle()` for a provider).
 * @public
 */
export interface NodeHttp2HandlerOptions extends Pick<SharedHandlerOptions, Http2SharedOption> {
  /**
   * Stream inactivity timeout, ms: a stream fails with a `TimeoutError` when it made no progress of its own (headers,
   * DATA frames, body chunks written) for this long, as upstream's `stream.setTimeout`. Counts from `handle()`, so it
   * also bounds the wait for a session or a stream slot. Overridable per call. `undefined`/`0` = none.
   * @defaultValue `undefined`
   */
  requestTimeout?: number;
  /**
   * Session inactivity timeout, ms: a session with no frame or stream write for this long is destroyed (its streams
   * fail), as upstream's `session.setTimeout()`. `undefined`/`0` = none. An event-stream session closes with its
   * stream instead of upstream's 300 s safety timeout. @defaultValue `undefined`
   */
  sessionTimeout?: number;
  /**
   * One session per request (an "isolated" session, destroyed when the stream closes) instead of pooled sessions.
   * Generated clients that stream (Kinesis, Transcribe Streaming, Bedrock Runtime) set it to `true`.
   * @defaultValue `false`
   */
  disableConcurrentStreams?: boolean;
  /**
   * Client-side cap on concurrent streams per pooled session (an integer >= 1); a session's limit is the smaller of
   * this and the peer's SETTINGS value. Unlike upstream it is not sent to the server.
   * @defaultValue `undefined` (the peer's limit only)
   */
  maxConcurrentStreams?: number;
  /** Raw options passed to `http2.connect()` (TLS options, `settings`, …). */
  nodeHttp2ConnectOptions?: Partial<SecureClientSessionOptions | ClientSessionOptions>;
  /**
   * Session establishment timeout, ms: TCP connect, TLS handshake and the server's first SETTINGS frame must complete
   * within it, else the session is destroyed and the streams waiting for it fail with a `TimeoutError`
   * (`code: "ETIMEDOUT"`). `undefined`/`0` = none (as upstream, which has no such timeout). @defaultValue `undefined`
   */
  connectionTimeout?: number;
  /**
   * Maximum pooled sessions per origin (an integer >= 1, or `Infinity`). When all are at their stream limit, new
   * streams wait in a FIFO (reported as `queued`). Isolated sessions are bounded by `maxIsolatedSessionsPerOrigin`.
   * @defaultValue 4
   */
  maxSessionsPerOrigin?: number;
  /**
   * Maximum isolated sessions per origin (an integer >= 1, or `Infinity`) for requests with
   * `disableConcurrentStreams: true`; beyond it requests wait in a FIFO (reported as `queued`). Event streams are
   * long-lived: never queued nor counted. Upstream bounds neither.
   * @defaultValue 50 (the HTTP/1.1 handler's default `maxSockets`)
   */
  maxIsolatedSessionsPerOrigin?: number;
  /** Receives the saturation warning line. A throwing logger is ignored. @defaultValue `console` */
  logger?: Logger;
}
