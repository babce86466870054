/**
 * Http2SessionPool: the HTTP/2 sessions of one handler, per origin, and everything time-based about them, on ONE
 * shared `DeadlineScheduler` (one native timer per handler armed for the earliest expiry; no native timer per
 * stream or per session).
 *
 * Placement of a stream (`acquire`):
 *   1. isolated (event stream, `disableConcurrentStreams`): a new session of its own, destroyed when the stream
 *      closes (not counted against `maxSessionsPerOrigin`). Non-event-stream isolated requests are bounded by
 *      `maxIsolatedSessionsPerOrigin` (sessions count until they close); beyond it they wait in the origin's isolated
 *      FIFO (counted as `queued`) and each closing isolated session starts the next one. Event streams are
 *      long-lived: they are never queued and not counted, so they can never wait behind each other;
 *   2. else the first pooled session that is ready and below its stream limit (min of the peer's SETTINGS
 *      `maxConcurrentStreams` and the handler's `maxConcurrentStreams`);
 *   3. else the stream waits in the origin's FIFO (counted as `queued`) and, while fewer than
 *      `maxSessionsPerOrigin` sessions exist and the connecting ones cannot absorb the queue, a new session is
 *      opened. A stream that closes hands its slot to the head of the queue; a session that becomes ready drains it.
 *      A stream that would wait beyond `maxQueuedRequests` (pooled and isolated together) fails at once instead.
 *
 * Refused streams (`streamRefused`): one unread response body never stalls a whole session on the client side (Node
 * returns connection-level flow-control credit as DATA arrives; only that stream's window waits for its reader). But
 * a server may keep the rest of that body queued on the connection and refuse every new stream there (Node's server
 * does past its `maxSessionMemory`: RST_STREAM ENHANCE_YOUR_CALM). A session that refuses a stream while others are
 * open on it takes no new stream until one of them ends; one that refuses with no other stream open is retired
 * (closed once drained). The refused request goes back to the head of the queue, so it runs on another session
 * (opened if the bound allows) instead of failing.
 *
 * Session life: connecting → ready (first SETTINGS received) → closing (GOAWAY, or an isolated session whose stream
 * got its response) → closed. A connecting session is bounded by `connectionTimeout` (a `Deadline`); ready sessions
 * by `sessionTimeout` (the idle watch). A pooled session that fails before it is ready fails the queued streams
 * when no other session of the origin is left to serve them (no reconnect loop against a dead server); one that
 * closes after it was ready lets the queue open a fresh session. A bounded isolated session that fails before it is
 * ready fails the isolated waiters with its error (the same dead origin), instead of a connect attempt each.
 *
 * Costs: acquire/release O(maxSessionsPerOrigin) and allocation-free beyond the stream itself; timeouts are deadlines
 * (O(1) arm/cancel/refresh); the owner tick (saturation sampling, once per sample interval) runs only while the
 * detector needs samples.
 *
 * Origins (`origins`, keyed by the URL given to `http2.connect()`): an origin with no open session, no stream in
 * flight and nothing queued is forgotten at once (`forgetIfIdle()`, after each stream's end and each session's close:
 * two comparisons, then a `Map` delete and an O(1) leave of its telemetry entry's members), so a client of many hosts
 * (S3 virtual-hosted buckets, one host name per bucket) keeps O(origins with a session or a stream); a later request
 * re-creates it. One endpoint keeps its origin while its session is open (`sessionTimeout` unset: as long as the
 * server keeps it). The counters stay in the telemetry entries (the core's bounded origin table).
 */
