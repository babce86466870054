/**
 * Per-origin saturation detector: a pure state machine fed one sample per period. Queue depth alone says nothing (a
 * `Promise.all` batch only drains), so the rules (`SaturationTrigger`) watch how the queue moves while every socket
 * is busy; a sample is *saturated* when `active >= maxSockets` and the queue is non-empty. The `stallAfterMs` floor of
 * `stallDeadline()` keeps a client's first long polls from reading as a stall.
 *
 * During an episode the cause is re-attributed per sample (a change needs CAUSE_CONFIRM_SAMPLES); recovery takes
 * K = `windowSamples` clear samples; every transition, and a gap longer than GAP_PERIODS periods, clears the window.
 *
 * Data: a ring of K samples in one Float64Array (SLOT numbers each), a ring of the last 3 troughs and scalars.
 * `update()` is O(K) and allocates only for a report or, during a `pool_capacity` episode, the sizing.
 */
import {
  CAUSE_CONFIRM_SAMPLES,
  DEFAULT_STALL_AFTER_MS,
  GAP_PERIODS,
  HOLD_DECAY,
  SIZING_HEADROOM,
  STALL_HOLD_FACTOR,
  TROUGHS,
} from "./detector-tuning";
import { round3 } from "./duration-histogram";
import { formatSaturationMessage } from "./format-saturation-message";
import type {
  SaturationCause,
  SaturationReport,
  SaturationSizing,
  SaturationState,
  SaturationTrigger,
} from "./pool-stats";

// Offsets of one sample in the ring: time, queue depth, saturated (0/1), and the counters of the interval it closes.
const R_NOW = 0;
const R_QUEUED = 1;
const R_SATURATED = 2;
const R_COMPLETIONS = 3;
const R_ARRIVALS = 4;
const R_HOLD_SUM = 5;
const R_HOLD_COUNT = 6;
const SLOT = 7;

/** The window's span (ms) and counter sums, for a report or a sizing. */
interface WindowSums {
  ms: number;
  completions: number;
  arrivals: number;
  holdSum: number;
  holdCount: number;
}

/** One sample of one origin. @public */
export interface SaturationSample {
  /** Sample time, `performance.now()` ms. */
  now: number;
  active: number;
  /** Socket limit for the origin (`Infinity` = unlimited: never saturated). */
  maxSockets: number;
  queued: number;
  /** Minimum queue depth since the previous sample; defaults to `queued`. */
  minQueued?: number;
  /** Requests that released their socket since the previous sample. */
  completions: number;
  /** Requests started since the previous sample. */
  arrivals?: number;
  /** Sum of the socket hold times (acquired → released) of the `holdCount` requests released since then, ms. */
  holdTimeSumMs?: number;
  holdCount?: number;
  /** Longest of those hold times, ms (feeds the expected hold of this origin); defaults to their mean. */
  holdTimeMaxMs?: number;
  /** Age of the oldest request holding a socket now (since it acquired it), ms. */
  oldestActiveMs?: number;
  /** Sum of the ages of the `activeAgeCount` requests holding a socket now, ms (sizing). */
  activeAgeSumMs?: number;
  activeAgeCount?: number;
  /** Age of the oldest queued request, ms. */
  oldestQueuedMs?: number;
  /** Unconsumed responses (see `unconsumedBodyMs`). */
  unconsumedCount?: number;
  /** Age of the oldest unconsumed response, ms. */
  unconsumedOldestMs?: number;
}

/** Detector tuning. @public */
export interface SaturationDetectorOptions {
  /** Origin named in reports. */
  origin: string;
  /** K. @defaultValue 5 */
  windowSamples?: number;
  /** Expected period between samples, ms (gap detection, stall deadline). @defaultValue 1000 */
  sampleIntervalMs?: number;
  /** Shortest stall deadline, ms (see `SaturationReport.stallDeadlineMs`). @defaultValue 30000 */
  stallAfterMs?: number;
}

