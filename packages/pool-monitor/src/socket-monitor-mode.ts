import type { OptionRule } from "./option-rules";

/**
 * How the handler watches socket-pool saturation:
 * - `"interval"` (default): sampled on the handler's deadline scheduler; no timer per request.
 * - `"per-request"`: `NodeHttpHandler` does exactly what upstream does (one warning timer per request);
 *   `UndiciHttpHandler` treats it as `"interval"`; `NodeHttp2Handler` detects nothing, as upstream.
 * - `"off"`: no saturation monitoring and no monitoring timer. @public
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
