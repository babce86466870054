import { TICK_MS } from "@sockeye/pool-monitor/internal";

/** Default `requestTimeout`: `0` means "no request timeout", as upstream. @public */
export const DEFAULT_REQUEST_TIMEOUT = 0;

/** Prefix of every error message and log line, so users can tell Sockeye's apart. @internal */
export const PACKAGE_PREFIX = "@sockeye/node-http-handler";

/** Upstream's lockout between two "socket usage at capacity" warnings of one handler, in ms. @internal */
export const SOCKET_WARNING_LOCKOUT_MS = 15_000;

/** Upstream's minimum wait for `100 Continue` before the body is sent anyway, in ms. @internal */
export const MIN_CONTINUE_WAIT_MS = 6_000;

/** Upstream's default `maxSockets` and `keepAlive` for agents the handler creates. @internal */
export const DEFAULT_MAX_SOCKETS = 50;

/** Minimum socket-usage window in `"interval"` mode, ms (upstream's 0 would re-arm in a busy loop). @internal */
export const MIN_WARNING_WINDOW_MS = 2 * TICK_MS;
