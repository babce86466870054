import type { NodeHttpHandlerOptions as SmithyNodeHttpHandlerOptions } from "@smithy/types";
import type { SaturationReport } from "@sockeye/pool-monitor";
import type { SocketMonitorMode } from "./socket-monitor-mode";

/**
 * Options of Sockeye's `NodeHttpHandler`: every upstream option with the same meaning, plus Sockeye's own.
 *
 * Upstream options (milliseconds unless noted):
 * - `connectionTimeout`: time allowed from `handle()` until the socket is connected (TLS handshake included for
 *   https), `undefined`/`0` = none. A request still waiting for a free socket when it expires fails with a message
 *   that says so.
 * - `requestTimeout`: time from `handle()` until response headers; warns on the logger unless
 *   `throwOnRequestTimeout` is true; overridable per call. `undefined`/`0` = none.
 * - `throwOnRequestTimeout`: turn a `requestTimeout` breach into a `TimeoutError` (`code: "ETIMEDOUT"`). Default false.
 * - `socketTimeout`: socket inactivity timeout, armed through the response body. `undefined`/`0` = none.
 * - `socketAcquisitionWarningTimeout`: how long a request must wait before the socket-usage check may warn about
 *   it. Default `(requestTimeout ?? 2000) + (connectionTimeout ?? 1000)` (3000 ms when neither is set).
 * - `httpAgent` / `httpsAgent`: an Agent instance (used as is; "external") or Agent options merged over
 *   `{ keepAlive: true, maxSockets: 50 }`.
 * - `logger`: receives warnings; default: the client's logger, else `console`.
 * @public
 */
export interface NodeHttpHandlerOptions extends SmithyNodeHttpHandlerOptions {
  /**
   * How socket-pool saturation is watched: `"interval"` (one shared, lazy, unref'd interval; no timer per
   * request), `"per-request"` (upstream's one warning timer per request, exactly), or `"off"` (no monitoring).
   * When absent, the `SOCKEYE_SOCKET_MONITOR` environment variable is used.
   * @defaultValue `"interval"`
   */
  socketMonitor?: SocketMonitorMode;
  /**
   * Milliseconds a request may wait in the agent's queue for a free socket before it fails with a `TimeoutError`
   * (`code: "ETIMEDOUT"`) whose message names `maxSockets` and the queue length. It leaves the queue and nothing
   * leaks. `undefined`/`0` = no limit.
   * @defaultValue `undefined` (off)
   */
  socketAcquisitionTimeout?: number;
  /**
   * Milliseconds a pooled keep-alive socket may stay idle before the handler closes it, so that the server's own
   * keep-alive timeout cannot close it just as a new request is written on it (`ECONNRESET`). The default, 4000 ms,
   * is below the shortest common server keep-alive timeout (Node.js servers: 5 s; nginx 75 s, ALB 60 s, S3 and
   * DynamoDB front ends longer) and matches undici's and agentkeepalive's free-socket timeouts. Expired sockets are
   * closed on the shared interval while requests are in flight and, lazily, right before the next request is
   * dispatched, so an idle process holds no timer for them. `0` disables it.
   * @defaultValue 4000
   */
  idleSocketTimeout?: number;
  /**
   * Milliseconds after which a pooled socket is no longer reused: it is closed when it next becomes free (a busy
   * socket is never cut), so DNS changes are picked up (the .NET `PooledConnectionLifetime` idea).
   * `undefined`/`0` = sockets live as long as the server keeps them.
   * @defaultValue `undefined` (off)
   */
  connectionLifetime?: number;
  /**
   * Called when an origin's socket pool becomes saturated (its queue grows across the detection window, or stalls
   * with every socket busy and no completions), with a structured report: origin, active/maxSockets/queued,
   * oldest queued age, throughput, cause (`pool_capacity` with a recommended `maxSockets`, or `unconsumed_bodies`
   * with their count and oldest age). Only in `socketMonitor: "interval"` mode. A throwing callback is ignored.
   * @defaultValue `undefined`
   */
  onSaturation?: (report: SaturationReport) => void;
  /**
   * Called when a saturated origin's queue has drained and stayed low. Only in `"interval"` mode.
   * @defaultValue `undefined`
   */
  onRecovery?: (report: SaturationReport) => void;
  /**
   * Saturation-detector parameters (`"interval"` mode). Each is validated; see `@sockeye/pool-monitor`.
   * - `sampleIntervalMs`: ms between two samples of each origin's pool. @defaultValue 1000 (min 100)
   * - `windowSamples`: samples the detector looks at (K); K × sampleIntervalMs is the detection horizon. @defaultValue 5
   * - `warningLockoutMs`: minimum ms between two log warnings of one origin. @defaultValue 15000
   * - `unconsumedBodyMs`: ms after which a response body handed to the caller and neither ended nor destroyed
   *   counts as unconsumed (the unread `GetObject` body leak). @defaultValue 10000
   * - `maxOrigins`: distinct origins tracked before the rest are aggregated as `"_OTHER"`. @defaultValue 256
   */
  saturation?: {
    sampleIntervalMs?: number;
    windowSamples?: number;
    warningLockoutMs?: number;
    unconsumedBodyMs?: number;
    maxOrigins?: number;
  };
  /**
   * Per-origin socket-pool telemetry (`getPoolStats()`, diagnostics_channel events, the OpenTelemetry bridge).
   * `false` tracks nothing per request; saturation detection in `"interval"` mode then falls back to upstream's
   * criteria on the shared interval.
   * @defaultValue `true`
   */
  telemetry?: boolean;
}