/** Saturation state machine for one origin. @public */
export class SaturationDetector {
  detectorState: SaturationState = "ok";
  /** When the current state began (`now` of the sample that entered it; 0 initially). */
  stateSince = 0;
  detectorCause: SaturationCause | null = null;
  /** Rule that fired for the current non-ok state (or that supported the last change of cause). */
  detectorTrigger: SaturationTrigger | null = null;
  episodes = 0;
  /** Sockets the pool needs now, refreshed on every sample of an episode (`pool_capacity` only), else `null`. */
  recommendedSockets: number | null = null;
  /** Consecutive clear samples towards recovery (0 when `ok`). */
  recoveryStreak = 0;
  /** Expected hold, ms: the longest completed hold, decaying by `HOLD_DECAY` per sample; 0 before one. */
  holdEstimateMs = 0;

  declare readonly origin: string;
  declare private k: number;
  declare private samplePeriodMs: number;
  declare private stallFloorMs: number;
  declare private ring: Float64Array;
  private ringHead = 0; // next write
  private ringCount = 0;
  private prev1 = Number.POSITIVE_INFINITY;
  private prev2 = Number.POSITIVE_INFINITY;
  private readonly troughs = new Float64Array(TROUGHS);
  private troughCount = 0;
  // Consecutive saturated samples without a completion, and when the run began.
  private stuckSamples = 0;
  private stuckSince = 0;
  private lastQueued = 0;
  private pendingCause: SaturationCause | null = null;
  private pendingCount = 0;
  private last: SaturationSample | undefined;

  constructor(options: SaturationDetectorOptions) {
    this.origin = options.origin;
    this.k = options.windowSamples ?? 5;
    this.samplePeriodMs = options.sampleIntervalMs ?? 1000;
    this.stallFloorMs = options.stallAfterMs ?? DEFAULT_STALL_AFTER_MS;
    this.ring = new Float64Array(this.k * SLOT);
  }

  /** K, the number of samples in the window. */
  get ringSamples(): number {
    return this.k;
  }

  /** True while the detector has history or a non-ok state, i.e. it wants more samples. */
  get needsSamples(): boolean {
    return this.detectorState !== "ok" || this.ringCount !== 0;
  }

  /** Applies new tuning: clears the sample window, keeps the state, the episode and the expected hold. */
  reconfigure(options: Omit<SaturationDetectorOptions, "origin">): void {
    const k = options.windowSamples ?? this.k;
    this.samplePeriodMs = options.sampleIntervalMs ?? this.samplePeriodMs;
    this.stallFloorMs = options.stallAfterMs ?? this.stallFloorMs;
    if (k !== this.k) {
      this.k = k;
      this.ring = new Float64Array(k * SLOT);
    }
    this.resetWindow();
    this.recoveryStreak = 0;
  }

  /** Forgets the sample window and the running counters (keeps the state, the cause and the expected hold time). */
  resetWindow(): void {
    this.ringCount = 0;
    this.ringHead = 0;
    this.prev1 = this.prev2 = Number.POSITIVE_INFINITY;
    this.troughCount = 0;
    this.stuckSamples = 0;
    this.pendingCause = null;
    this.pendingCount = 0;
  }

  /** The age, ms, past which a held request counts as stalled for this origin now. */
  stallDeadline(): number {
    return Math.max((this.k - 1) * this.samplePeriodMs, this.stallFloorMs, STALL_HOLD_FACTOR * this.holdEstimateMs);
  }

