/**
 * `OriginTelemetry`: what the telemetry core keeps for one origin, whatever the transport (each transport's origin
 * state extends it to read its own pool); only `TelemetryCore` writes it. Per origin: about thirty numbers, four
 * `perf_hooks` histograms (a few KB each) and one `SaturationDetector`; a few field writes per request event.
 */
import { DurationHistogram } from "./duration-histogram";
import { CLOSE_REASONS, type OriginStats, type RequestOutcome, type SaturationCause } from "./pool-stats";
import { SaturationDetector } from "./saturation-detector";

export type { RequestOutcome };

/** Detector tuning an origin is created with (from the resolved monitor options). @internal */
export interface DetectorTuning {
  readonly windowSamples: number;
  readonly sampleIntervalMs: number;
  readonly stallAfterMs: number;
}

/** Counters at 0 for every key of `reasons` (`CLOSE_REASONS`, `HTTP2_CLOSE_REASONS`), in its order. @internal */
export function emptyCloseCounts<R extends string>(reasons: Readonly<Record<R, unknown>>): Record<R, number> {
  const counts = {} as Record<R, number>;
  for (const reason in reasons) counts[reason] = 0;
  return counts;
}

/** The outcome counters of `OriginStats.requests`, as `OriginTelemetry` and `UnpooledCounters` keep them. @internal */
export type OutcomeCounters = Omit<OriginStats["requests"], "started" | "queueFull">;

/** Adds `delta` to the counter of `outcome` in `c` (a missed outcome does not compile). @internal */
export function countOutcome(c: OutcomeCounters, outcome: RequestOutcome, delta: number): void {
  switch (outcome) {
    case "completed":
      c.completed += delta;
      return;
    case "failed":
      c.failed += delta;
      return;
    case "aborted":
      c.aborted += delta;
      return;
    case "timed_out":
      c.timedOut += delta;
      return;
    default:
      outcome satisfies never;
  }
}

/** A closed request's count moves from `from` to `to` (its owner said why it ended, after it closed). @internal */
export function recountOutcome(c: OutcomeCounters, from: RequestOutcome, to: RequestOutcome): void {
  countOutcome(c, from, -1);
  countOutcome(c, to, 1);
}

/** Counters of the requests of one origin sent outside the pool (node:http's one-off agents). @internal */
export class UnpooledCounters {
  started = 0;
  inFlight = 0;
  completed = 0;
  failed = 0;
  aborted = 0;
  timedOut = 0;
  readonly connect = new DurationHistogram();
}

/** @internal */
export class OriginTelemetry {
  // Counters since creation.
  started = 0;
  completed = 0;
  failed = 0;
  aborted = 0;
  timedOut = 0;
  /** Of the failed ones: rejected at once because the queue held `maxQueuedRequests` already. */
  queueFull = 0;
  /** Requests started and not yet finished (queued, on a connection, or their body still open). */
  inFlightCount = 0;
  socketsCreated = 0;
  socketErrors = 0;
  acquisitions = 0;
  reusedAcquisitions = 0;
  /** Response bodies collected unread while their response was open: their connections were reclaimed. */
  bodiesReclaimed = 0;
  /** Of those, the ones reclaimed during the current (or last) saturation episode. */
  episodeReclaimed = 0;
  readonly closed = emptyCloseCounts(CLOSE_REASONS);
  readonly queueWait = new DurationHistogram();
  readonly connect = new DurationHistogram();
  readonly tls = new DurationHistogram();
  readonly connectionAge = new DurationHistogram();
  // Accumulators since the last sample.
  arrivals = 0;
  sampleCompletions = 0;
  holdSumMs = 0;
  sampleHolds = 0;
  holdMaxMs = 0;
  /** Lowest queue depth since the last sample (the transport lowers it as requests leave the queue). */
  sampleMinQueued = 0;
  declare readonly detector: SaturationDetector;
  lastWarnAt = Number.NEGATIVE_INFINITY;
  /** Cause of the last logged line (the lockout limits repeats of one cause, never a change). */
  lastWarnCause: SaturationCause | null = null;
  /** Requests sent outside the pool; created on the first one. */
  unpooledCounters: UnpooledCounters | undefined;

  constructor(
    readonly origin: string,
    tuning: DetectorTuning
  ) {
    this.detector = new SaturationDetector({ ...tuning, origin });
  }

  /**
   * A request left the queue and `depth` remain queued: keeps the interval's floor. Branch-free, so code optimized
   * while a queue never dipped (this is inlined into the request paths) does not deoptimize when it first drains.
   */
  queueShrank(depth: number): void {
    this.sampleMinQueued = Math.min(this.sampleMinQueued, depth);
  }

  /** Starts the next sample interval; `queued` is the depth it starts from. */
  resetSampleCounters(queued: number): void {
    this.arrivals = this.sampleCompletions = this.holdSumMs = this.sampleHolds = this.holdMaxMs = 0;
    this.sampleMinQueued = queued;
  }
}
