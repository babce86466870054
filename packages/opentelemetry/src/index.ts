export { namespacedMetrics, SEMCONV_METRICS } from "./metric-names";
export {
  type PoolMetricsOptions,
  type PoolMetricsRegistration,
  type PoolMetricsSource,
  registerPoolMetrics,
} from "./register-pool-metrics";
