/**
 * A duration distribution on `perf_hooks.createHistogram()` (native HdrHistogram): values in integer microseconds
 * (at least 1), percentiles to 3 significant digits, the maximum kept exactly beside it. Recording is O(1) and
 * allocation-free in a fixed few KB; percentiles are read only by `getStats()`.
 */
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";
import type { DurationSummary } from "./pool-stats";

/** @internal */
export class DurationHistogram {
  private readonly histogram: RecordableHistogram = createHistogram();
  /** Exact maximum (the histogram's own max is rounded up to its bucket, ~0.1 %). */
  private maxMs = 0;

  /** Records one duration, ms (negative or NaN ignored). */
  record(ms: number): void {
    if (!(ms >= 0)) return;
    if (ms > this.maxMs) this.maxMs = ms;
    const us = Math.round(ms * 1000);
    this.histogram.record(Math.max(1, Math.min(us, Number.MAX_SAFE_INTEGER)));
  }

  summary(): DurationSummary {
    const h = this.histogram;
    const count = h.count;
    if (count === 0) return { count: 0, p50: 0, p90: 0, p99: 0, max: 0 };
    const max = round3(this.maxMs);
    // A percentile is a bucket bound, which can exceed the exact maximum.
    const at = (percentile: number): number => Math.min(toMs(h.percentile(percentile)), max);
    return { count, p50: at(50), p90: at(90), p99: at(99), max };
  }

  reset(): void {
    this.histogram.reset();
    this.maxMs = 0;
  }
}

function toMs(us: number): number {
  return Math.round(us) / 1000;
}

/** Rounded to 3 decimals, as every figure of a snapshot or report. @internal */
export function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
