/**
 * `PoolMonitor`: socket-pool telemetry and saturation detection for any `http.Agent` / `https.Agent`,
 * built on public Node APIs only (agent maps, request and socket events; no patching).
 *
 * Data flow:
 * - `trackRequest()` (hot path, once per request) hangs a small state object on the request and
 *   registers four shared module-level listeners (see `request-listeners.ts` for per-request costs);
 *   `attachRequest()` returns that state instead, for an embedder that forwards the request's events.
 * - Listeners update per-origin counters and histograms as the request gets a socket, a response and
 *   closes; sockets are followed from first sight to `'close'` (connect/TLS timings, close reason).
 * - `sample(now)` (once per `sampleIntervalMs`, from the embedding handler's shared tick or from the
 *   monitor's own lazy interval) reads each busy origin's agent maps, feeds its `SaturationDetector`
 *   and delivers transitions (logger, callbacks, `subscribe()` listeners, diagnostics channels).
 *   Cost: O(busy origins × (agent names + open responses)); idle origins cost one branch.
 * - `getStats()` builds a JSON snapshot on demand; nothing is precomputed for it.
 * - Origins are keyed `scheme://host:port` (`normalize-origin.ts`): a caller's `url.href` is reduced to
 *   its origin before anything is stored, so paths and presigned queries never reach stats or events.
 * - `configure()` swaps the resolved options at runtime; detectors are re-tuned in place (their window
 *   is cleared, episodes are kept), so a new sample interval never makes every sample a gap.
 *
 * Standalone mode (`start()`): one `unref()`'d interval owned by the monitor, created on the first
 * `trackRequest()` and cleared at the first tick that finds the monitor not `busy`, so an idle
 * process has no timer and no wake-ups.
 */
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { poolRecoveredChannel, poolSaturatedChannel } from "./diagnostics";
import { LazyInterval } from "./lazy-interval";
import {
  type PoolMonitorOptions,
  type ResolvedPoolMonitorOptions,
  resolvePoolMonitorOptions,
} from "./pool-monitor-options";
import type { OriginStats, PoolEventListener, PoolStats, SaturationReport, UnpooledStats } from "./pool-stats";
import { normalizeOrigin } from "./normalize-origin";
import { attachRequest, attachUnpooled, Delivery, noteRequestOutcome, requestEventHandlers } from "./request-listeners";
import { timing } from "./timing";
import {
  kRequestState,
  MonitorCore,
  OriginState,
  type RequestTracking,
  socketStateOf,
  type TrackedRequest,
} from "./tracking-state";

/** Origin under which requests beyond `maxOrigins` distinct origins are aggregated. @public */
export const OVERFLOW_ORIGIN = "_OTHER";

/**
 * Options of `PoolMonitor.getStats()`.
 * @public
 */
export interface GetStatsOptions {
  /** Reset the duration histograms after reading them, so the next snapshot covers only the time since. @defaultValue false */
  resetSummaries?: boolean;
}

/**
 * Socket-pool telemetry and saturation detection for Node `http.Agent` / `https.Agent`.
 *
 * @example
 * ```ts
 * const monitor = new PoolMonitor({ logger: console });
 * monitor.start(); // standalone: the monitor samples on its own unref'd interval
 * const startedAt = performance.now();
 * const req = http.request(url, { agent });
 * monitor.trackRequest(req, agent, "http://127.0.0.1:8080", startedAt);
 * ```
 * @public
 */
export class PoolMonitor {
  private options: ResolvedPoolMonitorOptions;
  private readonly core = new MonitorCore();
  private readonly origins = new Map<string, OriginState>();
  private distinctOrigins = 0;
  private nonOk = 0;
  private standalone = false;
  /** Standalone mode's lazy interval (see `lazy-interval.ts`); created on demand, never while idle. */
  private ticker: LazyInterval | undefined = undefined;

  /**
   * @param options - see {@link PoolMonitorOptions}; validated here (a `TypeError`/`RangeError` names the option,
   * the value received and the allowed range).
   */
  constructor(options?: PoolMonitorOptions) {
    this.options = resolvePoolMonitorOptions(options);
  }

