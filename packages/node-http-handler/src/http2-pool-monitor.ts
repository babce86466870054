/**
 * Http2PoolMonitor: session-pool telemetry of one `NodeHttp2Handler`, in the `PoolStats` shape of
 * `@sockeye/pool-monitor` (so `registerPoolMetrics()` from `@sockeye/opentelemetry` and dashboards built for the
 * HTTP/1.1 handler read it unchanged), extended with an `http2` block per origin.
 *
 * Mapping onto the shared shape: a session is a connection (`active` = sessions carrying at least one stream,
 * `idle` = open sessions carrying none, `maxSockets` = `maxSessionsPerOrigin`), a stream is a request (`queued` =
 * streams waiting for a stream slot or, with `disableConcurrentStreams`, for an isolated session below
 * `maxIsolatedSessionsPerOrigin`; `inFlight` = streams open or waiting). `connectMs` is TCP connect time and
 * `tlsMs` the TLS handshake plus the server's SETTINGS. Close reasons map onto `CloseReason` (`goaway` →
 * `server_closed`, `connect_timeout` → `connect_error`, `idle_timeout` → `idle_timeout`); the exact HTTP/2 reason
 * and GOAWAY codes are in `http2.closed` / `http2.goawayCodes`.
 *
 * Events: the `PoolEvent` objects of the HTTP/1.1 monitor (`request:enqueued`, `request:acquired`,
 * `connection:created`, `connection:closed`, `pool:saturated`, `pool:recovered`) go to `subscribe()` listeners and
 * to the same `sockeye:*` `diagnostics_channel` channels, only when someone listens (one `hasSubscribers` read
 * otherwise). Origins only, never paths, headers or bodies.
 *
 * Saturation: one `SaturationDetector` per origin, fed on the shared tick once per `sampleIntervalMs` (1 s) while
 * streams are in flight. Its "sockets" are stream slots: `active` = streams open on pooled sessions, `maxSockets` =
 * the sum of the sessions' stream limits once `maxSessionsPerOrigin` sessions exist (unbounded before, so an origin
 * that can still open a session is never saturated), plus one slot per bounded isolated session once
 * `maxIsolatedSessionsPerOrigin` of them are open (unbounded before); `queued` = waiting streams of both kinds. The
 * cause names the bound to raise. A drained batch only shrinks the queue, so it never warns.
 */
import {
  CHANNEL_NAMES,
  type CloseReason,
  type Http2CloseReason,
  type Http2SessionStats,
  type OriginStats,
  type PoolEvent,
  type PoolEventListener,
  type PoolStats,
  type SaturationReport,
} from "@sockeye/pool-monitor";
import { SaturationDetector } from "@sockeye/pool-monitor/internal";
import diagnosticsChannel from "node:diagnostics_channel";
import type { Http2Origin } from "./http2-origin";
import { summarize } from "./http2-origin-counters";
import { type Http2SessionEntry, SESSION_CONNECTING, SESSION_READY } from "./http2-session-entry";
import type { Http2SessionPool } from "./http2-session-pool";

const channels = {
  enqueued: diagnosticsChannel.channel(CHANNEL_NAMES.requestEnqueued),
  acquired: diagnosticsChannel.channel(CHANNEL_NAMES.requestAcquired),
  created: diagnosticsChannel.channel(CHANNEL_NAMES.connectionCreated),
  closed: diagnosticsChannel.channel(CHANNEL_NAMES.connectionClosed),
  saturated: diagnosticsChannel.channel(CHANNEL_NAMES.poolSaturated),
  recovered: diagnosticsChannel.channel(CHANNEL_NAMES.poolRecovered),
};

const CLOSE_REASON_MAP: Record<Http2CloseReason, CloseReason> = {
  connect_timeout: "connect_error",
  connect_error: "connect_error",
  goaway: "server_closed",
  idle_timeout: "idle_timeout",
  error: "error",
  server_closed: "server_closed",
  local: "local",
};

