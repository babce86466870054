/**
 * UndiciPoolMonitor: the `PoolMonitor` contract (`getStats()`, `subscribe()`, saturation detection with the same
 * `SaturationDetector`, `sockeye:*` diagnostics channels) for pools that undici owns.
 *
 * Data sources:
 * - undici's own `PoolStats` of each origin's `Pool` (connected, free, pending), read only in `getStats()` and
 *   `sample()`: active = busy + connecting connections, idle = free, queued = pending − connecting. The `_OTHER`
 *   entry registers one `Pool` per overflowed origin: its gauges and `maxSockets` are sums over the live ones, and
 *   the detector is fed per-pool evidence (only the pools full with a queue, when some are; see `sampleOrigin`).
 * - the tracked connector (`tracked-connector.ts`): connection attempts, connect/TLS time, close reason and age.
 * - the handler's request state, through the `request*` methods below: O(1) counter updates and list links per
 *   request, no allocation unless an event subscriber exists.
 *
 * Sampling (`sample(now)`) runs on the handler scheduler's recurring tick every `sampleIntervalMs` while a request is in
 * flight or an origin is not `ok`: O(busy origins × paused bodies). Origins only, never paths or headers.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import {
  CHANNEL_NAMES,
  type CloseReason,
  type GetStatsOptions,
  OVERFLOW_ORIGIN,
  POOL_MONITOR_DEFAULTS,
  type OriginStats,
  type PoolEvent,
  type PoolEventListener,
  type PoolStats,
  type SaturationReport,
} from "@sockeye/pool-monitor";
import { timing, UNREAD_WHILE_QUEUED_SAMPLES } from "@sockeye/pool-monitor/internal";
import { HOLDING_LIST_TAG, OriginPoolState, type PoolRequestNode } from "./origin-pool-state";

const enqueuedChannel = diagnosticsChannel.channel(CHANNEL_NAMES.requestEnqueued);
const acquiredChannel = diagnosticsChannel.channel(CHANNEL_NAMES.requestAcquired);
const createdChannel = diagnosticsChannel.channel(CHANNEL_NAMES.connectionCreated);
const closedChannel = diagnosticsChannel.channel(CHANNEL_NAMES.connectionClosed);
const saturatedChannel = diagnosticsChannel.channel(CHANNEL_NAMES.poolSaturated);
const recoveredChannel = diagnosticsChannel.channel(CHANNEL_NAMES.poolRecovered);

/** How a tracked request ended. @internal */
export type RequestOutcome = "completed" | "failed" | "aborted" | "timed_out";

/** Options of the monitor (validated by the handler's config resolution). @internal */
export interface UndiciPoolMonitorOptions {
  sampleIntervalMs?: number;
  windowSamples?: number;
  warningLockoutMs?: number;
  unconsumedBodyMs?: number;
  maxOrigins?: number;
  onSaturation?: (report: SaturationReport) => void;
  onRecovery?: (report: SaturationReport) => void;
  /** Resolved at warning time (the logger can change). */
  warn: (message: string) => void;
  messagePrefix: string;
}

/**
 * Telemetry and saturation detection of an `UndiciHttpHandler`'s pools. Same `getStats()` / `subscribe()` contract
 * as `PoolMonitor`, so `registerPoolMetrics(handler.poolMonitor)` works unchanged.
 * @public
 */
export class UndiciPoolMonitor {
  private readonly origins = new Map<string, OriginPoolState>();
  private listeners: PoolEventListener[] = [];
  private distinct = 0;
  private nonOk = 0;
  private inFlight = 0;
  private destroyed = false;
  private readonly sampleIntervalMs: number;
  private readonly windowSamples: number;
  private readonly warningLockoutMs: number;
  private readonly unconsumedBodyMs: number;
  private readonly maxOrigins: number;

  /** @internal */
  constructor(private readonly options: UndiciPoolMonitorOptions) {
    this.sampleIntervalMs = options.sampleIntervalMs ?? POOL_MONITOR_DEFAULTS.sampleIntervalMs;
    this.windowSamples = options.windowSamples ?? POOL_MONITOR_DEFAULTS.windowSamples;
    this.warningLockoutMs = options.warningLockoutMs ?? POOL_MONITOR_DEFAULTS.warningLockoutMs;
    this.unconsumedBodyMs = options.unconsumedBodyMs ?? POOL_MONITOR_DEFAULTS.unconsumedBodyMs;
    this.maxOrigins = options.maxOrigins ?? POOL_MONITOR_DEFAULTS.maxOrigins;
  }