  /**
   * Starts tracking one request. Call it right after `http.request()` / `https.request()` returned (before any
   * await), so that a request that had to queue is still the last entry of `agent.requests`.
   *
   * @param req - the request just created.
   * @param agent - the agent it was created with.
   * @param origin - `scheme://host:port` (cheapest), or any absolute URL, which is reduced to `scheme://host:port`
   *   (see `normalizeOrigin()`): only the origin is ever stored or reported, never paths, queries or headers.
   * @param startedAt - `timing.now()` / `performance.now()` ms taken when the caller began handling the request;
   *   queue wait is measured from it.
   * @param listen - `true` (default): the monitor adds its own request listeners. `false`: the caller already
   *   listens to the request and forwards `'socket'`, `'response'`, `'error'` and `'close'` through
   *   `requestSocket()`, `requestResponse()`, `requestError()` and `requestClosed()` (saves four listener
   *   registrations per request on the hot path).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  trackRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number, listen = true): void {
    const core = this.core;
    if (core.destroyed) return;
    const o = this.origins.get(origin) ?? this.addOrigin(origin);
    attachRequest(
      core,
      req as TrackedRequest,
      agent,
      o,
      startedAt,
      listen ? Delivery.Listen : Delivery.ForwardByRequest
    );
    if (this.standalone) this.ensureTicking();
  }

  /**
   * Starts tracking one request as `trackRequest(req, agent, origin, startedAt, false)` does, for an embedder with its
   * own per-request object: nothing is added to the request; the returned handle is the request's state, to keep and
   * forward the request's `'socket'`, `'response'`, `'error'` and `'close'` events (and `noteOutcome()`) to. Call it
   * right after `http.request()` returned, as `trackRequest()`.
   *
   * @param req - the request just created (compared with the agent's queue, never stored).
   * @param agent - the agent it was created with.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - as for `trackRequest()`.
   * @returns the handle, or `undefined` when the monitor is destroyed (nothing to forward then).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number): RequestTracking | undefined {
    const core = this.core;
    if (core.destroyed) return undefined;
    const o = this.origins.get(origin) ?? this.addOrigin(origin);
    const st = attachRequest(core, req as TrackedRequest, agent, o, startedAt, Delivery.Handle);
    if (this.standalone) this.ensureTicking();
    return st;
  }

  /**
   * Starts tracking a request sent outside the pool: on a one-off agent with no socket limit, e.g. the handler's
   * `Expect: 100-continue` requests. It is counted in the origin's `unpooled` block of `getStats()` (started, in
   * flight, outcomes, TCP connect time) and stays out of the pool gauges (`active`, `queued`, `inFlight`,
   * `requests`, `sockets`, histograms) and the saturation detector. Forward its events (`requestSocket()`,
   * `requestResponse()`, `requestError()`, `requestClosed()`) and outcome (`noteOutcome()`) as for `trackRequest()`.
   *
   * @param req - the request just created.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - `timing.now()` ms when the caller began handling the request.
   * @param listen - as for `trackRequest()`: `false` when the caller forwards the request's events itself.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  trackUnpooledRequest(req: ClientRequest, origin: string, startedAt: number, listen = true): void {
    const core = this.core;
    if (core.destroyed) return;
    const o = this.origins.get(origin) ?? this.addOrigin(origin);
    attachUnpooled(core, req as TrackedRequest, o, startedAt, listen ? Delivery.Listen : Delivery.ForwardByRequest);
  }

  /**
   * `trackUnpooledRequest()` for an embedder with its own per-request object, as `attachRequest()` is for
   * `trackRequest()`: nothing is added to the request; forward its events to the returned handle.
   *
   * @param req - the request just created.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - `timing.now()` ms when the caller began handling the request.
   * @returns the handle, or `undefined` when the monitor is destroyed.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachUnpooledRequest(req: ClientRequest, origin: string, startedAt: number): RequestTracking | undefined {
    const core = this.core;
    if (core.destroyed) return undefined;
    const o = this.origins.get(origin) ?? this.addOrigin(origin);
    return attachUnpooled(core, req as TrackedRequest, o, startedAt, Delivery.Handle);
  }

  /**
   * Applies options at runtime, validated as in the constructor (a bad value throws and changes nothing). Keys absent
   * from `options` keep their current value; a key present with the value `undefined` goes back to its default (or
   * removes a callback / the logger). Detectors are re-tuned in place: a new `sampleIntervalMs` or `windowSamples`
   * clears their sample window (so no sample counts as a gap) but keeps the current episodes. A new `maxOrigins`
   * applies to origins seen from now on. In standalone mode the interval is re-created with the new period.
   */
  configure(options: PoolMonitorOptions): void {
    if (options === null || typeof options !== "object") {
      throw new TypeError(
        `@sockeye/pool-monitor: configure(options) expects an object; received ${options === null ? "null" : typeof options}.`
      );
    }
    const current = this.options;
    const merged: Record<string, unknown> = { ...current };
    for (const key of Object.keys(options)) merged[key] = (options as Record<string, unknown>)[key];
    const next = resolvePoolMonitorOptions(merged as PoolMonitorOptions);
    this.options = next;
    const retune =
      next.sampleIntervalMs !== current.sampleIntervalMs ||
      next.windowSamples !== current.windowSamples ||
      next.stallAfterMs !== current.stallAfterMs;
    if (retune) {
      for (const o of this.origins.values()) {
        o.detector.reconfigure({
          windowSamples: next.windowSamples,
          sampleIntervalMs: next.sampleIntervalMs,
          stallAfterMs: next.stallAfterMs,
        });
      }
    }
    if (next.sampleIntervalMs !== current.sampleIntervalMs && this.ticker !== undefined) {
      this.stopTicker();
      this.ticker = undefined; // the next ensureTicking() creates it with the new period
      if (this.standalone && this.busy) this.ensureTicking();
    }
  }

