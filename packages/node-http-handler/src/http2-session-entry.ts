/**
 * Http2SessionEntry: the pool's record of one `ClientHttp2Session`: its state (connecting → ready → closing →
 * closed), its open streams, its effective stream limit, its establishment deadline and its idle watch.
 *
 * A session is `ready` once the server's first SETTINGS frame arrived: only then is `maxConcurrentStreams` known, so
 * streams wait in the origin's queue until then.
 *
 * Listeners are shared module functions (session and socket point back to the entry through a symbol), so a session
 * costs its entry, one `Deadline` node (plus an `IdleWatch` with `sessionTimeout`) and seven listener slots; nothing
 * per stream. With `sessionTimeout`, Node's activity method of the session is replaced by a shared one
 * (`observeActivity()`), so the idle watch sees each frame when it happens.
 *
 * The session is `unref()`'d while it carries no stream and nobody waits for it (as upstream).
 */
import type { Http2CloseReason } from "@sockeye/pool-monitor";
import type { DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import type { ClientHttp2Session, Settings } from "node:http2";
import {
  Deadline,
  DeadlineKind,
  type DeadlineOwner,
  http2FrameError,
  type IdleTarget,
  IdleWatch,
} from "@sockeye/pool-monitor/internal";
import type { Http2Origin, Http2Waiter } from "./http2-origin";
import type { Http2SessionHost } from "./http2-pool-host";
import { type Http2SessionState, SESSION_CONNECTING, SESSION_READY } from "./http2-session-state";

const kEntry = Symbol("sockeye.http2SessionEntry");
let nextSessionId = 1;

type AnyEntry = Http2SessionEntry<any>;
type SessionWithEntry = ClientHttp2Session & { [kEntry]?: AnyEntry };

function entryOf(session: ClientHttp2Session): AnyEntry | undefined {
  return (session as SessionWithEntry)[kEntry];
}

function onSessionConnect(this: ClientHttp2Session): void {
  const entry = entryOf(this);
  if (entry !== undefined) entry.connectedAt = entry.host.now();
}

function onSocketConnect(this: { [kEntry]?: AnyEntry }): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.tcpAt = entry.host.now();
}

function onRemoteSettings(this: ClientHttp2Session, settings: Settings): void {
  const entry = entryOf(this);
  if (entry !== undefined) entry.host.sessionSettings(entry, settings);
}

function onGoaway(this: ClientHttp2Session, code: number): void {
  const entry = entryOf(this);
  if (entry !== undefined) entry.host.sessionGoaway(entry, code);
}

function onSessionError(this: ClientHttp2Session, error: Error): void {
  const entry = entryOf(this);
  if (entry !== undefined) entry.host.sessionError(entry, error);
}

function onSessionFrameError(this: ClientHttp2Session, type: number, code: number, id: number): void {
  const entry = entryOf(this);
  // Upstream drops the session on a session-level frame error; stream-level ones (id > 0) are the stream's business.
  if (entry !== undefined && id === 0) {
    entry.host.sessionError(entry, http2FrameError(type, id, code));
  }
}

function onSessionClose(this: ClientHttp2Session): void {
  const entry = entryOf(this);
  if (entry !== undefined) entry.host.sessionClosed(entry);
}

/**
 * `Http2Session.prototype[kUpdateTimer]`, which refreshes `session.setTimeout()`: Node calls it for every frame it
 * hands to JavaScript and every write. Looked up once by its symbol's description (`null`: this Node has none).
 */
let activityKey: symbol | null | undefined;

function findActivityKey(session: object): symbol | null {
  if (activityKey !== undefined) return activityKey;
  activityKey = null;
  for (let proto = Object.getPrototypeOf(session); proto !== null; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertySymbols(proto)) {
      if (key.description === "kUpdateTimer" && typeof proto[key] === "function") return (activityKey = key);
    }
  }
  return null;
}

/** Replaces Node's activity method on a watched session: restart the session's idle watch, then Node's own. */
function onSessionActivity(this: ClientHttp2Session): void {
  const entry = entryOf(this);
  if (entry === undefined) return;
  const idle = entry.idle;
  if (idle !== undefined) idle.lastActive = entry.host.now();
  entry.nodeActivity?.call(this);
}

/** What the entry uses of the session's socket. @internal */
export interface SocketLike {
  once(event: string, fn: () => void): SocketLike | undefined;
  destroy(): void;
}

/**
 * @typeParam R - the pool's request type (its isolated request).
 * @internal
 */