import type { Http2CloseReason, RequestOutcome } from "@sockeye/pool-monitor";
import {
  DeadlineScheduler,
  http2DestroyedError,
  http2SessionClosedError,
  sessionConnectTimeoutError,
  timing,
} from "@sockeye/pool-monitor/internal";
import http2, { type ClientHttp2Session, type Settings } from "node:http2";
import { PACKAGE_PREFIX } from "./constants";
import { Http2Origin } from "./http2-origin";
import type { Http2SessionHost, Http2StreamHost } from "./http2-pool-host";
import type { Http2PoolMonitor } from "./http2-pool-monitor";
import { Http2SessionEntry } from "./http2-session-entry";
import { SESSION_CLOSED, SESSION_CLOSING, SESSION_CONNECTING, SESSION_READY } from "./http2-session-state";
import type { Http2PoolOrigin, Http2PoolSession, Http2StreamRequest } from "./http2-stream-request";
import type { ResolvedHttp2Config } from "./resolve-http2-config";

/** Streams assumed per connecting session when deciding whether the queue needs one more session. @internal */
const ASSUMED_STREAMS_PER_SESSION = 100;

/** Sample period while no monitor exists (the owner tick then only keeps deadlines), ms. */
const SAMPLE_INTERVAL_FALLBACK_MS = 1000;

/**
 * The pool is the host of its stream requests and session entries: they reach it through `http2-pool-host.ts`'s
 * interfaces only.
 * @internal
 */
