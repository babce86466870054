export { UndiciHttpHandler } from "./undici-http-handler";
export type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";
export type { DispatcherLike } from "./dispatcher-like";
/** The error guards, so users import them from the handler package they installed. */
export {
  type ConnectionResetError,
  type HandlerDestroyedError,
  type QueueFullError,
  isConnectionResetError,
  isHandlerDestroyedError,
  isQueueFullError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  type SockeyeAbortError,
  type SockeyeErrorKind,
  type SockeyeTimeoutError,
  sockeyeErrorKind,
  type TimeoutDeadline,
} from "@sockeye/pool-monitor";
/** The telemetry and saturation types, so users import them from the handler package they installed. */
export type {
  CloseReason,
  DurationSummary,
  GetStatsOptions,
  Http2CloseReason,
  Http2OriginStats,
  Http2SessionStats,
  OriginSaturation,
  OriginStats,
  PoolEvent,
  PoolEventListener,
  PoolStats,
  PoolTelemetry,
  SaturationCause,
  SaturationOptions,
  SaturationReport,
  SaturationSizing,
  SaturationState,
  SaturationTrigger,
  UnpooledStats,
} from "@sockeye/pool-monitor";
