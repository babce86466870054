/**
 * Http2SessionPool: the HTTP/2 sessions of one handler, per origin, and their deadlines on ONE shared
 * `DeadlineScheduler` (no native timer per stream or session).
 *
 * Placement of a stream (`acquire`):
 *   1. isolated (event stream, `disableConcurrentStreams`): a session of its own, destroyed when the stream closes;
 *      non-event-stream ones are bounded by `maxIsolatedSessionsPerOrigin` and beyond it wait in the isolated FIFO;
 *   2. else the first ready pooled session below its stream limit (min of the peer's and the handler's);
 *   3. else the origin's FIFO, opening a session while fewer than `maxSessionsPerOrigin` exist and the connecting
 *      ones cannot absorb the queue. Beyond `maxQueuedRequests` a stream fails at once.
 *
 * A session that refuses a stream while others are open takes no new one until one ends; with none open it is
 * retired; the request goes back to the head of the queue. A session that fails before its first SETTINGS fails the
 * waiting streams when nothing else of the origin can serve them (no reconnect loop against a dead server).
 *
 * Costs: acquire/release O(maxSessionsPerOrigin), allocation-free beyond the stream; an origin with no session and
 * no stream is forgotten at once.
 */
import type { Http2CloseReason } from "@sockeye/pool-monitor";
import {
  type CloseReasonOf,
  DeadlineScheduler,
  type HTTP2_CLOSE_REASONS,
  http2DestroyedError,
  http2SessionClosedError,
  sessionConnectTimeoutError,
  timing as importedTiming,
} from "@sockeye/pool-monitor/internal";
import http2, { type Settings } from "node:http2";
import { PACKAGE_PREFIX } from "./constants";
import { Http2Origin } from "./http2-origin";
import type { Http2PoolMonitor } from "./http2-pool-monitor";
import { type Http2CloseCause, Http2SessionEntry, type Http2SessionHost } from "./http2-session-entry";
import type { Http2PoolOrigin, Http2PoolSession, Http2StreamHost, Http2StreamRequest } from "./http2-stream-request";
import type { ResolvedHttp2Config } from "./resolve-http2-config";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const timing = importedTiming;

/** Streams assumed per connecting session when deciding whether the queue needs one more session. */
const ASSUMED_STREAMS_PER_SESSION = 100;

/** Sample period while no monitor exists, ms. */
const SAMPLE_INTERVAL_FALLBACK_MS = 1000;

/** @internal */
export class Http2SessionPool implements Http2StreamHost, Http2SessionHost<Http2StreamRequest> {
  readonly origins = new Map<string, Http2PoolOrigin>();
  readonly sharedScheduler: DeadlineScheduler;
  /** Set by the handler before its first request (`undefined` only before that). */
  poolConfig!: ResolvedHttp2Config;
  monitor: Http2PoolMonitor | undefined = undefined;
  originsCreated = 0;

  constructor() {
    this.sharedScheduler = new DeadlineScheduler(
      (now) => this.onTick(now),
      () => this.monitor?.sampleIntervalMs ?? SAMPLE_INTERVAL_FALLBACK_MS
    );
  }

  addOrigin(key: string, name: string): Http2PoolOrigin {
    const origin = new Http2Origin<Http2PoolSession, Http2StreamRequest>(key, name, undefined);
    if (this.monitor !== undefined) origin.counters = this.monitor.attach(name, origin);
    this.origins.set(key, origin);
    this.originsCreated++;
    return origin;
  }

  acquire(req: Http2StreamRequest): void {
    const origin = req.origin;
    origin.streamsInFlight++;
    // Sampling only feeds saturation detection: with "off"/"per-request" a stream without a deadline starts no timer.
    if (origin.counters !== undefined && this.monitor?.detect === true) this.sharedScheduler.ensureTicking();
    if (!req.isolated) {
      this.placePooled(origin, req, false);
    } else if (
      !req.eventStream &&
      (origin.isolatedOpen >= this.poolConfig.maxIsolatedSessionsPerOrigin || origin.isolated.nodeCount > 0)
    ) {
      if (this.refusedFull(origin, req)) return;
      origin.enqueue(req, false);
      req.countQueued();
    } else {
      this.openIsolated(origin, req);
    }
  }

