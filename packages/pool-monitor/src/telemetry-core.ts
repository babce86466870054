/**
 * `TelemetryCore`: the one telemetry path of every Sockeye transport; a transport's monitor adds a reader of its pool.
 *
 *   transport events ──► counting methods (counters, histograms, events to listeners/channels)
 *   owner tick ────────► sample(now) ──► read(o) ──► SaturationDetector ──► log, callbacks, events
 *   getStats() ────────► read(o) + counters ──► `PoolStats`
 *
 * Events are built only when someone listens; a throwing listener or logger changes nothing. Costs: counting O(1)
 * per event; `sample()` O(busy origins × read), one sample allocated per busy origin; `getStats()` O(origins × read).
 */
import type { Channel } from "node:diagnostics_channel";
import {
  connectionClosedChannel,
  connectionCreatedChannel,
  poolRecoveredChannel,
  poolSaturatedChannel,
  requestAcquiredChannel,
  requestEnqueuedChannel,
  bodyReclaimedChannel,
} from "./diagnostics";
import { round3 } from "./duration-histogram";
import { formatSaturationMessage, type SaturationTerms } from "./format-saturation-message";
import { guardedWarn } from "./guarded-warn";
import { normalizeOrigin } from "./normalize-origin";
import { countOutcome, type OriginTelemetry, type OutcomeCounters, type RequestOutcome } from "./origin-telemetry";
import { describeValue, invalidOption } from "./invalid-option";
import {
  type PoolMonitorOptions,
  type ResolvedPoolMonitorOptions,
  resolvePoolMonitorOptions,
  SATURATION_OPTION_KEYS,
} from "./pool-monitor-options";
import { PoolReading } from "./pool-reading";
import type { SaturationSample } from "./saturation-detector";
import type { CloseReason, OriginStats, PoolEvent, PoolEventListener, PoolStats, SaturationReport } from "./pool-stats";
import { timing } from "./timing";

/** Origin under which requests beyond `maxOrigins` distinct origins are aggregated. @public */
export const OVERFLOW_ORIGIN = "_OTHER";

/** With a queue, an unread body is unconsumed after this many periods (if < `unconsumedBodyMs`). @internal */
export const UNREAD_WHILE_QUEUED_SAMPLES = 2;

/** Options of `getStats()`. @public */
export interface GetStatsOptions {
  /** Reset the duration histograms after reading them, so the next snapshot covers only the time since. @defaultValue false */
  resetSummaries?: boolean;
}

/** What every Sockeye monitor offers `registerPoolMetrics()`: the snapshot, the events and the period. @public */
export interface PoolTelemetry {
  /** JSON-serialisable snapshot of every origin. */
  getStats(options?: GetStatsOptions): PoolStats;
  /** Receives every pool event; returns the function that removes the listener. */
  subscribe(listener: PoolEventListener): () => void;
  /** Period of the saturation samples, ms. */
  readonly sampleIntervalMs: number;
}

/** The shared core of the three monitors; subclasses implement `newOrigin()` and `read()`. @public */
export abstract class TelemetryCore<O extends OriginTelemetry = OriginTelemetry> implements PoolTelemetry {
  /** @internal */
  protected monitorOptions: ResolvedPoolMonitorOptions;
  /** @internal */
  protected readonly origins = new Map<string, O>();
  /** Origins whose detector is not `ok` (they need samples until they recover). */
  private nonOk = 0;
  private readonly reading = new PoolReading();
  /** Requests in flight, all origins. @internal */
  inFlightCount = 0;
  /** Bumped by every request event: a sample that finds the value it last saw knows nothing happened since. */
  private activity = 0;
  private sampledActivity = 0;
  /** `now` of the last sample that found activity. */
  private activeAt = 0;
  /** `now` of the last sample taken by `sampleOnTick()`. */
  private tickSampledAt = Number.NEGATIVE_INFINITY;
  /** Nothing happened for long enough that no sample can change anything (see `wantsSamples`). */
  private quiet = false;
  /** Called when an event ends a quiet spell: the owner restarts its sampling. @internal */
  onResume: (() => void) | undefined = undefined;
  /** @internal */
  coreDestroyed = false;
  /** @internal */
  eventListeners: PoolEventListener[] = [];

