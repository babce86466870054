export { CHANNEL_NAMES } from "./diagnostics";
export { formatSaturationMessage, type SaturationTerms } from "./format-saturation-message";
export { normalizeOrigin } from "./normalize-origin";
export { PoolMonitor } from "./pool-monitor";
export {
  type GetStatsOptions,
  type MonitorHandlerOption,
  OVERFLOW_ORIGIN,
  type PoolTelemetry,
  saturationFields,
  TelemetryCore,
  UNREAD_WHILE_QUEUED_SAMPLES,
} from "./telemetry-core";
export {
  assertNever,
  type DetectorTuning,
  emptyCloseCounts,
  OriginTelemetry,
  type RequestOutcome,
  UnpooledCounters,
} from "./origin-telemetry";
export { PoolReading, SampleEvidence } from "./pool-reading";
export { DurationHistogram } from "./duration-histogram";
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
export {
  CAUSE_CONFIRM_SAMPLES,
  DEFAULT_STALL_AFTER_MS,
  GAP_PERIODS,
  HOLD_DECAY,
  SIZING_HEADROOM,
  STALL_HOLD_FACTOR,
  TROUGHS,
} from "./detector-tuning";
export { SaturationDetector, type SaturationDetectorOptions, type SaturationSample } from "./saturation-detector";
export { LazyInterval } from "./lazy-interval";
export { timing } from "./timing";