  /** True while a request is in flight or an origin awaits recovery: the handler keeps sampling. */
  get busy(): boolean {
    return !this.destroyed && (this.inFlight > 0 || this.nonOk > 0);
  }

  /** The state of `origin` (created on first use; beyond `maxOrigins`, the shared `_OTHER` entry). @internal */
  origin(origin: string): OriginPoolState {
    const o = this.origins.get(origin);
    if (o !== undefined) return o;
    let key = origin;
    if (this.distinct >= this.maxOrigins) {
      key = OVERFLOW_ORIGIN;
      const other = this.origins.get(key);
      if (other !== undefined) return other;
    } else {
      this.distinct++;
    }
    const created = new OriginPoolState(key, this.windowSamples, this.sampleIntervalMs);
    created.detector.since = timing.now();
    this.origins.set(key, created);
    return created;
  }

  /** The handler no longer gates its requests (a caller's dispatcher replaced its own): plain `waiting` lists. @internal */
  ungateAll(): void {
    for (const o of this.origins.values()) {
      o.gated = false;
      o.gateQueues.clear();
    }
  }

  /**
   * A request started (before dispatch). `gated`: the handler's `OriginGate` admits it (and queues it itself, then
   * calls `requestQueued`); otherwise it waits in `waiting` until undici gives it a connection. @internal
   */
  requestStarted(o: OriginPoolState, n: PoolRequestNode, gated: boolean): void {
    if (this.destroyed) return;
    o.started++;
    o.arrivals++;
    o.inFlight++;
    this.inFlight++;
    if (gated) return;
    const limit = o.maxSockets;
    const queued = limit !== null && o.holding + o.waiting.size >= limit;
    o.waiting.push(n);
    if (queued && this.wants(enqueuedChannel))
      this.emit({ type: "request:enqueued", origin: o.origin }, enqueuedChannel);
  }

  /** A gated request had to wait in its origin's `OriginGate` (it is in the gate's queue). @internal */
  requestQueued(o: OriginPoolState): void {
    if (this.destroyed) return;
    if (this.wants(enqueuedChannel)) this.emit({ type: "request:enqueued", origin: o.origin }, enqueuedChannel);
  }

  /** A gated request left its gate's queue for undici. @internal */
  requestDequeued(o: OriginPoolState, queueSize: number): void {
    if (queueSize < o.minQueued) o.minQueued = queueSize;
  }

  /** The request was given a connection (undici's `onRequestStart`); called once per request. @internal */
  requestAcquired(o: OriginPoolState, n: PoolRequestNode, now: number): void {
    if (this.destroyed) return;
    if (n.listed === 1) {
      o.waiting.remove(n);
      if (o.waiting.size < o.minQueued) o.minQueued = o.waiting.size;
    }
    n.acquiredAt = now;
    if (n.listed === 0) o.holders.push(n);
    o.holding++;
    o.acquisitions++;
    let reused = true;
    if (o.fresh > 0) {
      o.fresh--;
      reused = false;
    } else {
      o.reusedAcquisitions++;
    }
    const waitMs = now - n.startedAt;
    o.queueWait.record(waitMs);
    if (this.wants(acquiredChannel)) {
      const limit = o.maxSockets;
      this.emit(
        { type: "request:acquired", origin: o.origin, waitMs, reused, queued: limit !== null && waitMs >= 1 },
        acquiredChannel
      );
    }
  }

  /** The request stopped using its connection (response complete or failed). @internal */
  requestReleased(o: OriginPoolState, n: PoolRequestNode, now: number): void {
    if (this.destroyed || n.acquiredAt === 0) return;
    o.holders.remove(n);
    o.holding--;
    o.completions++;
    const held = now - n.acquiredAt;
    o.holdSumMs += held;
    if (held > o.holdMaxMs) o.holdMaxMs = held;
    o.holdCount++;
    n.acquiredAt = 0;
  }