  /** Forwarded `'socket'` event of a request tracked with `listen = false`. */
  requestSocket(req: ClientRequest, socket: Socket): void {
    requestEventHandlers.socket.call(req as TrackedRequest, socket);
  }

  /** Forwarded `'response'` event of a request tracked with `listen = false`. */
  requestResponse(req: ClientRequest, res: IncomingMessage): void {
    requestEventHandlers.response.call(req as TrackedRequest, res);
  }

  /** Forwarded `'error'` event of a request tracked with `listen = false` (call it before handling the error). */
  requestError(req: ClientRequest): void {
    requestEventHandlers.error.call(req as TrackedRequest);
  }

  /** Forwarded `'close'` event of a request tracked with `listen = false`. */
  requestClosed(req: ClientRequest): void {
    requestEventHandlers.close.call(req as TrackedRequest);
  }

  /**
   * Tells the monitor why the caller destroyed a request, so it is counted as aborted / timed out rather than
   * failed (and its socket's close reason says so). May be called before or after the request closed.
   */
  noteOutcome(req: ClientRequest, outcome: "aborted" | "timed_out"): void {
    const st = (req as TrackedRequest)[kRequestState];
    if (st !== undefined && st.core === this.core) noteRequestOutcome(st, outcome);
  }

  /**
   * Tells the monitor that the caller is closing `socket` on purpose (a pooled socket idle too long, or older than
   * its allowed lifetime), so its close is counted under that reason. Unknown sockets are ignored.
   */
  noteSocketClose(socket: Socket, reason: "idle_timeout" | "max_lifetime"): void {
    const ss = socketStateOf(socket);
    if (ss !== undefined && ss.core === this.core && !ss.closed) ss.closedBy = reason;
  }

  /**
   * One sampling step: for every origin with requests in flight (or a detector not yet recovered), reads the
   * agent maps, feeds the saturation detector and delivers saturation / recovery. Call it once per
   * `sampleIntervalMs`; each call is one detector sample.
   *
   * @param now - `timing.now()` / `performance.now()` ms.
   */
  sample(now: number): void {
    if (this.core.destroyed) return;
    for (const o of this.origins.values()) this.sampleOrigin(o, now);
  }

  /** The resolved `sampleIntervalMs` (ms): the period at which an embedding handler should call `sample()`. */
  get sampleIntervalMs(): number {
    return this.options.sampleIntervalMs;
  }

  /**
   * True while a tracked request is in flight (queued, on a socket, or its body still open) or a detector is
   * saturated/stalled and still needs samples to report recovery. An embedding handler keeps ticking while busy.
   */
  get busy(): boolean {
    return this.core.inFlight > 0 || this.nonOk > 0;
  }

