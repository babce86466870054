/** The public API of `@sockeye/pool-monitor`. Runtime values come from `./internal`, so the code exists once. */
export {
  CHANNEL_NAMES,
  Http1PoolMonitor,
  isConnectionResetError,
  isHandlerDestroyedError,
  isQueueFullError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  normalizeOrigin,
  OVERFLOW_ORIGIN,
  POOL_MONITOR_DEFAULTS,
  PoolMonitor,
  SOCKET_MONITOR_ENV,
  sockeyeErrorKind,
} from "./internal";
export type { GetStatsOptions, PoolTelemetry } from "./telemetry-core";
export type { PoolMonitorLogger, PoolMonitorOptions, SaturationOptions } from "./pool-monitor-options";
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
  RequestFinishedEvent,
  RequestOutcome,
  SaturationCause,
  SaturationReport,
  SaturationSizing,
  SaturationState,
  SaturationTrigger,
  UnpooledStats,
} from "./pool-stats";
export type { SharedHandlerOptions } from "./shared-handler-options";
export type { SocketMonitorMode } from "./socket-monitor-mode";
export type {
  ConnectionResetError,
  HandlerDestroyedError,
  QueueFullError,
  SockeyeAbortError,
  SockeyeErrorKind,
  SockeyeTimeoutError,
  TimeoutDeadline,
} from "./sockeye-error-kind";