  /** @param options - see {@link PoolMonitorOptions}; a bad value throws a `TypeError`/`RangeError` naming it. */
  constructor(options?: PoolMonitorOptions) {
    this.monitorOptions = resolvePoolMonitorOptions(options);
  }

  /** Creates the transport's state of a new origin entry. @internal */
  protected abstract newOrigin(key: string): O;

  /**
   * Reads the origin's pool into `r` (cleared): its gauges (one `setGauges()` literal), then its unread bodies
   * (`addUnread()` / `addWatched()`) and the detector's evidence. @internal
   */
  protected abstract read(o: O, now: number, r: PoolReading): void;

  /** Adds the transport's own block to an origin's snapshot (e.g. `http2`). @internal */
  protected extendStats(_o: O, _stats: OriginStats, _now: number, _reset: boolean): void {}

  /** Words of the transport's saturation messages; `undefined`: the defaults (sockets, `maxSockets`). @internal */
  protected terms(_o: O): SaturationTerms | undefined {
    return undefined;
  }

  /** The resolved `sampleIntervalMs` (ms): the period at which the owner should call `sample()`. */
  get sampleIntervalMs(): number {
    return this.monitorOptions.sampleIntervalMs;
  }

  /** True while a request is in flight or an origin is not `ok` and needs samples to recover. */
  get busy(): boolean {
    return !this.coreDestroyed && (this.inFlightCount > 0 || this.nonOk > 0);
  }

  /** True while `busy` and a sample can still change a detector (`quietAfterMs()`); else it waits for an event. */
  get wantsSamples(): boolean {
    return this.busy && !this.quiet;
  }

  /** The entry of `origin`, made on first use (past `maxOrigins`: `_OTHER`). @throws TypeError if no host. @internal */
  originFor(origin: string): O {
    return this.origins.get(origin) ?? this.addOrigin(origin);
  }

  private addOrigin(raw: string): O {
    let key = normalizeOrigin(raw);
    const known = this.origins.get(key);
    if (known !== undefined) return known;
    const other = this.origins.get(OVERFLOW_ORIGIN);
    if (this.origins.size - (other === undefined ? 0 : 1) >= this.monitorOptions.maxOrigins) {
      if (other !== undefined) return other;
      key = OVERFLOW_ORIGIN;
    }
    const o = this.newOrigin(key);
    o.detector.stateSince = timing.now();
    this.origins.set(key, o);
    return o;
  }

  /** A request of `o` started. @internal */
  started(o: O): void {
    this.stir();
    o.started++;
    o.arrivals++;
    o.inFlightCount++;
    this.inFlightCount++;
  }

  /** A request of `o` had to wait for a connection. @internal */
  enqueued(o: O): void {
    if (this.wants(requestEnqueuedChannel)) {
      this.emit({ type: "request:enqueued", origin: o.origin }, requestEnqueuedChannel);
    }
  }

  /** A request of `o` got a connection after `waitMs` (`reused`: one that carried a request before). @internal */
  acquired(o: O, waitMs: number, reused: boolean, queued: boolean): void {
    this.stir();
    o.acquisitions++;
    if (reused) o.reusedAcquisitions++;
    o.queueWait.record(waitMs);
    if (this.wants(requestAcquiredChannel)) {
      this.emit({ type: "request:acquired", origin: o.origin, waitMs, reused, queued }, requestAcquiredChannel);
    }
  }

