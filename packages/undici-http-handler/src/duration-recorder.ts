/**
 * DurationSummary recorder on `perf_hooks.createHistogram()` (HdrHistogram, native, fixed few-KB footprint).
 *
 * Values are recorded as integer microseconds (at least 1); the exact maximum is kept beside the histogram because
 * the native one reports bucket bounds. Recording is O(1) and allocation-free; reading is O(buckets) and only happens
 * in `getPoolStats()`.
 */
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";
import type { DurationSummary } from "@sockeye/pool-monitor";

/** @internal */
export class DurationRecorder {
  private readonly histogram: RecordableHistogram = createHistogram();
  private max = 0;

  /** Records one duration, ms; negative and NaN values are dropped. */
  record(ms: number): void {
    if (!(ms >= 0)) return;
    if (ms > this.max) this.max = ms;
    this.histogram.record(Math.max(1, Math.min(Math.round(ms * 1000), Number.MAX_SAFE_INTEGER)));
  }

  /** `{ count, p50, p90, p99, max }` in ms (3 decimals); all zero when empty. */
  summary(): DurationSummary {
    const h = this.histogram;
    if (h.count === 0) return { count: 0, p50: 0, p90: 0, p99: 0, max: 0 };
    const max = Math.round(this.max * 1000) / 1000;
    const at = (p: number): number => Math.min(Math.round(h.percentile(p)) / 1000, max);
    return { count: h.count, p50: at(50), p90: at(90), p99: at(99), max };
  }

  reset(): void {
    this.histogram.reset();
    this.max = 0;
  }
}