export class Http2SessionPool
  implements Http2StreamHost<Http2StreamRequest, Http2PoolSession>, Http2SessionHost<Http2PoolSession>
{
  readonly origins = new Map<string, Http2PoolOrigin>();
  readonly sharedScheduler: DeadlineScheduler;
  poolConfig: ResolvedHttp2Config | undefined = undefined;
  monitor: Http2PoolMonitor | undefined = undefined;
  /** Streams started (queued included) and not yet closed. */
  inFlight = 0;
  /** Origins created so far (forgotten ones included). */
  originsCreated = 0;

  constructor() {
    // The owner tick only feeds the saturation detectors: it runs once per their sample interval.
    this.sharedScheduler = new DeadlineScheduler(
      (now) => this.onTick(now),
      () => this.monitor?.sampleIntervalMs ?? SAMPLE_INTERVAL_FALLBACK_MS
    );
  }

  now(): number {
    return timing.now();
  }

  /** The origin record for `key` (created on first use). */
  origin(key: string, name: string): Http2PoolOrigin {
    let origin = this.origins.get(key);
    if (origin === undefined) {
      origin = new Http2Origin<Http2PoolSession, Http2StreamRequest>(key, name, undefined);
      if (this.monitor !== undefined) origin.counters = this.monitor.attach(name, origin);
      this.origins.set(key, origin);
      this.originsCreated++;
    }
    return origin;
  }

  /** Places `req` on a session, or queues it (see the header). Throws only if `http2.connect()` throws. */
  acquire(req: Http2StreamRequest): void {
    const origin = req.origin;
    this.inFlight++;
    origin.streamsInFlight++;
    // The owner tick samples for saturation detection only when it runs (`socketMonitor: "interval"`): with
    // "off"/"per-request" a stream without a deadline starts no timer at all.
    if (origin.counters !== undefined && this.monitor?.detect === true) this.sharedScheduler.ensureTicking();
    if (req.isolated) {
      if (!req.eventStream) {
        const max = this.poolConfig?.maxIsolatedSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
        if (origin.isolatedOpen >= max || origin.isolatedQueued > 0) {
          if (this.refusedFull(origin, req)) return;
          origin.enqueue(req);
          req.countQueued();
          return;
        }
      }
      this.openIsolated(origin, req);
      return;
    }
    this.placePooled(origin, req, false);
  }

  /**
   * Starts pooled `req` on the first session with a free slot, or queues it (at the head when `again`: it waited its
   * turn already) and opens a session if the queue needs one.
   */
  private placePooled(origin: Http2PoolOrigin, req: Http2StreamRequest, again: boolean): void {
    const entry = origin.available();
    if (entry !== undefined) {
      this.startOn(entry, req);
      return;
    }
    // A refused stream placed again had its turn already: the bound is checked once, on arrival.
    if (!again && this.refusedFull(origin, req)) return;
    this.maybeOpen(origin, 1);
    // Waiting only for a session still connecting (or under a silence check) is not being queued (as a node:http
    // request given a connecting socket is not); it is, once none is and it still waits (`countDeferred`).
    const deferred = origin.connecting > 0 || origin.checking > 0;
    if (again) origin.enqueueFirst(req, deferred);
    else origin.enqueue(req, deferred);
    if (!deferred) req.countQueued();
  }

  /**
   * The peer refused `req`'s stream before answering it (see "Refused streams" in the header): frees its slot, keeps
   * the session from taking new streams while others are still open on it (else retires it), and places `req` again.
   */
  streamRefused(req: Http2StreamRequest): void {
    const entry = req.entry as Http2PoolSession;
    const origin = req.origin;
    req.onSession = false;
    req.entry = undefined;
    origin.holdEnd(req);
    entry.active--;
    if (entry.active > 0) {
      entry.refusing = true;
    } else {
      // Nothing of ours explains it (Node's server never takes back the memory of a reset stream's queued body):
      // a fresh session serves the request instead.
      entry.closeReason ??= "local";
      this.retire(entry);
    }
    if (entry.state === SESSION_CLOSING) this.closeWhenDrained(entry);
    this.updateRef(entry);
    try {
      this.placePooled(origin, req, true);
    } catch (error) {
      req.sessionFailed(error as Error);
    }
  }

  /**
   * `maxQueuedRequests`: when `req` would wait behind that many streams of `origin` (pooled and isolated), it fails
   * at once (`queueFull`) and this returns true. A pooled stream a session being opened is expected to take (as many
   * as its stream limit, `ASSUMED_STREAMS_PER_SESSION` before one is known) is not waiting, as a node:http request
   * given a connecting socket is not: neither it nor those already deferred so count.
   */
  private refusedFull(origin: Http2PoolOrigin, req: Http2StreamRequest): boolean {
    const config = this.poolConfig;
    const max = config?.maxQueuedRequests;
    if (max === undefined || max === null || max === Number.POSITIVE_INFINITY) return false;
    const perSession = Math.min(
      config?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY,
      origin.streamLimitHint ?? ASSUMED_STREAMS_PER_SESSION
    );
    const capacity = (origin.connecting + origin.checking) * perSession;
    const maxSessions = config?.maxSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    if (!req.isolated && (origin.deferred < capacity || origin.sessions.length < maxSessions)) return false;
    const waiting = origin.queued + origin.isolatedQueued - Math.min(origin.deferred, capacity);
    if (waiting < max) return false;
    req.queueFull(max, waiting);
    return true;
  }

  /** The deferred streams of `origin` that still wait once no session is connecting are queued now. */
  private countDeferred(origin: Http2PoolOrigin): void {
    origin.countDeferred(countQueued);
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

  /**
   * A bounded isolated session is gone (its close event): frees its place and starts the next isolated waiter, or,
   * when it failed before it was ready, fails the waiters with its error.
   */
  private isolatedGone(entry: Http2PoolSession, failure: Error | undefined): void {
    if (!entry.boundedIsolated) return;
    entry.boundedIsolated = false;
    const origin = entry.origin;
    origin.isolatedOpen--;
    if (failure !== undefined) {
      for (let req = origin.dequeueIsolated(); req !== undefined; req = origin.dequeueIsolated()) {
        req.sessionFailed(failure);
      }
      return;
    }
    const max = this.poolConfig?.maxIsolatedSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    while (origin.isolatedQueued > 0 && origin.isolatedOpen < max) {
      const req = origin.dequeueIsolated() as Http2StreamRequest;
      try {
        this.openIsolated(origin, req);
      } catch (error) {
        req.sessionFailed(error as Error);
      }
    }
  }

  /**
   * The single way out of `req` (`Http2StreamRequest.finish()`, once per request): counts its outcome, takes it out
   * of the queue, frees its stream slot and hands it on (or drops the isolated session it was waiting for), and takes
   * it out of the in-flight count.
   */
  streamFinished(req: Http2StreamRequest, _outcome: RequestOutcome, _holdMs: number): void {
    const origin = req.origin;
    origin.streamsInFlight--;
    this.streamReleased(req);
    this.forgetIfIdle(origin);
  }

  /** What `streamFinished()` does to the queue, the slot and the session (all but forgetting an idle origin). */
  private streamReleased(req: Http2StreamRequest): void {
    const origin = req.origin;
    this.inFlight--;
    if (req.queued) {
      origin.remove(req);
      // A connecting session nobody waits for any more stays (a next stream may use it), but stops holding the process.
      if (origin.queued === 0) for (const entry of origin.sessions) this.updateRef(entry);
    }
    const entry = req.entry;
    if (entry === undefined) return;
    if (!req.onSession) {
      // Its isolated session is still connecting: nobody else will use it.
      if (entry.isolatedRequest === req) {
        entry.isolatedRequest = undefined;
        this.destroySession(entry, "local");
      }
      return;
    }
    req.onSession = false;
    origin.holdEnd(req);
    entry.active--;
    // A stream ended: whatever made the peer refuse streams may be gone with it.
    entry.refusing = false;
    if (entry.isolated) {
      this.destroySession(entry, "local");
      return;
    }
    if (entry.state === SESSION_CLOSING) this.closeWhenDrained(entry);
    if (entry.state === SESSION_READY) this.drain(entry);
    this.updateRef(entry);
  }

  sessionSettings(entry: Http2PoolSession, settings: Settings): void {
    const peer = settings.maxConcurrentStreams;
    const cap = this.poolConfig?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
    entry.peerMaxConcurrentStreams = typeof peer === "number" && peer < 0xffffffff ? peer : undefined;
    if (!entry.isolated) entry.streamLimit = Math.min(cap, entry.peerMaxConcurrentStreams ?? Number.POSITIVE_INFINITY);
    if (!entry.isolated) entry.origin.streamLimitHint = entry.streamLimit;
    if (entry.state === SESSION_CONNECTING) {
      entry.state = SESSION_READY;
      entry.wasReady = true;
      this.sharedScheduler.disarm(entry.connectDeadline);
      const now = this.now();
      entry.socketActiveAt = now;
      if (!entry.isolated) entry.origin.connecting--;
      const sessionTimeout = this.poolConfig?.sessionTimeout;
      if (sessionTimeout !== undefined) entry.watchIdle(this.sharedScheduler, sessionTimeout, now);
      const counters = entry.origin.counters;
      if (counters !== undefined) {
        const established = entry.connectedAt >= 0 ? entry.connectedAt : now;
        const tcpAt = entry.tcpAt >= 0 ? entry.tcpAt : established;
        const tls = entry.origin.name.startsWith("https:");
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
    }
    if (entry.state === SESSION_READY) this.drain(entry);
    this.updateRef(entry);
    this.maybeOpen(entry.origin);
    this.countDeferred(entry.origin);
  }

  /** An isolated session's stream got its response: no new stream may use it; it closes when the stream does. */
  isolatedResponded(entry: Http2PoolSession): void {
    entry.closeReason ??= "local";
    this.retire(entry);
  }

  sessionGoaway(entry: Http2PoolSession, code: number): void {
    const counters = entry.origin.counters;
    if (counters !== undefined) counters.monitor.goaway(counters, code);
    entry.closeReason ??= "goaway";
    this.retire(entry);
    // Upstream closes gracefully: streams the server accepted (id <= lastStreamID) may finish.
    this.closeWhenDrained(entry);
    this.maybeOpen(entry.origin);
  }

  sessionError(entry: Http2PoolSession, error: Error): void {
    entry.error ??= error;
    const counters = entry.origin.counters;
    if (counters !== undefined) counters.monitor.connectionErrored(counters);
    this.destroySession(entry, entry.wasReady ? "error" : "connect_error");
  }

  sessionIdle(entry: Http2PoolSession): void {
    this.destroySession(entry, "idle_timeout");
  }

  /**
   * A stream on `entry` hit its inactivity timeout while no stream on the session made progress for at least half
   * that long either: the session may be dead without knowing it (e.g. after a connection error nghttp2 reported to
   * nobody). The verdict waits for the next poll phase (Node's own `setImmediate`, never a test's fake): a deadline that fires in the timers phase
   * right after the event loop was blocked has seen none of the frames that arrived meanwhile, which that poll phase
   * reads, and retiring a busy session would cost every next stream a reconnect (#34). Meanwhile it takes no new
   * stream (they wait, as for a connecting session). If no stream on it received a frame by then, it is retired (no
   * new stream) and closed gracefully; streams still on it keep their own deadlines, and the waiting streams get a
   * fresh session. One check per session at a time; a closure per check (a rare event).
   */
  sessionSilent(entry: Http2PoolSession): void {
    if (entry.isolated || entry.state !== SESSION_READY || entry.silenceSeq >= 0) return;
    entry.silenceSeq = entry.activitySeq;
    entry.origin.checking++;
    timing.afterPoll(() => this.confirmSilent(entry));
  }

  /** The poll phase after `sessionSilent(entry)`: the verdict (see there). */
  private confirmSilent(entry: Http2PoolSession): void {
    const origin = entry.origin;
    const alive = entry.activitySeq !== entry.silenceSeq;
    entry.silenceSeq = -1;
    origin.checking--;
    if (entry.state === SESSION_READY) {
      if (alive) {
        this.drain(entry);
      } else {
        entry.closeReason ??= "idle_timeout";
        this.retire(entry);
        this.closeWhenDrained(entry);
      }
    }
    this.maybeOpen(origin);
    this.countDeferred(origin);
  }

  connectTimedOut(entry: Http2PoolSession): void {
    if (entry.state !== SESSION_CONNECTING) return;
    const ms = this.poolConfig?.connectionTimeout;
    entry.error ??= sessionConnectTimeoutError(PACKAGE_PREFIX, entry.origin.name, ms);
    entry.closeReason = "connect_timeout";
    this.destroySession(entry, "connect_timeout");
  }

  sessionClosed(entry: Http2PoolSession): void {
    if (entry.state === SESSION_CLOSED) return;
    this.sessionGone(entry);
    this.forgetIfIdle(entry.origin);
  }

  /**
   * Forgets `origin` when it has no open session and no stream in flight or queued (see the header); its telemetry
   * entry keeps the counters. O(1).
   */
  private forgetIfIdle(origin: Http2PoolOrigin): void {
    if (origin.streamsInFlight !== 0 || origin.open.size !== 0 || this.origins.get(origin.key) !== origin) return;
    this.origins.delete(origin.key);
    const counters = origin.counters;
    if (counters !== undefined) counters.monitor.detach(counters, origin);
  }

  /** What `sessionClosed()` does to the session, its origin's queues and counters (all but forgetting an idle origin). */
  private sessionGone(entry: Http2PoolSession): void {
    const wasConnecting = !entry.wasReady;
    this.retire(entry);
    entry.state = SESSION_CLOSED;
    this.sharedScheduler.disarm(entry.connectDeadline);
    entry.idle?.stop();
    const origin = entry.origin;
    origin.open.delete(entry);
    const reason = entry.closeReason ?? (wasConnecting ? "connect_error" : "server_closed");
    const counters = origin.counters;
    if (counters !== undefined) {
      counters.monitor.sessionClosed(counters, this.now() - entry.createdAt, !wasConnecting, entry.streams, reason);
    }
    // Streams Node never closed (a session torn down by a protocol error can leave them so) end now, not never.
    if (entry.active > 0) this.endHolders(origin, entry, entry.error);
    const pending = entry.isolatedRequest;
    let failure: Error | undefined;
    if (wasConnecting && entry.closeReason !== "local") failure = entry.error ?? this.closedBeforeReady(origin);
    if (pending !== undefined) {
      entry.isolatedRequest = undefined;
      pending.sessionFailed(failure ?? entry.error ?? this.closedBeforeReady(origin));
    }
    if (entry.isolated) {
      this.isolatedGone(entry, failure);
      return;
    }
    if (wasConnecting && origin.queued > 0 && origin.sessions.length === 0) {
      // Establishment failed and nothing else can serve the queue: fail it rather than reconnect in a loop.
      const error = entry.error ?? this.closedBeforeReady(origin);
      for (let req = origin.dequeue(); req !== undefined; req = origin.dequeue()) req.sessionFailed(error);
      return;
    }
    this.maybeOpen(origin);
    this.countDeferred(origin);
  }

  /**
   * Destroys every session (upstream `destroy()`): open streams fail as their session goes, waiting streams fail at
   * once. Each origin is forgotten as its last session closes; the counters stay in the telemetry entries (telemetry
   * outlives `destroy()`); the pool stays usable.
   */
  destroy(): void {
    for (const origin of this.origins.values()) {
      const error = http2DestroyedError(PACKAGE_PREFIX);
      for (let req = origin.dequeue(); req !== undefined; req = origin.dequeue()) req.sessionFailed(error);
      for (let req = origin.dequeueIsolated(); req !== undefined; req = origin.dequeueIsolated()) {
        req.sessionFailed(error);
      }
      for (const entry of [...origin.open]) this.destroySession(entry, "local");
      // Every request still on a stream ends now, whatever Node emits for its destroyed stream later (or never).
      this.endHolders(origin, undefined, undefined);
    }
    this.sharedScheduler.stop();
  }

  /**
   * Ends, at once, every request of `origin` still holding a stream slot (on `entry` only, unless it is `undefined`),
   * with `error` if it has not settled (else as a stream closed without a response). O(slot holders of the origin).
   */
  private endHolders(origin: Http2PoolOrigin, entry: Http2PoolSession | undefined, error: Error | undefined): void {
    const holders: Http2StreamRequest[] = [];
    for (let req = origin.activeHead; req !== undefined; req = req.activeNext) {
      if (entry === undefined || req.entry === entry) holders.push(req);
    }
    for (const req of holders) req.sessionGone(error);
  }

  /** Takes `entry` out of the placement list (it will accept no new stream). */
  private retire(entry: Http2PoolSession): void {
    if (entry.state === SESSION_CLOSED) return;
    if (entry.state === SESSION_CONNECTING && !entry.isolated) entry.origin.connecting--;
    if (entry.state !== SESSION_CLOSING) entry.state = SESSION_CLOSING;
    this.sharedScheduler.disarm(entry.connectDeadline);
    const sessions = entry.origin.sessions;
    const ix = sessions.indexOf(entry);
    if (ix >= 0) sessions.splice(ix, 1);
  }

  /**
   * Graceful close of a retired session once its last stream is done. Not earlier: since Node 24, `session.close()`
   * ends a stream whose response body was received but not yet read with `ERR_STREAM_PREMATURE_CLOSE`.
   */
  private closeWhenDrained(entry: Http2PoolSession): void {
    if (entry.active === 0 && !entry.session.closed && !entry.session.destroyed) entry.session.close();
  }

  /**
   * The one place a session is let go of at once (`destroy()`, an abandoned or finished isolated stream, a session
   * error, `sessionTimeout`, `connectionTimeout`). A session that never became ready may still be connecting (TCP or
   * TLS): `session.destroy()` then only `end()`s its socket, which waits for that connect (until the kernel gives up
   * on a peer that never accepts), and Node emits no `'close'` for the session meanwhile. So its socket is destroyed
   * and the session closed here; a later `'close'` finds it closed.
   */
  private destroySession(entry: Http2PoolSession, reason: Http2CloseReason): void {
    entry.closeReason ??= reason;
    this.retire(entry);
    if (!entry.session.destroyed) entry.session.destroy();
    if (entry.wasReady) return;
    entry.socket?.destroy();
    this.sessionClosed(entry);
  }

  private closedBeforeReady(origin: Http2PoolOrigin): Error {
    return http2SessionClosedError(PACKAGE_PREFIX, origin.name);
  }

  private openSession(origin: Http2PoolOrigin, isolated: boolean): Http2PoolSession {
    const config = this.poolConfig;
    const connectOptions = config?.options.nodeHttp2ConnectOptions;
    // Read before `http2.connect()`, whose synchronous work (a TLS context built from the CA option: ~1 ms, ~10 ms
    // for the first) is part of establishing the session: `connectionTimeout` and the connect time count it (#34).
    const now = this.now();
    const session: ClientHttp2Session =
      connectOptions === undefined || connectOptions === null
        ? http2.connect(origin.key)
        : http2.connect(origin.key, connectOptions);
    const entry = new Http2SessionEntry<Http2StreamRequest>(
      this,
      origin,
      session,
      isolated,
      config?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY,
      now
    );
    origin.open.add(entry);
    if (!isolated) {
      origin.sessions.push(entry);
      origin.connecting++;
    }
    if (origin.counters !== undefined) origin.counters.monitor.connectionOpened(origin.counters);
    const connectionTimeout = config?.connectionTimeout;
    if (connectionTimeout !== undefined) this.sharedScheduler.arm(entry.connectDeadline, now, connectionTimeout);
    return entry;
  }

  /** Opens a session if the queue (plus `arriving` requests about to join it) needs one and the bound allows. */
  private maybeOpen(origin: Http2PoolOrigin, arriving = 0): void {
    const queued = origin.queued + arriving;
    if (queued === 0) return;
    const max = this.poolConfig?.maxSessionsPerOrigin ?? Number.POSITIVE_INFINITY;
    if (origin.sessions.length >= max) return;
    const cap = this.poolConfig?.maxConcurrentStreams ?? Number.POSITIVE_INFINITY;
    const perSession = Math.min(cap, origin.streamLimitHint ?? ASSUMED_STREAMS_PER_SESSION);
    if (queued <= (origin.connecting + origin.checking) * perSession) return;
    this.openSession(origin, false);
  }

  /** Moves queued streams onto `entry` while it has free slots. */
  private drain(entry: Http2PoolSession): void {
    const origin = entry.origin;
    while (origin.queued > 0 && entry.available) {
      const req = origin.dequeue()!;
      this.startOn(entry, req);
    }
  }

  private startOn(entry: Http2PoolSession, req: Http2StreamRequest): void {
    entry.active++;
    entry.streams++;
    if (entry.active > entry.maxActive) entry.maxActive = entry.active;
    req.entry = entry;
    req.onSession = true;
    const now = this.now();
    entry.origin.holdStart(req, now);
    this.updateRef(entry);
    req.slotTaken(now, entry.streams > 1);
    req.startStream(entry);
  }

  /** Keeps a session referenced exactly while it carries a stream or someone waits for it. */
  private updateRef(entry: Http2PoolSession): void {
    const want =
      entry.active > 0 ||
      (entry.state === SESSION_CONNECTING && (entry.isolatedRequest !== undefined || entry.origin.queued > 0));
    if (want === entry.referenced || entry.session.destroyed) return;
    entry.referenced = want;
    if (want) entry.session.ref();
    else entry.session.unref();
  }

  private onTick(now: number): boolean {
    const monitor = this.monitor;
    if (monitor === undefined || !monitor.detect) return false;
    monitor.sample(now);
    return monitor.wantsSamples;
  }

  /** The monitor saw an event after a quiet spell: sample again (when it detects). */
  resumeSampling(): void {
    if (this.monitor?.detect === true) this.sharedScheduler.ensureTicking();
  }
}

/** Counts a waiting request queued (`Http2Origin.countDeferred` callback: no closure). */
function countQueued(req: Http2StreamRequest): void {
  req.countQueued();
}
