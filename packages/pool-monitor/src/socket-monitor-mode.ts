import type { OptionRule } from "./option-rules";

/** How the handler watches socket-pool saturation (see `SharedHandlerOptions.socketMonitor`). @public */
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
