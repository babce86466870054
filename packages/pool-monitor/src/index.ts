export { CHANNEL_NAMES } from "./diagnostics";
export { normalizeOrigin } from "./normalize-origin";
export { type GetStatsOptions, OVERFLOW_ORIGIN, PoolMonitor } from "./pool-monitor";
export type { RequestTracking } from "./tracking-state";
export {
  POOL_MONITOR_DEFAULTS,
  type PoolMonitorLogger,
  type PoolMonitorOptions,
  SATURATION_OPTION_KEYS,
  type SaturationOptions,
} from "./pool-monitor-options";
export type {
  CloseReason,
  DurationSummary,
  Http2CloseReason,
  Http2OriginStats,
  Http2SessionStats,
  OriginSaturation,
  OriginStats,
  PoolEvent,
  PoolEventListener,
  PoolStats,
  SaturationCause,
  SaturationReport,
  SaturationSizing,
  SaturationState,
  SaturationTrigger,
  UnpooledStats,
} from "./pool-stats";
export type { SharedHandlerOptions } from "./shared-handler-options";
export { SOCKET_MONITOR_ENV, type SocketMonitorMode } from "./socket-monitor-mode";
export {
  type ConnectionResetError,
  type HandlerDestroyedError,
  isConnectionResetError,
  isHandlerDestroyedError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  type SockeyeAbortError,
  type SockeyeErrorKind,
  type SockeyeTimeoutError,
  sockeyeErrorKind,
  type TimeoutDeadline,
} from "./sockeye-error-kind";