  /** A request of `o` released its connection after holding it `holdMs`. @internal */
  released(o: O, holdMs: number): void {
    this.stir();
    o.sampleCompletions++;
    o.holdSumMs += holdMs;
    o.sampleHolds++;
    if (holdMs > o.holdMaxMs) o.holdMaxMs = holdMs;
  }

  /** A request of `o` is over for the caller. @internal */
  finished(o: O, outcome: RequestOutcome): void {
    this.stir();
    o.inFlightCount--;
    this.inFlightCount--;
    countOutcome(o, outcome, 1);
  }

  /** A request of `o` was rejected at once: its queue held `maxQueuedRequests` (it still finishes as failed). @internal */
  queueFullRejected(o: O): void {
    o.queueFull++;
  }

  /** A new connection of `o` is being opened. @internal */
  connectionOpened(o: O): void {
    o.socketsCreated++;
  }

  /** A connection of `o` finished its TCP connect in `connectMs`. @internal */
  connected(o: O, connectMs: number): void {
    o.connect.record(connectMs);
  }

  /** A connection of `o` is ready: TCP took `connectMs`, then TLS `tlsMs` (`null`: plain TCP). @internal */
  connectionReady(o: O, connectMs: number, tlsMs: number | null): void {
    if (tlsMs !== null) o.tls.record(tlsMs);
    if (this.wants(connectionCreatedChannel)) {
      this.emit({ type: "connection:created", origin: o.origin, connectMs, tlsMs }, connectionCreatedChannel);
    }
  }

  /** A connection of `o` emitted an error. @internal */
  connectionErrored(o: O): void {
    o.socketErrors++;
  }

  /** A connection of `o` closed after `ageMs` and `requests` requests; `ready`: it had become usable. @internal */
  connectionClosed(o: O, ageMs: number, ready: boolean, requests: number, reason: CloseReason): void {
    o.closed[reason]++;
    if (ready) o.connectionAge.record(ageMs);
    if (this.wants(connectionClosedChannel)) {
      this.emit({ type: "connection:closed", origin: o.origin, ageMs, requests, reason }, connectionClosedChannel);
    }
  }

  /** A response body of `o` was collected unread while open; its transport freed the connection. @internal */
  bodyReclaimed(o: O): void {
    o.bodiesReclaimed++;
    if (o.detector.detectorState !== "ok") o.episodeReclaimed++;
    if (this.wants(bodyReclaimedChannel)) this.emit({ type: "body:reclaimed", origin: o.origin }, bodyReclaimedChannel);
  }

  /** True when someone would receive an event published on `channel`. @internal */
  wants(channel: Channel): boolean {
    return this.eventListeners.length !== 0 || channel.hasSubscribers;
  }