  /** Feeds one sample; returns a report on entry, change of cause or recovery. */
  update(s: SaturationSample): SaturationReport | undefined {
    const lastNow = this.ringCount !== 0 ? this.ring[this.ringIndex(this.ringCount - 1) + R_NOW] : s.now;
    if (s.now - lastNow > GAP_PERIODS * this.samplePeriodMs) this.resetWindow();
    const k = this.k;
    const max = s.maxSockets;
    const limited = max > 0 && max !== Number.POSITIVE_INFINITY;
    const saturated = limited && s.active >= max && s.queued > 0;
    const draining = s.queued < this.lastQueued;
    this.lastQueued = s.queued;
    this.recordSample(s, saturated);

    const holdCount = s.holdCount ?? 0;
    const holdMax = s.holdTimeMaxMs ?? (holdCount > 0 ? (s.holdTimeSumMs ?? 0) / holdCount : 0);
    this.holdEstimateMs = Math.max(holdMax, this.holdEstimateMs * HOLD_DECAY);

    if (saturated && s.completions === 0) {
      if (this.stuckSamples === 0) this.stuckSince = s.now;
      this.stuckSamples++;
    } else {
      this.stuckSamples = 0;
    }
    const stuck = this.stuckSamples >= k;
    // No completion since the run began: every request holding a socket then still holds it.
    const heldMs = Math.max(s.oldestActiveMs ?? 0, stuck ? s.now - this.stuckSince : 0);
    const stall = stuck && heldMs >= this.stallDeadline();
    const unconsumed = s.unconsumedCount ?? 0;
    const pinned = unconsumed > 0 && unconsumed * 2 >= s.active;

    if (this.detectorState === "ok") {
      let trigger: SaturationTrigger | null = null;
      if (limited) {
        const g = Math.max(1, Math.ceil(max / 5));
        if (stall) trigger = "stall";
        else if (saturated && s.queued >= max && this.growing(g)) trigger = "growth";
        else if (saturated && this.risingTroughs(g, max)) trigger = "rising_troughs";
        else if (stuck) trigger = "long_holds";
      }
      if (trigger === null) return undefined;
      const cause: SaturationCause = pinned ? "unconsumed_bodies" : stall ? "no_progress" : "pool_capacity";
      return this.transition(stall ? "stalled" : "saturated", cause, trigger, s, true);
    }

    // A socket the agent opened for a request destroyed while queued is active but held by no request.
    const clear =
      s.queued === 0 &&
      (s.completions > 0 || s.active === 0 || s.activeAgeCount === 0) &&
      !(this.detectorCause === "unconsumed_bodies" && unconsumed > 0);
    this.recoveryStreak = clear ? this.recoveryStreak + 1 : 0;
    if (this.recoveryStreak >= k) {
      const report = this.buildReport("ok", null, null, s);
      this.detectorState = "ok";
      this.stateSince = s.now;
      this.detectorCause = this.detectorTrigger = null;
      this.recommendedSockets = null;
      this.recoveryStreak = 0;
      this.resetWindow();
      return report;
    }

    // Re-attribute from this sample's evidence; null = no evidence either way (keep the cause).
    let evidence: SaturationCause | null = null;
    let trigger: SaturationTrigger | null = null;
    if (pinned && (saturated || this.detectorCause === "unconsumed_bodies")) {
      evidence = "unconsumed_bodies";
      trigger = stall ? "stall" : stuck ? "long_holds" : this.detectorTrigger;
    } else if (stall) {
      evidence = "no_progress";
      trigger = "stall";
    } else if (saturated && (stuck || !draining)) {
      evidence = "pool_capacity";
      trigger = stuck
        ? "long_holds"
        : this.detectorTrigger === "growth" || this.detectorTrigger === "rising_troughs"
          ? this.detectorTrigger
          : "growth";
    }
    if (evidence === null || evidence === this.detectorCause) {
      this.pendingCause = null;
      this.pendingCount = 0;
      this.recommendedSockets =
        this.detectorCause === "pool_capacity"
          ? (this.sizeFor(s, this.detectorCause, this.sumWindow(s))?.recommended ?? null)
          : null;
      return undefined;
    }
    if (evidence !== this.pendingCause) {
      this.pendingCause = evidence;
      this.pendingCount = 0;
    }
    if (++this.pendingCount < CAUSE_CONFIRM_SAMPLES) return undefined;
    const state: SaturationState =
      evidence === "no_progress" || (evidence === "unconsumed_bodies" && stall) ? "stalled" : "saturated";
    return this.transition(state, evidence, trigger ?? "growth", s, false);
  }