  /** Starts pooled `req` on a free slot, or queues it (at the head when `again`) and opens a session if needed. */
  private placePooled(origin: Http2PoolOrigin, req: Http2StreamRequest, again: boolean): void {
    const entry = origin.available();
    if (entry !== undefined) {
      this.startOn(entry, req);
      return;
    }
    if (!again && this.refusedFull(origin, req)) return;
    this.maybeOpen(origin, 1);
    // Waiting only for a session still connecting (or checked) is not being queued, as in node:http (`deferred`).
    const deferred = origin.connecting > 0 || origin.checking > 0;
    origin.enqueue(req, deferred, again);
    if (!deferred) req.countQueued();
  }

  streamRefused(req: Http2StreamRequest): void {
    const entry = req.entry as Http2PoolSession;
    this.releaseSlot(req, entry);
    if (entry.active > 0) {
      entry.refusing = true;
    } else {
      // Nothing of ours explains it: a fresh session serves the request instead.
      this.retire(entry, "local");
      this.closeWhenDrained(entry);
    }
    this.updateRef(entry);
    try {
      this.placePooled(req.origin, req, true);
    } catch (error) {
      req.sessionFailed(error as Error);
    }
  }

  /** `maxQueuedRequests` reached: `req` fails at once (true). Streams a connecting session will take are not waiting. */
  private refusedFull(origin: Http2PoolOrigin, req: Http2StreamRequest): boolean {
    const config = this.poolConfig;
    const max = config.maxQueuedRequests;
    if (max === undefined || max === Number.POSITIVE_INFINITY) return false;
    const capacity = (origin.connecting + origin.checking) * this.streamsPerSession(origin);
    if (!req.isolated && (origin.deferred < capacity || origin.sessions.length < config.maxSessionsPerOrigin)) {
      return false;
    }
    const waiting = origin.pooled.nodeCount + origin.isolated.nodeCount - Math.min(origin.deferred, capacity);
    if (waiting < max) return false;
    req.queueFull(max, waiting);
    return true;
  }

  /** Opens the isolated session of `req` (counted against the bound unless `req` is an event stream). */
  private openIsolated(origin: Http2PoolOrigin, req: Http2StreamRequest): void {
    const entry = this.openSession(origin, true);
    if (!req.eventStream) {
      entry.boundedIsolated = true;
      origin.isolatedOpen++;
    }
    entry.isolatedRequest = req;
    req.entry = entry;
  }

  /** A bounded isolated session closed: the next isolated waiters start, or fail with its `failure` (a dead origin). */
  private isolatedGone(entry: Http2PoolSession, failure: Error | undefined): void {
    if (!entry.boundedIsolated) return;
    entry.boundedIsolated = false;
    const origin = entry.origin;
    origin.isolatedOpen--;
    if (failure !== undefined) {
      failAll(origin, true, failure);
      return;
    }
    while (origin.isolated.nodeCount > 0 && origin.isolatedOpen < this.poolConfig.maxIsolatedSessionsPerOrigin) {
      const req = origin.dequeue(true) as Http2StreamRequest;
      try {
        this.openIsolated(origin, req);
      } catch (error) {
        req.sessionFailed(error as Error);
      }
    }
  }

  streamFinished(req: Http2StreamRequest): void {
    const origin = req.origin;
    origin.streamsInFlight--;
    const entry = req.entry;
    if (origin.remove(req)) {
      // A connecting session nobody waits for any more stays, but stops holding the process.
      if (origin.pooled.nodeCount === 0) for (const session of origin.sessions) this.updateRef(session);
    } else if (entry !== undefined && !req.onSession) {
      // Its isolated session is still connecting: nobody else will use it.
      if (entry.isolatedRequest === req) {
        entry.isolatedRequest = undefined;
        this.destroySession(entry, "local");
      }
    } else if (entry !== undefined) {
      this.releaseSlot(req, entry);
      // A stream ended: whatever made the peer refuse streams may be gone with it.
      entry.refusing = false;
      if (entry.isolated) {
        this.destroySession(entry, "local");
      } else {
        this.closeWhenDrained(entry);
        this.drain(entry);
        this.updateRef(entry);
      }
    }
    this.forgetIfIdle(origin);
  }

  private releaseSlot(req: Http2StreamRequest, entry: Http2PoolSession): void {
    req.onSession = false;
    req.entry = undefined;
    req.origin.holders.unlinkNode(req);
    entry.active--;
  }