  /** Delivers an event to the listeners and its channel; a throwing receiver is ignored. @internal */
  emit(event: PoolEvent, channel: Channel): void {
    if (channel.hasSubscribers) {
      try {
        channel.publish(event);
      } catch {}
    }
    const listeners = this.eventListeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i](event);
      } catch {}
    }
  }

  /** Receives every pool event (as published on the `sockeye:*` channels); returns the remover. */
  subscribe(listener: PoolEventListener): () => void {
    if (typeof listener !== "function") {
      throw new TypeError(
        `@sockeye/pool-monitor: subscribe(listener) expects a function; received ${typeof listener}.`
      );
    }
    this.eventListeners = [...this.eventListeners, listener];
    return () => {
      this.eventListeners = this.eventListeners.filter((l) => l !== listener);
    };
  }

  /**
   * Applies options at runtime (a bad value throws and changes nothing). Absent keys keep their value; a key set to
   * `undefined` goes back to its default. A new `sampleIntervalMs`, `windowSamples` or `stallAfterMs` clears the
   * detectors' windows but keeps their episodes; a new `maxOrigins` applies to origins seen from now on.
   */
  configure(options: PoolMonitorOptions): void {
    this.applyOptions(options, "@sockeye/pool-monitor", "");
  }

  /** `configure()`, with the package and the option path its errors name. */
  private applyOptions(options: PoolMonitorOptions, prefix: string, path: string): void {
    if (options === null || typeof options !== "object" || Array.isArray(options)) {
      if (path !== "") throw invalidOption(prefix, path.slice(0, -1), options, "an object");
      throw new TypeError(`${prefix} - configure(options) expects an object; received ${describeValue(options)}.`);
    }
    const current = this.monitorOptions;
    const next = resolvePoolMonitorOptions({ ...current, ...(options as PoolMonitorOptions) }, prefix, path);
    this.monitorOptions = next;
    if (
      next.sampleIntervalMs !== current.sampleIntervalMs ||
      next.windowSamples !== current.windowSamples ||
      next.stallAfterMs !== current.stallAfterMs
    ) {
      for (const o of this.origins.values()) o.detector.reconfigure(next);
    }
    this.configured(current);
  }

  /** Applies a handler's monitor option: `saturation` replaces the block, `null` removes a callback. @internal */
  applyHandlerOption(key: MonitorHandlerOption, value: unknown, prefix: string): void {
    if (key === "saturation")
      this.applyOptions(saturationFields(value as Record<string, unknown>), prefix, "saturation.");
    else this.applyOptions({ [key]: value ?? undefined }, prefix, "");
  }

  /** Called after `configure()` applied new options. @internal */
  protected configured(_previous: ResolvedPoolMonitorOptions): void {}

  /** One detector sample of every busy origin, delivering saturation / recovery; `now`: `timing.now()` ms. */
  sample(now: number): void {
    if (this.coreDestroyed) return;
    let queued = false;
    for (const o of this.origins.values()) if (this.sampleOrigin(o, now)) queued = true;
    if (this.activity !== this.sampledActivity) {
      this.sampledActivity = this.activity;
      this.activeAt = now;
    } else if (now - this.activeAt >= this.quietAfterMs(queued)) {
      this.quiet = true;
    }
  }

  /**
   * The owner's tick: samples unless the last one is under `sampleIntervalMs` old (1 ms of margin for a tick firing a
   * hair early). Returns `wantsSamples`: whether to keep ticking. @internal
   */
  sampleOnTick(now: number): boolean {
    if (now - this.tickSampledAt >= this.monitorOptions.sampleIntervalMs - 1) {
      this.tickSampledAt = now;
      this.sample(now);
    }
    return this.wantsSamples;
  }

  /** A request event: counts as activity, and ends a quiet spell. */
  private stir(): void {
    this.activity++;
    if (this.quiet) {
      this.quiet = false;
      this.onResume?.();
    }
  }

  /** How long (ms) after the last event a sample can still change a detector: a window, plus with a queue the
   * longest stall deadline and the unread-body threshold. */
  private quietAfterMs(queued: boolean): number {
    const options = this.monitorOptions;
    const period = options.sampleIntervalMs;
    let k = 0;
    let stall = 0;
    for (const o of this.origins.values()) {
      const d = o.detector;
      if (d.ringSamples > k) k = d.ringSamples;
      if (queued) stall = Math.max(stall, d.stallDeadline());
    }
    if (!queued) return (k + 1) * period;
    return stall + options.unconsumedBodyMs + (k + UNREAD_WHILE_QUEUED_SAMPLES + 2) * period;
  }

  /** Feeds `o`'s detector; returns whether `o` has requests queued. */
  private sampleOrigin(o: O, now: number): boolean {
    const detector = o.detector;
    if (o.inFlightCount === 0 && detector.detectorState === "ok") {
      if (detector.needsSamples) detector.resetWindow();
      // Requests that completed since the last sample still tell how long this origin's requests hold a connection.
      if (o.sampleHolds > 0 && o.holdMaxMs > detector.holdEstimateMs) detector.holdEstimateMs = o.holdMaxMs;
      o.resetSampleCounters(0);
      return false;
    }
    const r = this.readOrigin(o, now);
    const e = r.evidence;
    const s: SaturationSample = {
      ...e,
      now,
      minQueued: Math.min(o.sampleMinQueued, e.queued),
      completions: e.completions >= 0 ? e.completions : o.sampleCompletions,
      arrivals: o.arrivals,
      holdTimeSumMs: o.holdSumMs,
      holdCount: o.sampleHolds,
      holdTimeMaxMs: o.holdMaxMs,
      unconsumedCount: r.unreadCount,
      unconsumedOldestMs: r.unreadAgeMs,
    };
    const report = detector.update(s);
    o.resetSampleCounters(e.queued);
    if (report !== undefined) {
      this.deliver(o, report, now);
    } else if (
      detector.detectorState !== "ok" &&
      now - o.lastWarnAt >= this.monitorOptions.warningLockoutMs &&
      // Remind only while the pool is still full (or pinned), not while a drained queue waits out its recovery.
      ((s.queued > 0 && s.active >= s.maxSockets) ||
        (detector.detectorCause === "unconsumed_bodies" && r.unreadCount > 0))
    ) {
      const reminder = detector.assess();
      if (reminder !== undefined) this.log(o, this.worded(o, reminder), now);
    }
    return e.queued > 0;
  }

  private readOrigin(o: O, now: number): PoolReading {
    const r = this.reading;
    const options = this.monitorOptions;
    r.clear(options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * options.sampleIntervalMs);
    this.read(o, now, r);
    return r;
  }

  /** The report in the transport's words (see `terms()`). */
  private worded(o: O, report: SaturationReport): SaturationReport {
    // An episode starts counting its reclaimed bodies afresh; its later reports (reminders, recovery) carry them.
    if (report.previousState === "ok") o.episodeReclaimed = 0;
    report.reclaimed = o.episodeReclaimed;
    const terms = this.terms(o);
    if (terms?.sizing === false) {
      report.recommendedMaxSockets = null;
      report.sizing = null;
    }
    // The detector worded it for sockets, without reclaimed bodies.
    if (terms !== undefined || report.reclaimed !== 0) report.message = formatSaturationMessage(report, terms);
    return report;
  }

  private deliver(o: O, raw: SaturationReport, now: number): void {
    const report = this.worded(o, raw);
    const options = this.monitorOptions;
    if (report.state === "ok") {
      this.nonOk--;
      if (this.wants(poolRecoveredChannel)) {
        this.emit({ type: "pool:recovered", origin: o.origin, report }, poolRecoveredChannel);
      }
      this.call(options.onRecovery, "onRecovery", report);
      return;
    }
    if (report.previousState === "ok") this.nonOk++;
    this.log(o, report, now);
    if (this.wants(poolSaturatedChannel)) {
      this.emit({ type: "pool:saturated", origin: o.origin, report }, poolSaturatedChannel);
    }
    this.call(options.onSaturation, "onSaturation", report);
  }

  /** Logs a non-ok report; the lockout holds back repeats of the last logged cause, never a different cause. */
  private log(o: O, report: SaturationReport, now: number): void {
    if (report.cause === o.lastWarnCause && now - o.lastWarnAt < this.monitorOptions.warningLockoutMs) return;
    o.lastWarnAt = now;
    o.lastWarnCause = report.cause;
    guardedWarn(this.monitorOptions.logger, this.monitorOptions.messagePrefix + report.message);
  }

  private call(fn: ((r: SaturationReport) => void) | undefined, name: string, report: SaturationReport): void {
    if (fn === undefined) return;
    try {
      fn(report);
    } catch (err) {
      try {
        const message = `${name} callback threw ${(err as Error)?.name ?? typeof err}; the monitor continues.`;
        guardedWarn(this.monitorOptions.logger, this.monitorOptions.messagePrefix + message);
      } catch {} // the thrown value's `name` getter threw
    }
  }

  /** JSON-serialisable snapshot of every origin. Cost: O(origins × the transport's read). */
  getStats(options?: GetStatsOptions): PoolStats {
    const now = timing.now();
    const stats = emptyPoolStats(now);
    const { origins, totals } = stats;
    if (!this.coreDestroyed) {
      const reset = options?.resetSummaries === true;
      for (const o of this.origins.values()) {
        const s = this.originStats(o, now, reset);
        origins.push(s);
        totals.active += s.active;
        totals.idle += s.idle;
        totals.queued += s.queued;
        totals.inFlight += s.inFlight;
        if (s.saturation.state !== "ok") totals.saturatedOrigins++;
      }
    }
    return stats;
  }

  private originStats(o: O, now: number, reset: boolean): OriginStats {
    const r = this.readOrigin(o, now);
    const d = o.detector;
    const stats: OriginStats = {
      origin: o.origin,
      ...r.gauges,
      inFlight: o.inFlightCount,
      requests: { started: o.started, ...outcomeCounts(o), queueFull: o.queueFull },
      sockets: {
        created: o.socketsCreated,
        closed: { ...o.closed },
        acquisitions: o.acquisitions,
        reusedAcquisitions: o.reusedAcquisitions,
        errors: o.socketErrors,
      },
      queueWaitMs: o.queueWait.summary(),
      connectMs: o.connect.summary(),
      tlsMs: o.tls.summary(),
      connectionAgeMs: o.connectionAge.summary(),
      unconsumed: { count: r.unreadCount, oldestMs: round3(r.unreadAgeMs) },
      bodiesReclaimed: o.bodiesReclaimed,
      saturation: {
        state: d.detectorState,
        since: d.stateSince,
        cause: d.detectorCause,
        trigger: d.detectorTrigger,
        recommendedMaxSockets: this.terms(o)?.sizing === false ? null : d.recommendedSockets,
        clearSamples: d.recoveryStreak,
        episodes: d.episodes,
      },
    };
    const unpooled = o.unpooledCounters;
    if (unpooled !== undefined) {
      const { started, inFlight, connect } = unpooled;
      stats.unpooled = { started, inFlight, ...outcomeCounts(unpooled), connectMs: connect.summary() };
      if (reset) connect.reset();
    }
    this.extendStats(o, stats, now, reset);
    if (reset) {
      o.queueWait.reset();
      o.connect.reset();
      o.tls.reset();
      o.connectionAge.reset();
    }
    return stats;
  }

  /** Stops all tracking and clears all state. Later calls are no-ops; snapshots are empty. */
  destroy(): void {
    this.coreDestroyed = true;
    this.inFlightCount = 0;
    this.eventListeners = [];
    this.origins.clear();
    this.nonOk = 0;
  }
}

/** The four outcome counters of `c`, in the order of the snapshot's fields. */
function outcomeCounts(c: OutcomeCounters): OutcomeCounters {
  return { completed: c.completed, failed: c.failed, aborted: c.aborted, timedOut: c.timedOut };
}

/** A snapshot of no origin, taken at `takenAt` (a handler without telemetry answers `getPoolStats()` with it). @internal */
export function emptyPoolStats(takenAt: number): PoolStats {
  return { takenAt, origins: [], totals: { active: 0, idle: 0, queued: 0, inFlight: 0, saturatedOrigins: 0 } };
}

/** Handler options that configure the monitor at runtime (`applyHandlerOption()`). @internal */
export type MonitorHandlerOption = "saturation" | "onSaturation" | "onRecovery";

/** Every saturation field, `undefined` where `saturation` leaves it out (so `configure()` restores its default). @internal */
export function saturationFields(saturation: Record<string, unknown> | null | undefined): PoolMonitorOptions {
  const next: Record<string, unknown> = {};
  for (const name of SATURATION_OPTION_KEYS) next[name] = saturation?.[name];
  return next as PoolMonitorOptions;
}