/** Milliseconds between two saturation samples of an origin. @internal */
export const HTTP2_SAMPLE_INTERVAL_MS = 1000;

const STATE_NAMES = ["connecting", "ready", "closing", "closing"] as const;

/**
 * Telemetry source of a `NodeHttp2Handler`: `getStats()` and `subscribe()`, like `PoolMonitor`.
 * @public
 */
export class Http2PoolMonitor {
  private readonly listeners = new Set<PoolEventListener>();
  private readonly detectors = new Map<Http2Origin, SaturationDetector>();
  private lastSampleAt = Number.NEGATIVE_INFINITY;

  /** @internal */
  constructor(
    private readonly pool: Http2SessionPool,
    /** Whether saturation detection runs (`socketMonitor: "interval"`). @internal */
    public detect: boolean
  ) {}

  /**
   * A plain, JSON-serialisable snapshot, one entry per origin (see the header for the HTTP/2 mapping).
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them.
   */
  getStats(options?: { resetSummaries?: boolean }): PoolStats {
    const now = this.pool.now();
    const reset = options?.resetSummaries === true;
    const origins: OriginStats[] = [];
    const totals = { active: 0, idle: 0, queued: 0, inFlight: 0, saturatedOrigins: 0 };
    const maxSessions = this.pool.config?.maxSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    const cap = this.pool.config?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
    for (const origin of this.pool.origins.values()) {
      const c = origin.counters;
      if (c === undefined) continue;
      let active = 0;
      let idle = 0;
      let streams = 0;
      let isolated = 0;
      let pooled = 0;
      let peerMin = Number.POSITIVE_INFINITY;
      const sessions: Http2SessionStats[] = [];
      for (const entry of origin.open) {
        if (entry.active > 0) active++;
        else idle++;
        streams += entry.active;
        if (entry.isolated) isolated++;
        else pooled++;
        if (entry.state === SESSION_READY && entry.peerMaxConcurrentStreams !== undefined) {
          peerMin = Math.min(peerMin, entry.peerMaxConcurrentStreams);
        }
        sessions.push({
          id: entry.id,
          state: STATE_NAMES[entry.state] ?? "closing",
          isolated: entry.isolated,
          activeStreams: entry.active,
          maxActiveStreams: entry.maxActive,
          streams: entry.streams,
          peerMaxConcurrentStreams: entry.peerMaxConcurrentStreams ?? null,
          streamLimit: Number.isFinite(entry.streamLimit) ? entry.streamLimit : null,
          ageMs: Math.round(now - entry.createdAt),
        });
      }
      const head = origin.oldestWaiting;
      const oldestQueuedMs = head === undefined ? 0 : Math.round(now - head.startedAt);
      const waiting = origin.waiting;
      const detector = this.detectors.get(origin);
      const state = detector?.state ?? "ok";
      if (state !== "ok") totals.saturatedOrigins++;
      const closed: Record<CloseReason, number> = {
        connect_error: 0,
        aborted: 0,
        timed_out: 0,
        error: 0,
        timeout: 0,
        server_closed: 0,
        idle_timeout: 0,
        max_lifetime: 0,
        local: 0,
      };
      for (const [reason, n] of Object.entries(c.closed) as [Http2CloseReason, number][]) {
        closed[CLOSE_REASON_MAP[reason]] += n;
      }
      const inFlight = streams + waiting;
      origins.push({
        origin: origin.name,
        maxSockets: Number.isFinite(maxSessions) ? maxSessions : null,
        active,
        idle,
        queued: waiting,
        oldestQueuedMs,
        inFlight,
        requests: {
          started: c.started,
          completed: c.completed,
          failed: c.failed,
          aborted: c.aborted,
          timedOut: c.timedOut,
        },
        sockets: {
          created: c.sessionsCreated,
          closed,
          acquisitions: c.acquisitions,
          reusedAcquisitions: c.reusedAcquisitions,
          errors: c.sessionErrors,
        },
        queueWaitMs: summarize(c.queueWait, reset),
        connectMs: summarize(c.connect, reset),
        tlsMs: summarize(c.tls, reset),
        connectionAgeMs: summarize(c.sessionAge, reset),
        unconsumed: { count: 0, oldestMs: 0 },
        saturation: {
          state,
          since: detector?.since ?? 0,
          cause: detector?.cause ?? null,
          trigger: detector?.trigger ?? null,
          recommendedMaxSockets: null,
          clearSamples: (detector as { recoveryStreak?: number } | undefined)?.recoveryStreak ?? 0,
          episodes: detector?.episodes ?? 0,
        },
        http2: {
          sessionsOpen: pooled,
          isolatedSessionsOpen: isolated,
          activeStreams: streams,
          streamsWaiting: waiting,
          maxSessions: Number.isFinite(maxSessions) ? maxSessions : null,
          maxConcurrentStreams: Number.isFinite(cap) ? cap : null,
          peerMaxConcurrentStreams: Number.isFinite(peerMin) ? peerMin : null,
          sessions,
          sessionsCreated: c.sessionsCreated,
          closed: { ...c.closed },
          goawayCodes: { ...c.goawayCodes },
        },
      });
      totals.active += active;
      totals.idle += idle;
      totals.queued += waiting;
      totals.inFlight += inFlight;
    }
    return { takenAt: now, origins, totals };
  }

