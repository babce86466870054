import type { NodeHttpHandlerOptions as SmithyNodeHttpHandlerOptions } from "@smithy/types";
import type { SharedHandlerOptions } from "@sockeye/pool-monitor";
import type { Agent } from "undici";
import type { DispatcherLike } from "./dispatcher-like";

/**
 * Options of `UndiciHttpHandler`: `NodeHttpHandler`'s options (same names, units and defaults) plus `dispatcher`.
 * Every time is in milliseconds.
 *
 * - `connectionTimeout`: from `handle()` until a connection is ready to carry the request (TLS included); a request
 *   still waiting for a free connection when it expires fails with a message that says so. Also bounds each new
 *   connection attempt (undici's `connectTimeout`). `TimeoutError`. Default none.
 * - `requestTimeout`: from `handle()` until response headers; warns on the logger, or rejects with `TimeoutError`
 *   (`code: "ETIMEDOUT"`) when `throwOnRequestTimeout` is true. A per-call `requestTimeout` rejects unless
 *   `throwOnRequestTimeout` is `false` (as `@smithy/undici-http-handler`). Default none.
 * - `throwOnRequestTimeout`: turn a `requestTimeout` breach into a rejection instead of a logged warning.
 *   Default `false`.
 * - `socketTimeout`: inactivity timeout, as `NodeHttpHandler`'s: restarted by each body chunk written or received
 *   and by the response headers (`TimeoutError`). A body paused because nobody reads it is not timed out. With a
 *   caller's dispatcher, undici's `headersTimeout` also times the wait for headers. Default none (undici's own 300 s
 *   defaults are off).
 * - `socketAcquisitionTimeout`: from `handle()` until the request got a connection; `TimeoutError`
 *   (`code: "ETIMEDOUT"`) naming `maxSockets` and the queue length. Default none.
 * - `httpsAgent`: `maxSockets` is the connections per origin (`Infinity` = unlimited); TLS and socket options (`ca`,
 *   `cert`, `key`, `pfx`, `passphrase`, `rejectUnauthorized`, `servername`, `checkServerIdentity`, `ciphers`,
 *   `minVersion`, `lookup`, `family`, `localAddress`, `localPort`, …) become undici `connect` options;
 *   `keepAlive: false` opens a connection per request; `keepAliveMsecs` sets the TCP keep-alive delay. `timeout`,
 *   `maxFreeSockets`, `maxTotalSockets` and `scheduling` are ignored with one warning. An `Agent` instance
 *   contributes its `.options` and `maxSockets`; one that makes its own connections (`https-proxy-agent`, `hpagent`)
 *   is a `TypeError`: pass undici's `ProxyAgent` as `dispatcher`. Not used with a dispatcher instance or a user-set
 *   global dispatcher. Default `{ maxSockets: 50 }`.
 * - `httpAgent`: the same for http origins (its socket options; TLS options do not apply). Default
 *   `{ maxSockets: 50 }`.
 * - `idleSocketTimeout`: how long an idle pooled connection is kept (undici `keepAliveTimeout` and
 *   `keepAliveMaxTimeout`: a server's `Keep-Alive` hint may shorten it, never lengthen it). Default 4000; `0` keeps
 *   it as long as the server allows (capped at 10 min).
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
   * An undici 7 or 8 `Dispatcher` (`Agent`, `Pool`, `ProxyAgent`, …) used as is for every request (only its own TLS
   * settings apply), or `Agent` options merged over the handler's own (their `connect` options win over those from
   * `httpsAgent` / `httpAgent`; `allowH2: true` negotiates HTTP/2). With an instance, `maxSockets` and connection
   * counters are unknown (`null` / 0); its `stats` still feed the gauges. `destroy()` destroys it, as upstream.
   * Without this option, a global dispatcher the user set (`setGlobalDispatcher`) is followed, checked per request;
   * undici's default global `Agent` is not.
   * @defaultValue a handler-owned undici `Agent`
   */
  dispatcher?: DispatcherLike | Agent.Options;
}
