/**
 * Http2PoolMonitor: the HTTP/2 reader of the telemetry core; each origin's snapshot gains an `http2` block.
 *
 * A session is a connection (`maxSockets`: `maxSessionsPerOrigin`), a stream a request (`queued`: waiting for a
 * stream slot or an isolated session); `tlsMs` includes the server's SETTINGS. Close reasons map by
 * `HTTP2_CLOSE_REASONS`. The detector's "sockets" are stream slots: the sum of the sessions' stream limits once
 * `maxSessionsPerOrigin` sessions exist (unbounded before, so an origin that can still open one is never saturated),
 * plus one slot per bounded isolated session once `maxIsolatedSessionsPerOrigin` are open.
 */
import type { Http2CloseReason, Http2SessionStats, OriginStats, PoolMonitorOptions } from "@sockeye/pool-monitor";
import {
  type DetectorTuning,
  emptyCloseCounts,
  HTTP2_CLOSE_REASONS,
  OriginTelemetry,
  type PoolReading,
  type SaturationTerms,
  TelemetryCore,
  type UnreadBody,
  type UnreadWatch,
} from "@sockeye/pool-monitor/internal";

/** What the monitor reads of a session. @internal */
export interface Http2SessionView {
  readonly id: number;
  readonly state: "connecting" | "ready" | "closing" | "closed";
  readonly isolated: boolean;
  readonly boundedIsolated: boolean;
  readonly active: number;
  readonly maxActive: number;
  readonly streams: number;
  readonly peerMaxConcurrentStreams: number | undefined;
  readonly streamLimit: number;
  readonly createdAt: number;
}

/** What the monitor reads of a request holding a stream slot (with the body it handed out). @internal */
export interface Http2HolderView extends UnreadWatch {
  readonly slotAt: number;
  readonly listNext: Http2HolderView | undefined;
  readonly heldBody: UnreadBody | undefined;
  readonly bodyRef: WeakRef<UnreadBody> | undefined;
  readonly respondedAt: number;
  readonly progress: number;
}

/** What the monitor reads of a pool origin (`Http2Origin`). @internal */
export interface Http2OriginView {
  readonly open: Iterable<Http2SessionView>;
  readonly sessions: readonly Http2SessionView[];
  readonly pooled: { readonly nodeCount: number };
  readonly isolatedOpen: number;
  readonly isolated: { readonly nodeCount: number };
  readonly waiting: number;
  readonly oldestWaiting: { readonly begunAt: number } | undefined;
  readonly holders: { readonly firstNode: Http2HolderView | undefined };
}

/** What the monitor reads of the pool's configuration. @internal */
export interface Http2PoolLimits {
  readonly maxSessionsPerOrigin: number;
  readonly maxIsolatedSessionsPerOrigin: number;
  readonly maxConcurrentStreams: number;
}

/** The telemetry of one origin entry: the core's figures plus the HTTP/2 close reasons and GOAWAY codes. @internal */
export class Http2OriginTelemetry extends OriginTelemetry {
  /** Pool origins counted in this entry: one, or those of `_OTHER` the pool holds now (each leaves when forgotten). */
  readonly members = new Set<Http2OriginView>();
  readonly http2Closed = emptyCloseCounts(HTTP2_CLOSE_REASONS);
  readonly goawayCodes: Record<string, number> = {};
  streamsRefused = 0;

  constructor(
    origin: string,
    tuning: DetectorTuning,
    readonly monitor: Http2PoolMonitor
  ) {
    super(origin, tuning);
  }

  /** A session closed for `reason` after `ageMs`, having carried `streams` streams. */
  sessionClosed(ageMs: number, ready: boolean, streams: number, reason: Http2CloseReason): void {
    this.http2Closed[reason]++;
    this.monitor.connectionClosed(this, ageMs, ready, streams, HTTP2_CLOSE_REASONS[reason]);
  }

  /** A session received GOAWAY with `code`. */
  goaway(code: number): void {
    const key = String(code);
    this.goawayCodes[key] = (this.goawayCodes[key] ?? 0) + 1;
  }
}

/** Telemetry source of a `NodeHttp2Handler`: `getStats()` and `subscribe()`, like `PoolMonitor`. @public */
export class Http2PoolMonitor extends TelemetryCore<Http2OriginTelemetry> {
  /** @internal */
  constructor(
    private readonly limits: () => Http2PoolLimits | undefined,
    /** Whether saturation detection runs (`socketMonitor: "interval"`). @internal */
    public detect: boolean,
    options?: PoolMonitorOptions
  ) {
    super(options);
  }

  /** @internal */
  protected newOrigin(key: string): Http2OriginTelemetry {
    return new Http2OriginTelemetry(key, this.monitorOptions, this);
  }

  /** The telemetry entry of a new pool origin (its own, or `_OTHER`'s). @internal */
  attach(origin: string, view: Http2OriginView): Http2OriginTelemetry {
    const t = this.originFor(origin);
    t.members.add(view);
    return t;
  }

