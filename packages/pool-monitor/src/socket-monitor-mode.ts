import { describeValue } from "./invalid-option";

/**
 * How the handler watches socket-pool saturation:
 * - `"interval"` (default): the handler's shared lazy interval samples the pool; no timer per request.
 * - `"per-request"`: upstream's behaviour exactly: one native warning timer per request, upstream's criteria,
 *   15 s lockout and delay.
 * - `"off"`: no saturation monitoring and no monitoring timer at all.
 * @public
 */
export type SocketMonitorMode = "interval" | "per-request" | "off";

/** Allowed values of `socketMonitor` / `SOCKEYE_SOCKET_MONITOR`. @internal */
export const SOCKET_MONITOR_MODES: readonly SocketMonitorMode[] = ["interval", "per-request", "off"];

/** Environment variable consulted when the `socketMonitor` option is absent. @public */
export const SOCKET_MONITOR_ENV = "SOCKEYE_SOCKET_MONITOR";

/**
 * Resolves the mode: the option wins, then the environment variable, then `"interval"`. An invalid value throws a
 * `TypeError` naming where it came from, the value, and the allowed values.
 * @internal
 */
export function resolveSocketMonitorMode(option: unknown, env: NodeJS.ProcessEnv, prefix: string): SocketMonitorMode {
  const fromEnv = option === undefined;
  // An empty environment variable counts as unset.
  const value = fromEnv ? env[SOCKET_MONITOR_ENV] || "interval" : option;
  if ((SOCKET_MONITOR_MODES as readonly unknown[]).includes(value)) return value as SocketMonitorMode;
  throw new TypeError(
    `${prefix} - invalid ${fromEnv ? `environment variable ${SOCKET_MONITOR_ENV}` : "option socketMonitor"}: ${describeValue(value)}; expected one of "interval", "per-request", "off".`
  );
}