  /** The request is over for the caller (settled and its body finished, or failed). @internal */
  requestClosed(o: OriginPoolState, n: PoolRequestNode, outcome: RequestOutcome): void {
    if (this.destroyed) return;
    if (n.listed === 1) {
      o.waiting.remove(n);
      if (o.waiting.size < o.minQueued) o.minQueued = o.waiting.size;
    } else if (n.listed === 2) {
      o.paused.remove(n);
    } else if (n.listed === HOLDING_LIST_TAG) {
      o.holders.remove(n);
    }
    o.inFlight--;
    this.inFlight--;
    if (outcome === "completed") o.completed++;
    else if (outcome === "failed") o.failed++;
    else if (outcome === "aborted") o.aborted++;
    else o.timedOut++;
  }

  /** The body's consumer stopped reading (backpressure) / started again. @internal */
  bodyPaused(o: OriginPoolState, n: PoolRequestNode, now: number): void {
    if (this.destroyed) return;
    o.holders.remove(n);
    if (n.listed !== 0) return;
    n.pausedAt = now;
    o.paused.push(n);
  }

  /** @internal */
  bodyResumed(o: OriginPoolState, n: PoolRequestNode): void {
    if (n.listed !== 2) return;
    o.paused.remove(n);
    if (n.acquiredAt !== 0) o.holders.push(n);
  }

  /** Whether events for `channel` must be built. @internal */
  wants(channel: diagnosticsChannel.Channel): boolean {
    return this.listeners.length > 0 || channel.hasSubscribers;
  }

