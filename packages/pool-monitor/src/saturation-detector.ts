/**
 * Per-origin saturation detector: a pure state machine fed one sample per sampling period.
 *
 * Design ("MT" + stall, see docs in the README): an origin is saturated when requests arrive faster
 * than `maxSockets` sockets can serve them. The queue then grows and never drains. A batch
 * (`Promise.all` of N requests) is a step input: after submission the queue only shrinks, however
 * deep it started. So the detector never looks at the depth alone; it looks at its *trend*:
 *
 * - M (growth): the last K samples are all saturated (`active >= maxSockets`, queue non-empty), the
 *   depth is non-decreasing across them, grew by >= G = max(1, ceil(maxSockets / 5)) and is now
 *   >= maxSockets.
 * - T (rising troughs): every sample carries the floor (minimum depth) of the interval it closes. A
 *   local minimum of that floor series is a trough. If the last 3 troughs are non-decreasing, grew by
 *   >= G and the lowest is >= maxSockets (the queue never drained), periodic bursts are piling up: a
 *   sawtooth backlog that defeats M.
 * - S (stall): K consecutive samples with every socket busy, requests queued and zero completions:
 *   a server that never answers, or bodies that are never read, even if the queue is flat.
 *
 * Hysteresis: a saturated/stalled origin recovers after K consecutive samples with depth
 * <= floor(maxSockets / 2). A gap between samples longer than 3 periods (event loop blocked, sampling
 * paused while idle) clears the window, so K always means K consecutive loop-alive samples.
 *
 * Data structure: a ring of K samples in preallocated Float64Arrays plus a ring of the last 3
 * troughs. `update()` is O(K) and allocation-free unless it returns a report.
 */
import { formatSaturationMessage } from "./format-saturation-message";
import type { SaturationCause, SaturationReport, SaturationState, SaturationTrigger } from "./pool-stats";

/**
 * One sample of one origin.
 * @public
 */
export interface SaturationSample {
  /** Sample time, `performance.now()` ms. */
  now: number;
  /** Sockets in use. */
  active: number;
  /** Socket limit for the origin (`Infinity` = unlimited: never saturated). */
  maxSockets: number;
  /** Queued requests now. */
  queued: number;
  /** Minimum queue depth since the previous sample; defaults to `queued`. */
  minQueued?: number;
  /** Requests that released their socket since the previous sample. */
  completions: number;
  /** Requests started since the previous sample. */
  arrivals?: number;
  /** Sum of socket hold times (acquired → released) of the `holdCount` requests released since the previous sample, ms. */
  holdTimeSumMs?: number;
  /** Number of hold times summed in `holdTimeSumMs`. */
  holdCount?: number;
  /** Age of the oldest queued request, ms. */
  oldestQueuedMs?: number;
  /** Unconsumed responses (see `unconsumedBodyMs`). */
  unconsumedCount?: number;
  /** Age of the oldest unconsumed response, ms. */
  unconsumedOldestMs?: number;
}

/**
 * Detector tuning.
 * @public
 */
export interface SaturationDetectorOptions {
  /** Origin named in reports. */
  origin: string;
  /** K. @defaultValue 5 */
  windowSamples?: number;
  /** Expected period between samples, ms (gap detection). @defaultValue 1000 */
  sampleIntervalMs?: number;
}

const TROUGHS = 3;

/**
 * Saturation state machine for one origin.
 * @public
 */
export class SaturationDetector {
  /** Current state. */
  state: SaturationState = "ok";
  /** When the current state began (`now` of the sample that entered it; 0 initially). */
  since = 0;
  /** Cause of the current non-ok state. */
  cause: SaturationCause | null = null;
  /** Rule that fired for the current non-ok state. */
  trigger: SaturationTrigger | null = null;
  /** Last report returned by `update()` or `assess()` for a non-ok state. */
  lastReport: SaturationReport | null = null;
  /** Number of transitions into a non-ok state. */
  episodes = 0;

  readonly origin: string;
  readonly windowSamples: number;
  private readonly gapMs: number;
  // Ring of the last K samples.
  private readonly tNow: Float64Array;
  private readonly tQueued: Float64Array;
  private readonly tSaturated: Uint8Array;
  private readonly tCompletions: Float64Array;
  private readonly tArrivals: Float64Array;
  private readonly tHoldSum: Float64Array;
  private readonly tHoldCount: Float64Array;
  private head = 0; // index of the next write
  private count = 0;
  // Floor series, for trough detection.
  private prev1 = Number.POSITIVE_INFINITY;
  private prev2 = Number.POSITIVE_INFINITY;
  private readonly troughs = new Float64Array(TROUGHS);
  private troughCount = 0;
  private lowStreak = 0;
  private last: SaturationSample | undefined;