  /** Subscribes to pool events; returns the unsubscribe function. A throwing listener is ignored. */
  subscribe(listener: PoolEventListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Whether the tick must keep sampling (an origin is not `ok` and needs samples to recover). @internal */
  get busy(): boolean {
    if (!this.detect) return false;
    for (const detector of this.detectors.values()) if (detector.state !== "ok") return true;
    return false;
  }

  /** @internal */
  tick(now: number): void {
    if (!this.detect || now - this.lastSampleAt < HTTP2_SAMPLE_INTERVAL_MS) return;
    this.lastSampleAt = now;
    const maxSessions = this.pool.config?.maxSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    const maxIsolated = this.pool.config?.maxIsolatedSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    for (const origin of this.pool.origins.values()) {
      const c = origin.counters;
      if (c === undefined) continue;
      let active = 0;
      // Pooled slots: unbounded while another session may still be opened. Counted unless the origin only carries
      // bounded isolated sessions (`disableConcurrentStreams`), whose slots are one per session.
      const isolatedInUse = origin.isolatedOpen > 0 || origin.isolatedQueued > 0;
      let capacity = 0;
      if (!isolatedInUse || origin.sessions.length > 0 || origin.queued > 0) {
        capacity = origin.sessions.length >= maxSessions ? 0 : Number.POSITIVE_INFINITY;
        for (const entry of origin.sessions) {
          active += entry.active;
          if (entry.state === SESSION_CONNECTING) capacity = Number.POSITIVE_INFINITY;
          else capacity += entry.streamLimit;
        }
      }
      if (isolatedInUse) {
        for (const entry of origin.open) if (entry.boundedIsolated) active += entry.active;
        capacity += origin.isolatedOpen >= maxIsolated ? origin.isolatedOpen : Number.POSITIVE_INFINITY;
      }
      const waiting = origin.waiting;
      let detector = this.detectors.get(origin);
      if (detector === undefined) {
        if (waiting === 0 && c.arrivals === 0) continue;
        detector = new SaturationDetector({ origin: origin.name, sampleIntervalMs: HTTP2_SAMPLE_INTERVAL_MS });
        this.detectors.set(origin, detector);
      }
      const head = origin.oldestWaiting;
      const report = detector.update({
        now,
        active,
        maxSockets: capacity,
        queued: waiting,
        minQueued: Math.min(c.minQueued, waiting),
        completions: c.completions,
        arrivals: c.arrivals,
        holdTimeSumMs: c.holdSumMs,
        holdCount: c.holdCount,
        holdTimeMaxMs: c.holdMaxMs,
        oldestActiveMs: origin.activeHead === undefined ? 0 : now - origin.activeHead.slotAt,
        oldestQueuedMs: head === undefined ? 0 : now - head.startedAt,
      });
      c.resetSample(waiting);
      if (report !== undefined) {
        const bound =
          origin.isolatedQueued > origin.queued
            ? `maxIsolatedSessionsPerOrigin (now ${maxIsolated})`
            : `maxSessionsPerOrigin (now ${maxSessions})`;
        this.transition(origin, report, bound);
      }
    }
  }

  /** @internal */
  enqueued(origin: Http2Origin): void {
    if (this.listeners.size === 0 && !channels.enqueued.hasSubscribers) return;
    this.emit({ type: "request:enqueued", origin: origin.name }, channels.enqueued);
  }

  /** @internal */
  acquired(origin: Http2Origin, waitMs: number, reused: boolean, queued: boolean): void {
    if (this.listeners.size === 0 && !channels.acquired.hasSubscribers) return;
    this.emit({ type: "request:acquired", origin: origin.name, waitMs, reused, queued }, channels.acquired);
  }

  /** @internal */
  sessionCreated(origin: Http2Origin, connectMs: number, tlsMs: number | null): void {
    if (this.listeners.size === 0 && !channels.created.hasSubscribers) return;
    this.emit({ type: "connection:created", origin: origin.name, connectMs, tlsMs }, channels.created);
  }

  /** @internal */
  sessionClosed(origin: Http2Origin, entry: Http2SessionEntry, reason: Http2CloseReason): void {
    if (this.listeners.size === 0 && !channels.closed.hasSubscribers) return;
    this.emit(
      {
        type: "connection:closed",
        origin: origin.name,
        ageMs: this.pool.now() - entry.createdAt,
        requests: entry.streams,
        reason: CLOSE_REASON_MAP[reason],
      },
      channels.closed
    );
  }

  /** @param bound - the option to raise and its value, e.g. `maxSessionsPerOrigin (now 4)`. */
  private transition(origin: Http2Origin, report: SaturationReport, bound: string): void {
    if (report.state !== "ok") {
      let cause: string;
      if (report.cause === "no_progress") {
        cause = `no stream completed in the last ${(report.windowMs / 1000).toFixed(1)} s while every stream slot is busy, and the oldest has been open far longer than this origin's streams normally are; the server may not be answering. Set requestTimeout so hung streams fail and free their slots.`;
      } else if (report.trigger === "long_holds") {
        cause = `every stream slot is held by a long-running stream (oldest ${Math.round(report.oldestActiveMs)} ms) and none completed, so new streams wait behind them (long polls or streams, or a server that is not answering yet). Raise ${bound} if these streams are meant to run long.`;
      } else {
        cause = `waiting streams keep growing (arrivals ${report.arrivalRate.toFixed(1)}/s, throughput ${report.throughput.toFixed(1)}/s). Raise ${bound} or limit concurrency.`;
      }
      report.message = `HTTP/2 stream slots at capacity=${report.active} and ${report.queued} additional streams are waiting (origin=${report.origin}, state=${report.state}, oldest waiting ${Math.round(report.oldestQueuedMs)} ms). Cause: ${cause}`;
      // Socket sizing does not apply: the HTTP/2 bound is sessions × the peer's stream limit.
      report.recommendedMaxSockets = null;
      report.sizing = null;
    } else {
      report.message = `HTTP/2 ${report.origin} recovered from ${report.previousState}: ${report.queued} streams waiting, ${report.active} open.`;
    }
    this.emit(
      report.state === "ok"
        ? { type: "pool:recovered", origin: origin.name, report }
        : { type: "pool:saturated", origin: origin.name, report },
      report.state === "ok" ? channels.recovered : channels.saturated
    );
    this.pool.report(report);
  }

  private emit(event: PoolEvent, channel: diagnosticsChannel.Channel): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // Listeners are isolated.
      }
    }
    if (channel.hasSubscribers) {
      try {
        channel.publish(event);
      } catch {
        // A throwing channel subscriber is isolated too.
      }
    }
  }
}
