import type { SaturationOptions } from "./pool-monitor-options";
import type { SaturationReport } from "./pool-stats";
import type { SocketMonitorMode } from "./socket-monitor-mode";

/**
 * The options Sockeye adds to upstream's `NodeHttpHandler` options, shared by every handler built on this package
 * (`NodeHttpHandler`, `UndiciHttpHandler`): each handler's options interface extends upstream's options and this one,
 * so a property is documented once. Resolved and validated by `resolveSharedOptions()` (resolve-shared-options.ts),
 * together with the upstream options every handler shares (`connectionTimeout`, `requestTimeout`, `socketTimeout`,
 * `throwOnRequestTimeout`, `logger`, `httpAgent` / `httpsAgent`).
 * @public
 */
export interface SharedHandlerOptions {
  /**
   * How socket-pool saturation is watched: `"interval"` (sampled on the handler's one shared timer; no timer per
   * request), `"per-request"` (upstream's one warning timer per request, exactly), or `"off"` (no monitoring).
   * When absent, the `SOCKEYE_SOCKET_MONITOR` environment variable is used.
   * @defaultValue `"interval"`
   */
  socketMonitor?: SocketMonitorMode;
  /**
   * Milliseconds a request may wait for a free socket before it fails with a `TimeoutError`
   * (`code: "ETIMEDOUT"`) whose message names `maxSockets` and the queue length. It leaves the queue and nothing
   * leaks. `undefined`/`0` = no limit.
   * @defaultValue `undefined` (off)
   */
  socketAcquisitionTimeout?: number;
  /**
   * Milliseconds a pooled keep-alive socket may stay idle before the handler closes it, so that the server's own
   * keep-alive timeout cannot close it just as a new request is written on it (`ECONNRESET`). The default, 4000 ms,
   * is below the shortest common server keep-alive timeout (Node.js servers: 5 s; nginx 75 s, ALB 60 s, S3 and
   * DynamoDB front ends longer) and matches undici's and agentkeepalive's free-socket timeouts. While requests are in
   * flight, an expired socket is closed at its limit (a deadline on the handler's shared scheduler); an idle handler
   * holds no timer for its free sockets and closes expired ones right before the next request is dispatched. `0`
   * disables it.
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
   * Called when an origin's socket pool becomes saturated, and again when the cause of an ongoing episode changes,
   * with a structured report: origin, active/maxSockets/queued, oldest queued age, throughput, trigger and cause
   * (`pool_capacity` with a recommended `maxSockets` and how it was sized, `unconsumed_bodies` with their count and
   * oldest age, or `no_progress` when requests are held far longer than this origin's requests normally are). Only
   * in `socketMonitor: "interval"` mode. A throwing callback is ignored. Can be replaced at runtime with
   * `updateHttpClientConfig("onSaturation", fn)`.
   * @defaultValue `undefined`
   */
  onSaturation?: (report: SaturationReport) => void;
  /**
   * Called once when a saturated origin's episode ends: the queue drained to 0 and sockets complete again (and no
   * unread body is left when the cause was `unconsumed_bodies`) for `saturation.windowSamples` consecutive samples.
   * Only in `"interval"` mode. A throwing callback is ignored.
   * @defaultValue `undefined`
   */
  onRecovery?: (report: SaturationReport) => void;
  /**
   * Saturation-detector parameters (`"interval"` mode), each validated and documented on {@link SaturationOptions}.
   * A key the block does not take (a misspelling such as `sampleIntervallMs`) throws instead of being ignored.
   * @defaultValue `{}` (every field at its default)
   */
  saturation?: SaturationOptions;
  /**
   * Per-origin socket-pool telemetry (`getPoolStats()`, diagnostics_channel events, the OpenTelemetry bridge).
   * `false` tracks nothing per request; saturation detection in `"interval"` mode then falls back to upstream's
   * criteria on the handler's shared scheduler.
   * @defaultValue `true`
   */
  telemetry?: boolean;
}
