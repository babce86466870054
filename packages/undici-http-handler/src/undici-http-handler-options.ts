import type { NodeHttpHandlerOptions as SmithyNodeHttpHandlerOptions } from "@smithy/types";
import type { SharedHandlerOptions } from "@sockeye/pool-monitor";
import type { Agent } from "undici";
import type { DispatcherLike } from "./dispatcher-like";

/**
 * Options of `UndiciHttpHandler`: `NodeHttpHandler`'s options (upstream's and Sockeye's `SharedHandlerOptions`:
 * same names, units and defaults) plus undici's `dispatcher`. Every time is in milliseconds.
 *
 * - `connectionTimeout`: from `handle()` until a connection is ready to carry the request (TLS included); a request
 *   still waiting for a free connection when it expires fails with a message that says so. Also bounds each new
 *   connection attempt (undici's `connectTimeout`). `TimeoutError`. Default none.
 * - `requestTimeout`: from `handle()` until response headers; warns on the logger, or rejects with `TimeoutError`
 *   (`code: "ETIMEDOUT"`) when `throwOnRequestTimeout` is true. Per call, `client.send(cmd, { requestTimeout })`
 *   rejects unless `throwOnRequestTimeout` is `false` (as `@smithy/undici-http-handler`; `NodeHttpHandler` warns).
 *   Default none.
 * - `throwOnRequestTimeout`: turn a `requestTimeout` breach into a rejection instead of a logged warning.
 *   Default `false`.
 * - `socketTimeout`: inactivity timeout in ms, as `NodeHttpHandler`'s: restarted by each request-body chunk undici
 *   writes, by the request sent, by the response headers and by each body chunk; it fires after that long without
 *   any (`TimeoutError`), on the handler's deadline scheduler (as precise as a native timer, none per request). A body
 *   paused because nobody reads it is not timed out. With a caller's dispatcher (`dispatcher` or a global one) undici's
 *   own `headersTimeout` (~1 s resolution) also times the wait for the headers, since its interceptors may not report
 *   request-body progress. Default none (undici's own 300 s defaults are off).
 * - `socketAcquisitionTimeout`: from `handle()` until the request got a connection; `TimeoutError`
 *   (`code: "ETIMEDOUT"`) naming `maxSockets` and the queue length. Default none.
 * - `httpsAgent`: `maxSockets` is the connections per origin (`Infinity` = unlimited); TLS and socket options (`ca`,
 *   `cert`, `key`, `pfx`, `passphrase`, `rejectUnauthorized`, `servername`, `checkServerIdentity`, `ciphers`,
 *   `minVersion`, `lookup`, `family`, `localAddress`, `localPort`, …) become undici `connect` options;
 *   `keepAlive: false` opens a connection per request; `keepAliveMsecs` sets the TCP keep-alive delay. `timeout`,
 *   `maxFreeSockets`, `maxTotalSockets` and `scheduling` have no undici equivalent and are ignored with one warning
 *   (validated first, as on `NodeHttpHandler`). An `Agent` instance contributes its `.options` and `maxSockets` but
 *   is not used as an agent; one that makes its own connections (its own `createConnection` / `addRequest`, or a
 *   `connect` method: `https-proxy-agent`, `hpagent`) is a `TypeError` at construction, since its requests would
 *   otherwise bypass it: pass undici's `ProxyAgent` / `EnvHttpProxyAgent` as `dispatcher`. An `agentkeepalive`
 *   agent (Node's own connections, counted) is read like a plain `Agent`; only values you set are warned about, not
 *   the defaults agentkeepalive writes into its options. Not used
 *   when requests go through a dispatcher instance or a user-set global dispatcher. Default `{ maxSockets: 50 }`.
 * - `httpAgent`: the same for http origins (its socket options; TLS options do not apply). Default
 *   `{ maxSockets: 50 }`.
 * - `idleSocketTimeout`: how long an idle pooled connection is kept (undici `keepAliveTimeout`). Default 4000;
 *   `0` keeps it as long as the server allows (capped at 10 min).
 * - `connectionLifetime`: a connection is retired after this long (undici `clientTtl`). Default none.
 * - `logger`: receives warnings (a throwing logger is ignored). Default the client's logger, else `console`.
 * - `socketAcquisitionWarningTimeout`: belongs to `NodeHttpHandler`'s `"per-request"` mode; ignored here.
 * - `onSaturation`, `onRecovery`, `saturation.*`, `telemetry`: as in `NodeHttpHandler`.
 * - `socketMonitor`: `"interval"` (default) or `"off"`; `"per-request"` has no undici equivalent and is treated as
 *   `"interval"` (a warning says so once). `socketAcquisitionWarningTimeout` belongs to that mode and is ignored.
 * @public
 */
export interface UndiciHttpHandlerOptions extends SmithyNodeHttpHandlerOptions, SharedHandlerOptions {
  /**
   * An undici 7 or 8 `Dispatcher` (`Agent`, `Pool`, `Client`, `ProxyAgent`, `EnvHttpProxyAgent`, a composed
   * dispatcher…; typed structurally, `DispatcherLike`) used as is for every request (its TLS settings, e.g. `ProxyAgent`'s `requestTls: { ca }`, are the
   * only ones that apply), or `Agent` options merged over the handler's own (`connections` from `maxSockets`,
   * `keepAliveTimeout` from `idleSocketTimeout`, `connectTimeout` from `connectionTimeout`); their `connect` options
   * win over those mapped from `httpsAgent` / `httpAgent`, and `allowH2: true` negotiates HTTP/2 on the handler's
   * pools (telemetry included).
   * With a dispatcher instance, `maxSockets` and the connection counters of `getPoolStats()` are unknown
   * (`null` / 0); its `stats` (when it has them) still feed the active/idle/queued gauges.
   * `destroy()` destroys it, as upstream destroys its agents.
   * Without this option, a global dispatcher the user set (`setGlobalDispatcher(new ProxyAgent(…))`, a `MockAgent`)
   * is followed, checked per request; undici's default global `Agent` is not (see the README).
   * @defaultValue a handler-owned undici `Agent`
   */
  dispatcher?: DispatcherLike | Agent.Options;
}