  sessionSettings(entry: Http2PoolSession, settings: Settings): void {
    const origin = entry.origin;
    const peer = settings.maxConcurrentStreams;
    entry.peerMaxConcurrentStreams = typeof peer === "number" && peer < 0xffffffff ? peer : undefined;
    if (!entry.isolated) {
      entry.streamLimit = Math.min(this.poolConfig.maxConcurrentStreams, entry.peerMaxConcurrentStreams ?? Infinity);
      origin.streamLimitHint = entry.streamLimit;
    }
    if (entry.state === "connecting") {
      entry.state = "ready";
      entry.wasReady = true;
      this.sharedScheduler.disarm(entry.connectDeadline);
      const now = timing.now();
      entry.socketActiveAt = now;
      const sessionTimeout = this.poolConfig.sessionTimeout;
      if (sessionTimeout !== undefined) entry.watchIdle(this.sharedScheduler, sessionTimeout, now);
      const counters = origin.counters;
      if (counters !== undefined) {
        const established = entry.connectedAt >= 0 ? entry.connectedAt : now;
        const tcpAt = entry.tcpAt >= 0 ? entry.tcpAt : established;
        const tls = origin.name.startsWith("https:");
        counters.monitor.connected(counters, tcpAt - entry.createdAt);
        counters.monitor.connectionReady(counters, tcpAt - entry.createdAt, tls ? established - tcpAt : null);
      }
      if (entry.isolated) {
        const req = entry.isolatedRequest;
        entry.isolatedRequest = undefined;
        if (req !== undefined && !req.isFinished) this.startOn(entry, req);
        else this.destroySession(entry, "local");
        return;
      }
      origin.connecting--;
    }
    this.drain(entry);
    this.updateRef(entry);
    this.maybeOpen(origin);
    origin.countDeferred();
  }

  isolatedResponded(entry: Http2PoolSession): void {
    this.retire(entry, "local");
  }

  sessionGoaway(entry: Http2PoolSession, code: number): void {
    entry.origin.counters?.goaway(code);
    this.retire(entry, "goaway");
    // Upstream closes gracefully: streams the server accepted (id <= lastStreamID) may finish.
    this.closeWhenDrained(entry);
    this.maybeOpen(entry.origin);
  }

  sessionError(entry: Http2PoolSession, error: Error): void {
    entry.error ??= error;
    const counters = entry.origin.counters;
    if (counters !== undefined) counters.monitor.connectionErrored(counters);
    this.destroySession(entry, "error");
  }

  sessionIdle(entry: Http2PoolSession): void {
    this.destroySession(entry, "idle");
  }

  /**
   * The session may be dead. The verdict waits for the next poll phase (`timing.afterPoll`): a deadline fired after a
   * blocked event loop has not seen the frames that poll reads. Meanwhile it takes no new stream; if none of its
   * streams received a frame by then, it is retired.
   */
  sessionSilent(entry: Http2PoolSession): void {
    if (entry.isolated || entry.state !== "ready" || entry.silenceSeq >= 0) return;
    entry.silenceSeq = entry.activitySeq;
    entry.origin.checking++;
    timing.afterPoll(() => this.confirmSilent(entry));
  }

  private confirmSilent(entry: Http2PoolSession): void {
    const origin = entry.origin;
    const alive = entry.activitySeq !== entry.silenceSeq;
    entry.silenceSeq = -1;
    origin.checking--;
    if (entry.state === "ready" && !alive) {
      this.retire(entry, "idle");
      this.closeWhenDrained(entry);
    }
    this.drain(entry);
    this.maybeOpen(origin);
    origin.countDeferred();
  }

  connectTimedOut(entry: Http2PoolSession): void {
    if (entry.state !== "connecting") return;
    const ms = this.poolConfig.connectionTimeout;
    entry.error ??= sessionConnectTimeoutError(PACKAGE_PREFIX, entry.origin.name, ms);
    this.destroySession(entry, "connect_timeout");
  }