  /** Builds a report for the current state from the latest sample (periodic reminders carry fresh figures). */
  assess(): SaturationReport | undefined {
    if (this.last === undefined) return undefined;
    const report = this.buildReport(this.detectorState, this.detectorCause, this.detectorTrigger, this.last);
    report.previousState = this.detectorState;
    report.previousCause = this.detectorCause;
    return report;
  }

  private recordSample(s: SaturationSample, saturated: boolean): void {
    const i = this.ringHead;
    const ring = this.ring;
    const x = i * SLOT;
    ring[x + R_NOW] = s.now;
    ring[x + R_QUEUED] = s.queued;
    ring[x + R_SATURATED] = saturated ? 1 : 0;
    ring[x + R_COMPLETIONS] = s.completions;
    ring[x + R_ARRIVALS] = s.arrivals ?? 0;
    ring[x + R_HOLD_SUM] = s.holdTimeSumMs ?? 0;
    ring[x + R_HOLD_COUNT] = s.holdCount ?? 0;
    this.ringHead = (i + 1) % this.k;
    if (this.ringCount < this.k) this.ringCount++;
    this.last = s;
    const floor = Math.min(s.minQueued ?? s.queued, s.queued);
    if (this.prev1 < floor && this.prev1 <= this.prev2) {
      this.troughs[this.troughCount % TROUGHS] = this.prev1;
      this.troughCount++;
    }
    this.prev2 = this.prev1;
    this.prev1 = floor;
  }

  /** Enters a non-ok state or changes the cause of the current episode; clears the window. */
  private transition(
    state: SaturationState,
    cause: SaturationCause,
    trigger: SaturationTrigger,
    s: SaturationSample,
    entering: boolean
  ): SaturationReport {
    const report = this.buildReport(state, cause, trigger, s);
    if (entering) {
      this.episodes++;
      this.stateSince = s.now;
    } else {
      report.since = this.stateSince;
    }
    this.detectorState = state;
    this.detectorCause = cause;
    this.detectorTrigger = trigger;
    this.recommendedSockets = report.recommendedMaxSockets;
    this.recoveryStreak = 0;
    // The stuck run is evidence about the pool, not the window: keep it.
    const stuckSamples = this.stuckSamples;
    const stuckSince = this.stuckSince;
    this.resetWindow();
    this.stuckSamples = stuckSamples;
    this.stuckSince = stuckSince;
    this.recordSample(s, s.maxSockets > 0 && s.active >= s.maxSockets && s.queued > 0);
    return report;
  }

  /** Offset in `ring` of the `j`-th sample of the window (j = 0 is the oldest). */
  private ringIndex(j: number): number {
    return ((this.ringHead - this.ringCount + j + this.k) % this.k) * SLOT;
  }

  private growing(g: number): boolean {
    if (this.ringCount < this.k) return false;
    let prev = -1;
    for (let j = 0; j < this.ringCount; j++) {
      const x = this.ringIndex(j);
      if (this.ring[x + R_SATURATED] === 0) return false;
      const q = this.ring[x + R_QUEUED];
      if (q < prev) return false;
      prev = q;
    }
    return prev - this.ring[this.ringIndex(0) + R_QUEUED] >= g;
  }

  private risingTroughs(g: number, max: number): boolean {
    if (this.troughCount < TROUGHS) return false;
    const n = this.troughCount;
    const a = this.troughs[(n - 3) % TROUGHS];
    const b = this.troughs[(n - 2) % TROUGHS];
    const c = this.troughs[(n - 1) % TROUGHS];
    return a <= b && b <= c && c - a >= g && a >= max;
  }

  /** The window's time span and the sums of its counters (the first sample's counters predate the window). */
  private sumWindow(s: SaturationSample): WindowSums {
    const ring = this.ring;
    const sums: WindowSums = { ms: 0, completions: 0, arrivals: 0, holdSum: 0, holdCount: 0 };
    if (this.ringCount > 1) sums.ms = s.now - ring[this.ringIndex(0) + R_NOW];
    for (let j = 1; j < this.ringCount; j++) {
      const x = this.ringIndex(j);
      sums.completions += ring[x + R_COMPLETIONS];
      sums.arrivals += ring[x + R_ARRIVALS];
      sums.holdSum += ring[x + R_HOLD_SUM];
      sums.holdCount += ring[x + R_HOLD_COUNT];
    }
    return sums;
  }