  constructor(options: SaturationDetectorOptions) {
    this.origin = options.origin;
    const k = options.windowSamples ?? 5;
    this.windowSamples = k;
    this.gapMs = 3 * (options.sampleIntervalMs ?? 1000);
    this.tNow = new Float64Array(k);
    this.tQueued = new Float64Array(k);
    this.tSaturated = new Uint8Array(k);
    this.tCompletions = new Float64Array(k);
    this.tArrivals = new Float64Array(k);
    this.tHoldSum = new Float64Array(k);
    this.tHoldCount = new Float64Array(k);
  }

  /** True while the detector has history or a non-ok state, i.e. it wants more samples. */
  get needsSamples(): boolean {
    return this.state !== "ok" || this.count !== 0;
  }

  /** Forgets the sample window (keeps the state). */
  resetWindow(): void {
    this.count = 0;
    this.head = 0;
    this.prev1 = this.prev2 = Number.POSITIVE_INFINITY;
    this.troughCount = 0;
  }

  /**
   * Feeds one sample. Returns a report when the state changed to `saturated`/`stalled` (or upgraded from
   * `saturated` to `stalled`), or to `ok` (recovery); otherwise `undefined`.
   */
  update(s: SaturationSample): SaturationReport | undefined {
    if (this.count !== 0 && s.now - this.tNow[(this.head + this.windowSamples - 1) % this.windowSamples] > this.gapMs) {
      this.resetWindow();
    }
    const k = this.windowSamples;
    const i = this.head;
    const max = s.maxSockets;
    const limited = max > 0 && max !== Number.POSITIVE_INFINITY;
    const saturated = limited && s.active >= max && s.queued > 0;
    this.tNow[i] = s.now;
    this.tQueued[i] = s.queued;
    this.tSaturated[i] = saturated ? 1 : 0;
    this.tCompletions[i] = s.completions;
    this.tArrivals[i] = s.arrivals ?? 0;
    this.tHoldSum[i] = s.holdTimeSumMs ?? 0;
    this.tHoldCount[i] = s.holdCount ?? 0;
    this.head = (i + 1) % k;
    if (this.count < k) this.count++;
    this.last = s;

    // Trough bookkeeping on the floor series.
    const floor = Math.min(s.minQueued ?? s.queued, s.queued);
    if (this.prev1 < floor && this.prev1 <= this.prev2) {
      this.troughs[this.troughCount % TROUGHS] = this.prev1;
      this.troughCount++;
    }
    this.prev2 = this.prev1;
    this.prev1 = floor;

    let trigger: SaturationTrigger | null = null;
    if (limited) {
      const g = Math.max(1, Math.ceil(max / 5));
      if (this.stalled()) trigger = "stall";
      else if (saturated && s.queued >= max && this.growing(g)) trigger = "growth";
      else if (saturated && this.risingTroughs(g, max)) trigger = "rising_troughs";
    }

    if (this.state === "ok") {
      if (trigger === null) return undefined;
      return this.enter(trigger === "stall" ? "stalled" : "saturated", trigger, s);
    }
    const lowWater = limited ? Math.floor(max / 2) : Number.POSITIVE_INFINITY;
    this.lowStreak = s.queued <= lowWater ? this.lowStreak + 1 : 0;
    if (this.lowStreak >= k) {
      const report = this.report("ok", null, null, s);
      this.state = "ok";
      this.since = s.now;
      this.cause = this.trigger = null;
      this.lowStreak = 0;
      return report;
    }
    if (trigger === "stall" && this.state !== "stalled") return this.enter("stalled", trigger, s);
    if (this.state === "stalled" && s.completions > 0 && s.queued > lowWater) {
      // Progress resumed but the backlog is still there: quietly downgrade.
      this.state = "saturated";
      this.trigger = trigger ?? "growth";
      this.cause = this.attribute("saturated", s);
    }
    return undefined;
  }

  /** Builds a report for the current state from the latest sample (used for periodic reminders). */
  assess(): SaturationReport | undefined {
    if (this.last === undefined) return undefined;
    const report = this.report(this.state, this.cause, this.trigger, this.last);
    report.previousState = this.state;
    if (this.state !== "ok") this.lastReport = report;
    return report;
  }