  /** The session's `'close'` (or its release by `destroySession()`): its streams and waiters learn it. */
  sessionClosed(entry: Http2PoolSession): void {
    if (entry.state === "closed") return;
    const wasConnecting = !entry.wasReady;
    this.retire(entry);
    entry.state = "closed";
    entry.idle?.stop();
    const origin = entry.origin;
    origin.open.delete(entry);
    const ageMs = timing.now() - entry.createdAt;
    origin.counters?.sessionClosed(ageMs, !wasConnecting, entry.streams, closeReasonOf(entry));
    // Streams Node never closed (a session torn down by a protocol error can leave them so) end now, not never.
    if (entry.active > 0) endHolders(origin, entry, entry.error);
    const pending = entry.isolatedRequest;
    entry.isolatedRequest = undefined;
    const error =
      wasConnecting || pending !== undefined
        ? (entry.error ?? http2SessionClosedError(PACKAGE_PREFIX, origin.name))
        : undefined;
    pending?.sessionFailed(error as Error);
    if (entry.isolated) {
      this.isolatedGone(entry, wasConnecting && entry.closedBy !== "local" ? error : undefined);
    } else if (wasConnecting && origin.sessions.length === 0) {
      // Establishment failed and nothing else can serve the queue: fail it rather than reconnect in a loop.
      failAll(origin, false, error as Error);
    } else {
      this.maybeOpen(origin);
      origin.countDeferred();
    }
    this.forgetIfIdle(origin);
  }

  /** Forgets `origin` when it has no open session and no stream in flight or queued. O(1). */
  private forgetIfIdle(origin: Http2PoolOrigin): void {
    if (origin.streamsInFlight !== 0 || origin.open.size !== 0 || this.origins.get(origin.key) !== origin) return;
    this.origins.delete(origin.key);
    origin.counters?.members.delete(origin);
  }

  /** Destroys every session (upstream `destroy()`); every request fails now. The pool stays usable. */
  destroy(): void {
    for (const origin of this.origins.values()) {
      const error = http2DestroyedError(PACKAGE_PREFIX);
      failAll(origin, false, error);
      failAll(origin, true, error);
      for (const entry of [...origin.open]) this.destroySession(entry, "local");
      // Every request still on a stream ends now, whatever Node emits for its destroyed stream later (or never).
      endHolders(origin, undefined, undefined);
    }
    this.sharedScheduler.stop();
  }

  /** Takes `entry` out of the placement list (it will accept no new stream), for `cause` unless it had one. */
  private retire(entry: Http2PoolSession, cause?: Http2CloseCause): void {
    if (entry.state === "closed") return;
    entry.closedBy ??= cause;
    if (entry.state === "connecting" && !entry.isolated) entry.origin.connecting--;
    entry.state = "closing";
    this.sharedScheduler.disarm(entry.connectDeadline);
    const sessions = entry.origin.sessions;
    const ix = sessions.indexOf(entry);
    if (ix >= 0) sessions.splice(ix, 1);
  }

  /** Graceful close once its last stream is done (Node 24's `close()` fails a received, unread body). */
  private closeWhenDrained(entry: Http2PoolSession): void {
    const session = entry.session;
    if (entry.state === "closing" && entry.active === 0 && !session.closed && !session.destroyed) session.close();
  }

  /** Lets a session go at once; its socket too (`destroy()` only `end()`s a connecting one, with no `'close'`). */
  private destroySession(entry: Http2PoolSession, cause: Http2CloseCause): void {
    this.retire(entry, cause);
    if (!entry.session.destroyed) entry.session.destroy();
    if (entry.wasReady) return;
    entry.socket.destroy();
    this.sessionClosed(entry);
  }

  private openSession(origin: Http2PoolOrigin, isolated: boolean): Http2PoolSession {
    const config = this.poolConfig;
    const connectOptions = config.options.nodeHttp2ConnectOptions;
    // Before `http2.connect()`, whose synchronous work (e.g. a TLS context) is part of establishing the session.
    const now = timing.now();
    const session = connectOptions == null ? http2.connect(origin.key) : http2.connect(origin.key, connectOptions);
    const entry = new Http2SessionEntry(this, origin, session, isolated, config.maxConcurrentStreams, now);
    origin.open.add(entry);
    if (!isolated) {
      origin.sessions.push(entry);
      origin.connecting++;
    }
    if (origin.counters !== undefined) origin.counters.monitor.connectionOpened(origin.counters);
    if (config.connectionTimeout !== undefined) {
      this.sharedScheduler.arm(entry.connectDeadline, now, config.connectionTimeout);
    }
    return entry;
  }

  /** The stream limit a session of `origin` is assumed to have before its SETTINGS arrive. */
  private streamsPerSession(origin: Http2PoolOrigin): number {
    return Math.min(this.poolConfig.maxConcurrentStreams, origin.streamLimitHint ?? ASSUMED_STREAMS_PER_SESSION);
  }