  /** @internal */
  protected override terms(t: Http2OriginTelemetry): SaturationTerms {
    const limits = this.limits();
    let isolated = 0;
    let pooled = 0;
    for (const m of t.members) {
      isolated += m.isolated.nodeCount;
      pooled += m.pooled.nodeCount;
    }
    const raise =
      isolated > pooled
        ? `maxIsolatedSessionsPerOrigin (now ${limits?.maxIsolatedSessionsPerOrigin ?? "Infinity"})`
        : `maxSessionsPerOrigin (now ${limits?.maxSessionsPerOrigin ?? "Infinity"})`;
    return { slot: "stream slot", capacity: "stream slots", raise, sizing: false };
  }

  /** @internal */
  protected read(t: Http2OriginTelemetry, now: number, r: PoolReading): void {
    const limits = this.limits();
    const maxSessions = limits?.maxSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    const maxIsolated = limits?.maxIsolatedSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    const e = r.evidence;
    let oldestQueuedAt = Number.POSITIVE_INFINITY;
    let oldestSlotAt = Number.POSITIVE_INFINITY;
    let slots = 0;
    let capacity = 0;
    let active = 0;
    let idle = 0;
    let queued = 0;
    for (const m of t.members) {
      for (const entry of m.open) {
        if (entry.active > 0) active++;
        else idle++;
      }
      queued += m.waiting;
      const head = m.oldestWaiting;
      if (head !== undefined && head.begunAt < oldestQueuedAt) oldestQueuedAt = head.begunAt;
      const held = m.holders.firstNode;
      if (held !== undefined && held.slotAt < oldestSlotAt) oldestSlotAt = held.slotAt;
      // Stream slots (see the header).
      const isolatedInUse = m.isolatedOpen > 0 || m.isolated.nodeCount > 0;
      let cap = 0;
      if (!isolatedInUse || m.sessions.length > 0 || m.pooled.nodeCount > 0) {
        cap = m.sessions.length >= maxSessions ? 0 : Number.POSITIVE_INFINITY;
        for (const entry of m.sessions) {
          slots += entry.active;
          if (entry.state === "connecting") cap = Number.POSITIVE_INFINITY;
          else cap += entry.streamLimit;
        }
      }
      if (isolatedInUse) {
        for (const entry of m.open) if (entry.boundedIsolated) slots += entry.active;
        cap += m.isolatedOpen >= maxIsolated ? m.isolatedOpen : Number.POSITIVE_INFINITY;
      }
      capacity += cap;
    }
    const oldestQueuedMs = oldestQueuedAt === Number.POSITIVE_INFINITY ? 0 : now - oldestQueuedAt;
    const maxSockets = Number.isFinite(maxSessions) ? maxSessions : null;
    r.setGauges({ maxSockets, active, idle, queued, oldestQueuedMs });
    // A response body pins its stream slot while the stream makes no progress (flow control stops the peer of an
    // unread one) and nobody reads it: the unread-body rule. O(slot holders).
    for (const m of t.members) {
      for (let h = m.holders.firstNode; h !== undefined; h = h.listNext) {
        const body = h.heldBody ?? h.bodyRef?.deref();
        if (h.respondedAt >= 0 && body !== undefined) r.addWatched(h, h.progress, now, h.respondedAt, body);
      }
    }
    e.active = slots;
    e.maxSockets = capacity;
    e.queued = queued;
    e.oldestQueuedMs = oldestQueuedMs;
    e.oldestActiveMs = oldestSlotAt === Number.POSITIVE_INFINITY ? 0 : now - oldestSlotAt;
  }

  /** @internal */
  protected override extendStats(t: Http2OriginTelemetry, stats: OriginStats, now: number): void {
    const limits = this.limits();
    const maxSessions = limits?.maxSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    const cap = limits?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
    let streams = 0;
    let isolated = 0;
    let pooled = 0;
    let peerMin = Number.POSITIVE_INFINITY;
    const sessions: Http2SessionStats[] = [];
    for (const m of t.members) {
      for (const entry of m.open) {
        streams += entry.active;
        if (entry.isolated) isolated++;
        else pooled++;
        if (entry.state === "ready" && entry.peerMaxConcurrentStreams !== undefined) {
          peerMin = Math.min(peerMin, entry.peerMaxConcurrentStreams);
        }
        sessions.push({
          id: entry.id,
          state: entry.state === "closed" ? "closing" : entry.state,
          isolated: entry.isolated,
          activeStreams: entry.active,
          maxActiveStreams: entry.maxActive,
          streams: entry.streams,
          peerMaxConcurrentStreams: entry.peerMaxConcurrentStreams ?? null,
          streamLimit: Number.isFinite(entry.streamLimit) ? entry.streamLimit : null,
          ageMs: Math.round(now - entry.createdAt),
        });
      }
    }
    stats.http2 = {
      sessionsOpen: pooled,
      isolatedSessionsOpen: isolated,
      activeStreams: streams,
      streamsWaiting: stats.queued,
      maxSessions: Number.isFinite(maxSessions) ? maxSessions : null,
      maxConcurrentStreams: Number.isFinite(cap) ? cap : null,
      peerMaxConcurrentStreams: Number.isFinite(peerMin) ? peerMin : null,
      sessions,
      sessionsCreated: t.socketsCreated,
      closed: { ...t.http2Closed },
      goawayCodes: { ...t.goawayCodes },
      streamsRefused: t.streamsRefused,
    };
  }
}
