export { DEFAULT_REQUEST_TIMEOUT } from "./constants";
export { NodeHttpHandler } from "./node-http-handler";
export type { NodeHttpHandlerOptions } from "./node-http-handler-options";
export { streamCollector } from "./stream-collector";
export { Http2PoolMonitor } from "./http2-pool-monitor";
export { NodeHttp2Handler } from "./node-http2-handler";
export type { NodeHttp2HandlerOptions } from "./node-http2-handler-options";
/** The socket-monitor switch and the error guards, so users import them from the handler package they installed. */
export {
  type ConnectionResetError,
  type HandlerDestroyedError,
  type QueueFullError,
  isConnectionResetError,
  isHandlerDestroyedError,
  isQueueFullError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  SOCKET_MONITOR_ENV,
  type SockeyeAbortError,
  type SockeyeErrorKind,
  type SockeyeTimeoutError,
  type SocketMonitorMode,
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
  SaturationCause,
  SaturationOptions,
  SaturationReport,
  SaturationSizing,
  SaturationState,
  SaturationTrigger,
  UnpooledStats,
} from "@sockeye/pool-monitor";