  /** Opens a session if the queue (plus `arriving` requests about to join it) needs one and the bound allows. */
  private maybeOpen(origin: Http2PoolOrigin, arriving = 0): void {
    const queued = origin.pooled.nodeCount + arriving;
    if (queued === 0 || origin.sessions.length >= this.poolConfig.maxSessionsPerOrigin) return;
    // 0 × Infinity (no session connecting, no stream limit) is NaN: open.
    if (queued <= (origin.connecting + origin.checking) * this.streamsPerSession(origin)) return;
    this.openSession(origin, false);
  }

  private drain(entry: Http2PoolSession): void {
    const origin = entry.origin;
    while (origin.pooled.nodeCount > 0 && entry.available) this.startOn(entry, origin.dequeue(false)!);
  }

  private startOn(entry: Http2PoolSession, req: Http2StreamRequest): void {
    entry.active++;
    entry.streams++;
    if (entry.active > entry.maxActive) entry.maxActive = entry.active;
    req.entry = entry;
    req.onSession = true;
    const now = timing.now();
    req.slotAt = now;
    entry.origin.holders.linkTail(req);
    this.updateRef(entry);
    req.startStream(entry, now, entry.streams > 1);
  }

  /** Keeps a session referenced exactly while it carries a stream or someone waits for it (as upstream). */
  private updateRef(entry: Http2PoolSession): void {
    const want =
      entry.active > 0 ||
      (entry.state === "connecting" && (entry.isolatedRequest !== undefined || entry.origin.pooled.nodeCount > 0));
    if (want === entry.referenced || entry.session.destroyed) return;
    entry.referenced = want;
    if (want) entry.session.ref();
    else entry.session.unref();
  }

  private onTick(now: number): boolean {
    const monitor = this.monitor;
    if (monitor === undefined || !monitor.detect) return false;
    return monitor.sampleOnTick(now);
  }

  /** The monitor saw an event after a quiet spell: sample again (when it detects). */
  resumeSampling(): void {
    if (this.monitor?.detect === true) this.sharedScheduler.ensureTicking();
  }
}

/**
 * The HTTP/2 close-reason classifier (first rule in key order wins). A reason without its rule does not compile, nor
 * does a shared `http2` reason that no HTTP/2 reason counts as (`Http2ReasonsCovered`).
 */
const HTTP2_CLOSE_RULES: Readonly<Record<Http2CloseReason, (e: Http2PoolSession) => boolean>> = {
  connect_timeout: (e) => e.closedBy === "connect_timeout",
  goaway: (e) => e.closedBy === "goaway",
  idle_timeout: (e) => e.closedBy === "idle",
  local: (e) => e.closedBy === "local",
  connect_error: (e) => !e.wasReady,
  error: (e) => e.closedBy === "error",
  server_closed: () => true,
};

function closeReasonOf(entry: Http2PoolSession): Http2CloseReason {
  for (const reason in HTTP2_CLOSE_RULES) {
    if (HTTP2_CLOSE_RULES[reason as Http2CloseReason](entry)) return reason as Http2CloseReason;
  }
  return "server_closed";
}

/** Compiles only while every shared reason HTTP/2 is listed for is what some HTTP/2 reason counts as. @internal */
export type Http2ReasonsCovered = Covered<
  Exclude<CloseReasonOf<"http2">, (typeof HTTP2_CLOSE_REASONS)[Http2CloseReason]>
>;
type Covered<Missing extends never> = Missing;

/** Fails every request waiting on `origin`'s pooled or isolated list with `error`. */
function failAll(origin: Http2PoolOrigin, isolated: boolean, error: Error): void {
  for (let req = origin.dequeue(isolated); req !== undefined; req = origin.dequeue(isolated)) req.sessionFailed(error);
}

/** Ends every request holding a slot on `entry` (all of `origin`'s when `undefined`) now, with `error` if unsettled. */
function endHolders(origin: Http2PoolOrigin, entry: Http2PoolSession | undefined, error: Error | undefined): void {
  const holders: Http2StreamRequest[] = [];
  for (let req = origin.holders.firstNode; req !== undefined; req = req.listNext) {
    if (entry === undefined || req.entry === entry) holders.push(req);
  }
  for (const req of holders) req.sessionGone(error);
}
