import type { NodeHttpHandlerOptions as SmithyNodeHttpHandlerOptions } from "@smithy/types";
import type { SaturationOptions, SharedHandlerOptions } from "@sockeye/pool-monitor";

export type { SaturationOptions };

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
 *   Must be a boolean (`"true"` is a `TypeError`).
 * - `socketTimeout`: socket inactivity timeout, armed through the response body. `undefined`/`0` = none.
 * - `socketAcquisitionWarningTimeout`: how long a request must wait before the socket-usage check may warn about
 *   it. Default `(requestTimeout ?? 2000) + (connectionTimeout ?? 1000)` (3000 ms when neither is set).
 * - `httpAgent` / `httpsAgent`: an Agent instance (used as is; "external") or Agent options merged over
 *   `{ keepAlive: true, maxSockets: 50 }`. `maxSockets` must be an integer >= 1 or `Infinity`.
 * - `logger`: receives warnings; default: the client's logger, else `console`.
 * @public
 */
export interface NodeHttpHandlerOptions extends SmithyNodeHttpHandlerOptions, SharedHandlerOptions {}
