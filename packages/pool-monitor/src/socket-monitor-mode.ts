import type { OptionRule } from "./option-rules";

/**
 * How the handler watches socket-pool saturation:
 * - `"interval"` (default): the handler's deadline scheduler samples each origin's pool; no timer per request.
 * - `"per-request"`: `NodeHttpHandler` does what upstream does, exactly: one native warning timer per request,
 *   upstream's criteria, 15 s lockout and delay. `UndiciHttpHandler` samples as `"interval"` (and warns once);
 *   `NodeHttp2Handler` detects nothing (upstream's HTTP/2 handler has no socket-usage check).
 * - `"off"`: no saturation monitoring and no monitoring timer at all.
 * @public
 */
export type SocketMonitorMode = "interval" | "per-request" | "off";

/** Environment variable consulted when the `socketMonitor` option is absent. @public */
export const SOCKET_MONITOR_ENV = "SOCKEYE_SOCKET_MONITOR";

/** Allowed values of `socketMonitor` / `SOCKEYE_SOCKET_MONITOR`. */
const SOCKET_MONITOR_MODES: readonly SocketMonitorMode[] = ["interval", "per-request", "off"];

/** The rule of `socketMonitor` (and of its environment variable). @internal */
export const SOCKET_MONITOR: OptionRule = [
  (value) => (SOCKET_MONITOR_MODES as readonly unknown[]).includes(value),
  'one of "interval", "per-request", "off"',
];