  /** Delivers an event to listeners (a throwing one is ignored) and its channel. @internal */
  emit(event: PoolEvent, channel: diagnosticsChannel.Channel): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener must not break the request path.
      }
    }
    if (channel.hasSubscribers) channel.publish(event);
  }

  /** Connection events from the tracked connector. @internal */
  connectionCreated(o: OriginPoolState, connectMs: number, tlsMs: number | null): void {
    if (this.wants(createdChannel))
      this.emit({ type: "connection:created", origin: o.origin, connectMs, tlsMs }, createdChannel);
  }

  /** @internal */
  connectionClosed(o: OriginPoolState, ageMs: number, reason: CloseReason): void {
    if (this.wants(closedChannel)) {
      this.emit({ type: "connection:closed", origin: o.origin, ageMs, requests: 0, reason }, closedChannel);
    }
  }

  /** Receives every pool event; returns the unsubscribe function. Same contract as `PoolMonitor.subscribe()`. */
  subscribe(listener: PoolEventListener): () => void {
    if (typeof listener !== "function") {
      throw new TypeError(
        `@sockeye/undici-http-handler: subscribe(listener) expects a function; received ${typeof listener}.`
      );
    }
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** One detector sample of every busy origin. @internal */
  sample(now: number): void {
    if (this.destroyed) return;
    for (const o of this.origins.values()) this.sampleOrigin(o, now);
  }

  private sampleOrigin(o: OriginPoolState, now: number): void {
    const detector = o.detector;
    if (o.inFlight === 0 && detector.state === "ok") {
      if (detector.needsSamples) detector.resetWindow();
      o.resetSampleCounters();
      return;
    }
    const s = o.sample;
    o.refreshPools();
    // Per-pool evidence (an `_OTHER` entry has one pool per overflowed origin): when some pool is full with a queue,
    // the sample covers those pools only; else the entry as a whole. Completions, arrivals, hold times, queue ages
    // and unconsumed bodies stay the entry's totals: the request bookkeeping is per entry, not per pool.
    const evidence = o.poolEvidence();
    let queued: number;
    if (evidence !== undefined) {
      queued = evidence.queued;
      s.active = evidence.active;
      s.maxSockets = evidence.maxSockets;
    } else {
      queued = o.queued;
      s.active = o.active;
      s.maxSockets = o.maxSockets ?? Number.POSITIVE_INFINITY;
    }
    const unconsumed = o.unconsumed(now, this.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * this.sampleIntervalMs);
    o.activeAges(now, s);
    s.now = now;
    s.queued = queued;
    s.minQueued = Math.min(o.minQueued, queued);
    s.completions = o.completions;
    s.arrivals = o.arrivals;
    s.holdTimeSumMs = o.holdSumMs;
    s.holdCount = o.holdCount;
    (s as { holdTimeMaxMs?: number }).holdTimeMaxMs = o.holdMaxMs;
    s.oldestQueuedMs = o.oldestQueuedMs(now);
    s.unconsumedCount = unconsumed.count;
    s.unconsumedOldestMs = unconsumed.oldestMs;
    const report = detector.update(s);
    o.resetSampleCounters();
    if (report !== undefined) {
      this.deliver(o, report, now);
    } else if (
      detector.state !== "ok" &&
      now - o.lastWarnAt >= this.warningLockoutMs &&
      queued > 0 &&
      s.active >= s.maxSockets
    ) {
      const reminder = detector.assess();
      if (reminder !== undefined) this.log(o, reminder, now);
    }
  }

  private deliver(o: OriginPoolState, report: SaturationReport, now: number): void {
    if (report.state === "ok") {
      this.nonOk--;
      o.recommendedMaxSockets = null;
      if (this.wants(recoveredChannel))
        this.emit({ type: "pool:recovered", origin: o.origin, report }, recoveredChannel);
      this.call(this.options.onRecovery, "onRecovery", report);
      return;
    }
    if (report.previousState === "ok") this.nonOk++;
    o.recommendedMaxSockets = report.recommendedMaxSockets;
    this.log(o, report, now);
    if (this.wants(saturatedChannel)) this.emit({ type: "pool:saturated", origin: o.origin, report }, saturatedChannel);
    this.call(this.options.onSaturation, "onSaturation", report);
  }

  private log(o: OriginPoolState, report: SaturationReport, now: number): void {
    if (now - o.lastWarnAt < this.warningLockoutMs) return;
    o.lastWarnAt = now;
    try {
      this.options.warn(this.options.messagePrefix + report.message);
    } catch {
      // A broken logger must not break sampling.
    }
  }

  private call(fn: ((r: SaturationReport) => void) | undefined, name: string, report: SaturationReport): void {
    if (fn === undefined) return;
    try {
      fn(report);
    } catch (err) {
      try {
        this.options.warn(
          `${this.options.messagePrefix}${name} callback threw ${(err as Error)?.name ?? typeof err}; the monitor continues.`
        );
      } catch {
        // ignore
      }
    }
  }

  /**
   * JSON-serialisable snapshot of every origin, in the `PoolStats` shape of `@sockeye/pool-monitor`.
   * `sockets.reusedAcquisitions` counts every acquisition but the first one of each new connection.
   */
  getStats(options?: GetStatsOptions): PoolStats {
    const now = timing.now();
    const origins: OriginStats[] = [];
    const totals = { active: 0, idle: 0, queued: 0, inFlight: 0, saturatedOrigins: 0 };
    if (!this.destroyed) {
      for (const o of this.origins.values()) {
        const s = this.originStats(o, now, options?.resetSummaries === true);
        origins.push(s);
        totals.active += s.active;
        totals.idle += s.idle;
        totals.queued += s.queued;
        totals.inFlight += s.inFlight;
        if (s.saturation.state !== "ok") totals.saturatedOrigins++;
      }
    }
    return { takenAt: now, origins, totals };
  }

  /** Stops all tracking; later snapshots are empty. */
  destroy(): void {
    this.destroyed = true;
    this.listeners = [];
    this.origins.clear();
    this.inFlight = 0;
    this.nonOk = 0;
  }

  private originStats(o: OriginPoolState, now: number, reset: boolean): OriginStats {
    const d = o.detector;
    o.refreshPools();
    const unconsumed = o.unconsumed(now, this.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * this.sampleIntervalMs);
    const stats: OriginStats = {
      origin: o.origin,
      maxSockets: o.maxSockets,
      active: o.active,
      idle: o.idle,
      queued: o.queued,
      oldestQueuedMs: round(o.oldestQueuedMs(now)),
      inFlight: o.inFlight,
      requests: {
        started: o.started,
        completed: o.completed,
        failed: o.failed,
        aborted: o.aborted,
        timedOut: o.timedOut,
      },
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
      unconsumed: { count: unconsumed.count, oldestMs: round(unconsumed.oldestMs) },
      // Detector fields read by name, so the snapshot follows the detector's current shape.
      saturation: {
        state: d.state,
        since: d.since,
        cause: d.cause,
        trigger: d.trigger,
        recommendedMaxSockets:
          (d as { recommendedMaxSockets?: number | null }).recommendedMaxSockets ?? o.recommendedMaxSockets,
        clearSamples: (d as { recoveryStreak?: number }).recoveryStreak ?? 0,
        episodes: d.episodes,
      } as OriginStats["saturation"],
    };
    if (reset) {
      o.queueWait.reset();
      o.connect.reset();
      o.tls.reset();
      o.connectionAge.reset();
    }
    return stats;
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