  /** Sockets the pool needs now (`pool_capacity` only); the hold time counts the slow requests still in flight. */
  private sizeFor(s: SaturationSample, cause: SaturationCause | null, w: WindowSums): SaturationSizing | null {
    const max = s.maxSockets;
    if (cause !== "pool_capacity" || !(max > 0) || max === Number.POSITIVE_INFINITY) return null;
    const windowMs = w.ms;
    const completions = w.completions;
    const seconds = windowMs / 1000;
    const meanHold = w.holdCount > 0 ? w.holdSum / w.holdCount : 0;
    const ageCount = s.activeAgeCount ?? 0;
    const meanAge = ageCount > 0 ? (s.activeAgeSumMs ?? 0) / ageCount : 0;
    const holdMs = Math.max(meanHold, meanAge);
    let sizing: SaturationSizing;
    if (completions > 0 && seconds > 0 && windowMs >= 2 * holdMs && holdMs > 0) {
      const ratePerSec = Math.max(w.arrivals / seconds, completions / seconds);
      const needed = (ratePerSec * holdMs) / 1000;
      sizing = {
        method: "littles_law",
        ratePerSec: round3(ratePerSec),
        holdMs: round3(holdMs),
        needed: round3(needed),
        recommended: 0,
      };
    } else {
      const needed = s.active + s.queued;
      sizing = {
        method: "concurrent_requests",
        ratePerSec: null,
        holdMs: round3(Math.max(s.oldestActiveMs ?? 0, holdMs)),
        needed,
        recommended: 0,
      };
    }
    sizing.recommended = Math.max(max + 1, Math.ceil(sizing.needed * SIZING_HEADROOM - 1e-9));
    return sizing;
  }

  private buildReport(
    state: SaturationState,
    cause: SaturationCause | null,
    trigger: SaturationTrigger | null,
    s: SaturationSample
  ): SaturationReport {
    const w = this.sumWindow(s);
    const windowMs = w.ms;
    const seconds = windowMs / 1000;
    const throughput = seconds > 0 ? w.completions / seconds : 0;
    const arrivalRate = seconds > 0 ? w.arrivals / seconds : 0;
    let meanHoldMs: number | null = w.holdCount > 0 ? w.holdSum / w.holdCount : null;
    if (meanHoldMs === null && throughput > 0) meanHoldMs = (s.active / throughput) * 1000;
    const limited = s.maxSockets > 0 && s.maxSockets !== Number.POSITIVE_INFINITY;
    const sizing = this.sizeFor(s, cause, w);
    const report: SaturationReport = {
      origin: this.origin,
      state,
      previousState: this.detectorState,
      cause,
      previousCause: this.detectorCause,
      trigger,
      detectedAt: s.now,
      since: this.stateSince,
      active: s.active,
      maxSockets: limited ? s.maxSockets : null,
      queued: s.queued,
      oldestQueuedMs: round3(s.oldestQueuedMs ?? 0),
      oldestActiveMs: round3(s.oldestActiveMs ?? 0),
      expectedHoldMs: this.holdEstimateMs > 0 ? round3(this.holdEstimateMs) : null,
      stallDeadlineMs: round3(this.stallDeadline()),
      windowMs: round3(windowMs),
      windowSamples: this.ringCount,
      queueGrowth: this.ringCount > 0 ? s.queued - this.ring[this.ringIndex(0) + R_QUEUED] : 0,
      throughput: round3(throughput),
      arrivalRate: round3(arrivalRate),
      meanHoldMs: meanHoldMs === null ? null : round3(meanHoldMs),
      recommendedMaxSockets: sizing === null ? null : sizing.recommended,
      sizing,
      unconsumed: { count: s.unconsumedCount ?? 0, oldestMs: round3(s.unconsumedOldestMs ?? 0) },
      reclaimed: 0,
      message: "",
    };
    report.message = formatSaturationMessage(report);
    return report;
  }
}