  /** JSON-serialisable snapshot of every origin. Cost: O(origins × (agent names + open responses)). */
  getStats(options?: GetStatsOptions): PoolStats {
    const now = timing.now();
    const origins: OriginStats[] = [];
    const totals = { active: 0, idle: 0, queued: 0, inFlight: 0, saturatedOrigins: 0 };
    if (!this.core.destroyed) {
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

  /**
   * Receives every pool event of this monitor (the same objects published on the `sockeye:*` diagnostics
   * channels). Events are built only while at least one listener or channel subscriber exists.
   * @returns a function that removes the listener.
   */
  subscribe(listener: PoolEventListener): () => void {
    if (typeof listener !== "function") {
      throw new TypeError(
        `@sockeye/pool-monitor: subscribe(listener) expects a function; received ${typeof listener}.`
      );
    }
    this.core.listeners = [...this.core.listeners, listener];
    return () => {
      this.core.listeners = this.core.listeners.filter((l) => l !== listener);
    };
  }

  /**
   * Standalone mode: the monitor samples itself every `sampleIntervalMs` on a lazy, `unref()`'d interval that
   * exists only while the monitor is busy (created by `trackRequest()`, cleared by the first idle tick).
   */
  start(): void {
    if (this.core.destroyed) return;
    this.standalone = true;
    if (this.busy) this.ensureTicking();
  }

  /** Leaves standalone mode and clears the interval. Tracking continues; `sample()` can still be called. */
  stop(): void {
    this.standalone = false;
    this.stopTicker();
  }

  /** Clears the interval and all state. Later calls are no-ops; requests still in flight are ignored. */
  destroy(): void {
    this.stop();
    this.core.destroyed = true;
    this.core.inFlight = 0;
    this.core.listeners = [];
    this.origins.clear();
    this.nonOk = 0;
  }

  private readonly onTick = (): void => {
    this.sample(timing.now());
    if (!this.busy) this.stopTicker();
  };

  private ensureTicking(): void {
    // LazyInterval also recreates the interval when the timer implementation changed (fake <-> real timers).
    this.ticker ??= new LazyInterval(this.onTick, this.options.sampleIntervalMs);
    this.ticker.ensure();
  }

  private stopTicker(): void {
    this.ticker?.stop();
  }

  private addOrigin(raw: string): OriginState {
    let key = normalizeOrigin(raw);
    const known = this.origins.get(key);
    if (known !== undefined) return known;
    const overflow = this.distinctOrigins >= this.options.maxOrigins;
    if (overflow) {
      key = OVERFLOW_ORIGIN;
      const other = this.origins.get(key);
      if (other !== undefined) return other;
    } else {
      this.distinctOrigins++;
    }
    const options = this.options;
    const o = new OriginState(key, options.windowSamples, options.sampleIntervalMs, options.stallAfterMs);
    o.detector.since = timing.now();
    this.origins.set(key, o);
    return o;
  }

  private sampleOrigin(o: OriginState, now: number): void {
    const detector = o.detector;
    if (o.inFlight === 0 && detector.state === "ok") {
      if (detector.needsSamples) detector.resetWindow();
      // Requests that completed since the last sample still tell how long this origin's requests hold a socket.
      if (o.holdCount > 0 && o.holdMaxMs > detector.expectedHoldMs) detector.expectedHoldMs = o.holdMaxMs;
      o.resetSampleCounters();
      return;
    }
    o.poll(this.core, now);
    o.pollUnconsumed(now, this.options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * this.options.sampleIntervalMs);
    // Per-link evidence: the links that are full with a queue when there are any, else the origin's sums.
    const e = o.evidence;
    const s = o.sample;
    s.now = now;
    s.active = e.active;
    s.maxSockets = e.maxSockets;
    s.queued = e.queued;
    s.minQueued = Math.min(o.minQueued, e.queued);
    s.completions = e.completions;
    s.arrivals = o.arrivals;
    s.holdTimeSumMs = o.holdSumMs;
    s.holdCount = o.holdCount;
    s.holdTimeMaxMs = o.holdMaxMs;
    s.oldestActiveMs = e.oldestActive;
    s.activeAgeSumMs = e.ageSum;
    s.activeAgeCount = e.ageCount;
    s.oldestQueuedMs = e.oldestQueued;
    s.unconsumedCount = o.unconsumedCount;
    s.unconsumedOldestMs = o.unconsumedOldestMs;
    const report = detector.update(s);
    o.resetSampleCounters();
    if (report !== undefined) {
      this.deliver(o, report, now);
    } else if (
      detector.state !== "ok" &&
      now - o.lastWarnAt >= this.options.warningLockoutMs &&
      // Remind only while the pool is still saturated (or pinned by unread bodies) now, not while a drained queue
      // waits out its recovery streak.
      ((s.queued > 0 && s.active >= s.maxSockets) || (detector.cause === "unconsumed_bodies" && o.unconsumedCount > 0))
    ) {
      const reminder = detector.assess();
      if (reminder !== undefined) this.log(o, reminder, now);
    }
  }

  private deliver(o: OriginState, report: SaturationReport, now: number): void {
    const options = this.options;
    if (report.state === "ok") {
      this.nonOk--;
      o.lastWarnCause = null;
      if (this.core.wants(poolRecoveredChannel)) {
        this.core.emit({ type: "pool:recovered", origin: o.origin, report }, poolRecoveredChannel);
      }
      this.call(options.onRecovery, "onRecovery", report);
      return;
    }
    if (report.previousState === "ok") this.nonOk++;
    this.log(o, report, now);
    if (this.core.wants(poolSaturatedChannel)) {
      this.core.emit({ type: "pool:saturated", origin: o.origin, report }, poolSaturatedChannel);
    }
    this.call(options.onSaturation, "onSaturation", report);
  }

  /** Logs a non-ok report; the lockout holds back repeats of the last logged cause, never a different cause. */
  private log(o: OriginState, report: SaturationReport, now: number): void {
    if (report.cause === o.lastWarnCause && now - o.lastWarnAt < this.options.warningLockoutMs) return;
    o.lastWarnAt = now;
    o.lastWarnCause = report.cause;
    const logger = this.options.logger;
    if (logger === undefined || typeof logger.warn !== "function") return;
    try {
      logger.warn(this.options.messagePrefix + report.message);
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
        this.options.logger?.warn?.(
          `${this.options.messagePrefix}${name} callback threw ${(err as Error)?.name ?? typeof err}; the monitor continues.`
        );
      } catch {
        // ignore
      }
    }
  }

  private originStats(o: OriginState, now: number, reset: boolean): OriginStats {
    o.poll(this.core, now);
    o.pollUnconsumed(now, this.options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * this.options.sampleIntervalMs);
    const d = o.detector;
    const limited = o.maxSockets > 0 && o.maxSockets !== Number.POSITIVE_INFINITY;
    const stats: OriginStats = {
      origin: o.origin,
      maxSockets: limited ? o.maxSockets : null,
      active: o.active,
      idle: o.idle,
      queued: o.queued,
      oldestQueuedMs: round(o.oldestQueuedMs),
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
      unconsumed: { count: o.unconsumedCount, oldestMs: round(o.unconsumedOldestMs) },
      saturation: {
        state: d.state,
        since: d.since,
        cause: d.cause,
        trigger: d.trigger,
        recommendedMaxSockets: d.recommendedMaxSockets,
        clearSamples: d.recoveryStreak,
        episodes: d.episodes,
      },
      unpooled: unpooledStats(o, reset),
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

/**
 * While requests of an origin are queued, a response body the caller is not reading counts as unconsumed after this many
 * sample periods (when shorter than `unconsumedBodyMs`). @public
 */
export const UNREAD_WHILE_QUEUED_SAMPLES = 2;

function unpooledStats(o: OriginState, reset: boolean): UnpooledStats {
  const u = o.unpooled;
  if (u === undefined) {
    return {
      started: 0,
      inFlight: 0,
      completed: 0,
      failed: 0,
      aborted: 0,
      timedOut: 0,
      connectMs: { count: 0, p50: 0, p90: 0, p99: 0, max: 0 },
    };
  }
  const stats: UnpooledStats = {
    started: u.started,
    inFlight: u.inFlight,
    completed: u.completed,
    failed: u.failed,
    aborted: u.aborted,
    timedOut: u.timedOut,
    connectMs: u.connect.summary(),
  };
  if (reset) u.connect.reset();
  return stats;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
