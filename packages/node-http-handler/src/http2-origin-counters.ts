/**
 * Http2OriginCounters: the telemetry of one HTTP/2 origin (`scheme://host:port`): plain counters bumped by the
 * session pool, four `perf_hooks` histograms (queue wait, session connect, TLS, session age) and the accumulators of
 * the current saturation sample. One object per origin, allocated on the origin's first request and only when
 * telemetry is on; updating it is a few field writes per stream (a histogram record per acquisition).
 *
 * Histograms are recorded in microseconds (integers >= 1, as `perf_hooks` requires) and summarised in milliseconds.
 */
import type { DurationSummary, Http2CloseReason } from "@sockeye/pool-monitor";
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";

/** Closed-session counters, every reason present. @internal */
export function emptyHttp2Closed(): Record<Http2CloseReason, number> {
  return {
    connect_timeout: 0,
    connect_error: 0,
    goaway: 0,
    idle_timeout: 0,
    error: 0,
    server_closed: 0,
    local: 0,
  };
}

/** Records `ms` (clamped to >= 1 µs). @internal */
export function recordMs(h: RecordableHistogram, ms: number): void {
  h.record(Math.max(1, Math.round(ms * 1000)));
}

const round3 = (us: number): number => Math.round(us) / 1000;

/** Summary of a microsecond histogram in milliseconds (all zero when empty). @internal */
export function summarize(h: RecordableHistogram, reset: boolean): DurationSummary {
  const count = h.count;
  const summary =
    count === 0
      ? { count: 0, p50: 0, p90: 0, p99: 0, max: 0 }
      : {
          count,
          p50: round3(h.percentile(50)),
          p90: round3(h.percentile(90)),
          p99: round3(h.percentile(99)),
          max: round3(h.max),
        };
  if (reset) h.reset();
  return summary;
}

/** @internal */
export class Http2OriginCounters {
  started = 0;
  completed = 0;
  failed = 0;
  aborted = 0;
  timedOut = 0;
  sessionsCreated = 0;
  sessionErrors = 0;
  acquisitions = 0;
  reusedAcquisitions = 0;
  readonly closed = emptyHttp2Closed();
  readonly goawayCodes: Record<string, number> = {};
  readonly queueWait = createHistogram();
  readonly connect = createHistogram();
  readonly tls = createHistogram();
  readonly sessionAge = createHistogram();
  /** Since the previous saturation sample. */
  arrivals = 0;
  completions = 0;
  holdSumMs = 0;
  holdCount = 0;
  holdMaxMs = 0;
  minQueued = Number.POSITIVE_INFINITY;

  /** Resets the per-sample accumulators; `queued` is the depth the next interval starts from. */
  resetSample(queued: number): void {
    this.arrivals = 0;
    this.completions = 0;
    this.holdSumMs = 0;
    this.holdCount = 0;
    this.holdMaxMs = 0;
    this.minQueued = queued;
  }
}