export class Http2SessionEntry<R extends Http2Waiter<R>>
  implements DeadlineOwner<typeof DeadlineKind.Connection>, IdleTarget
{
  readonly id = nextSessionId++;
  state: Http2SessionState = SESSION_CONNECTING;
  /** Streams open on the session now. */
  active = 0;
  /** Streams opened over its life. */
  streams = 0;
  maxActive = 0;
  /** Effective stream limit: min(peer limit, handler cap); the cap alone until the peer's SETTINGS arrived. */
  streamLimit: number;
  /** The peer's `maxConcurrentStreams`, once known. */
  peerMaxConcurrentStreams: number | undefined = undefined;
  referenced = true;
  /** The session was established (its first SETTINGS arrived) at some point. */
  wasReady = false;
  readonly createdAt: number;
  tcpAt = -1;
  connectedAt = -1;
  closeReason: Http2CloseReason | undefined = undefined;
  error: Error | undefined = undefined;
  /** The one request of an isolated session (until its stream starts). */
  isolatedRequest: R | undefined = undefined;
  /** An isolated session counted in `origin.isolatedOpen` (not an event stream), until it closes. */
  boundedIsolated = false;
  /** When a stream on this session last made progress, or the session became ready (`timing.now()` ms). */
  socketActiveAt = 0;
  /** Frames received by streams on this session so far (what a pending silence check compares). */
  activitySeq = 0;
  /** `activitySeq` when a pending silence check was scheduled, -1 for none; while pending it takes no stream. */
  silenceSeq = -1;
  /**
   * The peer refused a stream while others were open on the session (`Http2SessionPool.streamRefused`): it takes no
   * new stream until one of its streams ends.
   */
  refusing = false;
  /**
   * The session's own socket. `session.destroy()` only `end()`s it, which waits for a connect that may never come:
   * the pool destroys it when it lets go of a session that never became ready.
   */
  socket: SocketLike | undefined = undefined;
  readonly connectDeadline: Deadline<typeof DeadlineKind.Connection>;
  /** The `sessionTimeout` watch, once started. */
  idle: IdleWatch | undefined = undefined;
  /** `activity()` when the watch last (re)started. */
  private idleBytes = 0;
  /** Node's own activity method, once `observeActivity()` replaced it on the session (see `onSessionActivity`). */
  nodeActivity: (() => void) | undefined = undefined;

  constructor(
    readonly host: Http2SessionHost<Http2SessionEntry<R>>,
    readonly origin: Http2Origin<Http2SessionEntry<R>, R>,
    readonly session: ClientHttp2Session,
    readonly isolated: boolean,
    streamCap: number,
    now: number
  ) {
    this.streamLimit = isolated ? 1 : streamCap;
    this.createdAt = now;
    this.connectDeadline = new Deadline(this, DeadlineKind.Connection);
    (session as SessionWithEntry)[kEntry] = this;
    session.on("connect", onSessionConnect);
    session.on("remoteSettings", onRemoteSettings);
    session.on("goaway", onGoaway);
    session.on("error", onSessionError);
    session.on("frameError", onSessionFrameError);
    session.on("close", onSessionClose);
    const socket = session.socket as unknown as SocketLike | undefined;
    if (socket !== undefined && typeof socket.once === "function") {
      (socket as { [kEntry]?: AnyEntry })[kEntry] = this;
      // `once` returns its emitter: the socket itself, not the session's proxy of it (which refuses `destroy()`).
      const raw = socket.once("connect", onSocketConnect);
      if (raw !== undefined && raw !== null && typeof raw.destroy === "function") this.socket = raw;
    }
  }

  /** Whether the session can take one more stream now. */
  get available(): boolean {
    // Node may destroy a session (a protocol error on Node 22+) a few ticks before its 'error'/'close' events reach
    // the pool: never hand such a session a new stream.
    return (
      this.state === SESSION_READY &&
      this.active < this.streamLimit &&
      this.silenceSeq < 0 &&
      !this.refusing &&
      !this.session.destroyed &&
      !this.session.closed
    );
  }

  /**
   * From now on every activity Node sees restarts the idle watch, as `session.setTimeout()` does. Without Node's
   * method, `activity()` falls back to the socket's byte counters.
   */
  observeActivity(): void {
    if (this.nodeActivity !== undefined) return;
    const key = findActivityKey(this.session);
    if (key === null) return;
    const session = this.session as unknown as Record<symbol, () => void>;
    this.nodeActivity = session[key];
    session[key] = onSessionActivity;
  }

  /** Starts the `sessionTimeout` watch (`limitMs`) at `now`, on `scheduler`. */
  watchIdle(scheduler: DeadlineScheduler, limitMs: number, now: number): void {
    this.observeActivity();
    this.idle ??= new IdleWatch(scheduler, this);
    this.idleBytes = this.activity();
    this.idle.start(limitMs, now);
  }

  /**
   * What the watch compares at its limit: a constant when activity is observed; otherwise the socket's byte counters
   * (-1 once destroyed), whose change restarts the watch (up to one more period).
   */
  private activity(): number {
    if (this.nodeActivity !== undefined) return 0;
    if (this.session.destroyed) return -1;
    const socket = this.session.socket as unknown as { bytesRead?: number; bytesWritten?: number } | undefined;
    return socket === undefined || socket === null ? -1 : (socket.bytesRead ?? 0) + (socket.bytesWritten ?? 0);
  }

  /** IdleTarget: `sessionTimeout` passed with no activity (unreported traffic restarts it). */
  onIdle(now: number): void {
    const idle = this.idle as IdleWatch;
    const bytes = this.activity();
    if (bytes !== this.idleBytes) {
      this.idleBytes = bytes;
      idle.start(idle.limitMs, now);
      return;
    }
    this.host.sessionIdle(this);
  }

  /** `connectionTimeout` passed before the session was established. */
  onDeadline(): void {
    this.host.connectTimedOut(this);
  }
}
