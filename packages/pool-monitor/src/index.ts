export { CHANNEL_NAMES } from "./diagnostics";
export { formatSaturationMessage } from "./format-saturation-message";
export { type GetStatsOptions, OVERFLOW_ORIGIN, PoolMonitor } from "./pool-monitor";
export {
  POOL_MONITOR_DEFAULTS,
  type PoolMonitorLogger,
  type PoolMonitorOptions,
} from "./pool-monitor-options";
export type {
  CloseReason,
  DurationSummary,
  OriginSaturation,
  OriginStats,
  PoolEvent,
  PoolEventListener,
  PoolStats,
  SaturationCause,
  SaturationReport,
  SaturationState,
  SaturationTrigger,
} from "./pool-stats";
export {
  SaturationDetector,
  type SaturationDetectorOptions,
  type SaturationSample,
} from "./saturation-detector";
export { timing } from "./timing";