  private enter(state: SaturationState, trigger: SaturationTrigger, s: SaturationSample): SaturationReport {
    const cause = this.attribute(state, s);
    const report = this.report(state, cause, trigger, s);
    this.state = state;
    this.since = s.now;
    this.cause = cause;
    this.trigger = trigger;
    this.lowStreak = 0;
    this.episodes++;
    this.lastReport = report;
    return report;
  }

  private attribute(state: SaturationState, s: SaturationSample): SaturationCause {
    const unconsumed = s.unconsumedCount ?? 0;
    if (unconsumed > 0 && unconsumed * 2 >= s.active) return "unconsumed_bodies";
    return state === "stalled" ? "no_progress" : "pool_capacity";
  }

  private at(j: number): number {
    // j = 0 is the oldest sample in the window.
    return (this.head - this.count + j + this.windowSamples) % this.windowSamples;
  }

  private stalled(): boolean {
    if (this.count < this.windowSamples) return false;
    for (let j = 0; j < this.count; j++) {
      const x = this.at(j);
      if (this.tSaturated[x] === 0 || this.tCompletions[x] !== 0) return false;
    }
    return true;
  }

  private growing(g: number): boolean {
    if (this.count < this.windowSamples) return false;
    let prev = -1;
    for (let j = 0; j < this.count; j++) {
      const x = this.at(j);
      if (this.tSaturated[x] === 0) return false;
      const q = this.tQueued[x];
      if (q < prev) return false;
      prev = q;
    }
    return prev - this.tQueued[this.at(0)] >= g;
  }

  private risingTroughs(g: number, max: number): boolean {
    if (this.troughCount < TROUGHS) return false;
    const n = this.troughCount;
    const a = this.troughs[(n - 3) % TROUGHS];
    const b = this.troughs[(n - 2) % TROUGHS];
    const c = this.troughs[(n - 1) % TROUGHS];
    return a <= b && b <= c && c - a >= g && a >= max;
  }

  private report(
    state: SaturationState,
    cause: SaturationCause | null,
    trigger: SaturationTrigger | null,
    s: SaturationSample
  ): SaturationReport {
    const first = this.at(0);
    const windowMs = this.count > 1 ? s.now - this.tNow[first] : 0;
    let completions = 0;
    let arrivals = 0;
    let holdSum = 0;
    let holdCount = 0;
    for (let j = 1; j < this.count; j++) {
      const x = this.at(j);
      completions += this.tCompletions[x];
      arrivals += this.tArrivals[x];
      holdSum += this.tHoldSum[x];
      holdCount += this.tHoldCount[x];
    }
    const seconds = windowMs / 1000;
    const throughput = seconds > 0 ? completions / seconds : 0;
    const arrivalRate = seconds > 0 ? arrivals / seconds : 0;
    let meanHoldMs: number | null = holdCount > 0 ? holdSum / holdCount : null;
    if (meanHoldMs === null && throughput > 0) meanHoldMs = (s.active / throughput) * 1000;
    const limited = s.maxSockets > 0 && s.maxSockets !== Number.POSITIVE_INFINITY;
    let recommendedMaxSockets: number | null = null;
    if (cause === "pool_capacity" && limited && meanHoldMs !== null) {
      const demand = Math.max(arrivalRate, throughput);
      recommendedMaxSockets = Math.max(s.maxSockets + 1, Math.ceil(((demand * meanHoldMs) / 1000) * 1.25));
    }
    const report: SaturationReport = {
      origin: this.origin,
      state,
      previousState: this.state,
      cause,
      trigger,
      detectedAt: s.now,
      since: this.since,
      active: s.active,
      maxSockets: limited ? s.maxSockets : null,
      queued: s.queued,
      oldestQueuedMs: round(s.oldestQueuedMs ?? 0),
      windowMs: round(windowMs),
      windowSamples: this.count,
      queueGrowth: this.count > 0 ? s.queued - this.tQueued[first] : 0,
      throughput: round(throughput),
      arrivalRate: round(arrivalRate),
      meanHoldMs: meanHoldMs === null ? null : round(meanHoldMs),
      recommendedMaxSockets,
      unconsumed: { count: s.unconsumedCount ?? 0, oldestMs: round(s.unconsumedOldestMs ?? 0) },
      message: "",
    };
    report.message = formatSaturationMessage(report);
    return report;
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
