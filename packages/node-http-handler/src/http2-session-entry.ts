/**
 * Http2SessionEntry: the pool's record of one `ClientHttp2Session`. It is `ready` once the server's first SETTINGS
 * arrived (only then is its stream limit known). Listeners are shared module functions (session and socket point
 * back to the entry through a symbol): a session costs its entry, one `Deadline` node (plus an `IdleWatch` with
 * `sessionTimeout`, fed by Node's own activity method, replaced on the session) and seven listener slots.
 */
import type { ClientHttp2Session, Settings } from "node:http2";
import type { Socket } from "node:net";
import {
  Deadline,
  DeadlineKind,
  type DeadlineOwner,
  type DeadlineScheduler,
  http2FrameError,
  type IdleTarget,
  IdleWatch,
  timing,
} from "@sockeye/pool-monitor/internal";
import type { Http2Origin, Http2Waiter } from "./http2-origin";

/** A session's life: connecting (TCP, TLS, first SETTINGS) → ready → closing (no new stream) → closed. @internal */
export type Http2SessionState = "connecting" | "ready" | "closing" | "closed";

/** Why the pool let go of a session, first cause wins (`undefined`: the peer or the network closed it). @internal */
export type Http2CloseCause = "local" | "goaway" | "idle" | "connect_timeout" | "error";

/** What an entry forwards to its pool (`Http2SessionPool`, which implements it: no import cycle). @internal */
export interface Http2SessionHost<R extends Http2Waiter<R>> {
  sessionSettings(entry: Http2SessionEntry<R>, settings: Settings): void;
  sessionGoaway(entry: Http2SessionEntry<R>, code: number): void;
  sessionError(entry: Http2SessionEntry<R>, error: Error): void;
  sessionClosed(entry: Http2SessionEntry<R>): void;
  sessionIdle(entry: Http2SessionEntry<R>): void;
  connectTimedOut(entry: Http2SessionEntry<R>): void;
}

const kEntry = Symbol("sockeye.http2SessionEntry");
let nextSessionId = 1;

type AnyEntry = Http2SessionEntry<any>;
type Owned = { [kEntry]?: AnyEntry };

function onSessionConnect(this: Owned): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.connectedAt = timing.now();
}

function onSocketConnect(this: Owned): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.tcpAt = timing.now();
}

function onRemoteSettings(this: Owned, settings: Settings): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.host.sessionSettings(entry, settings);
}

function onGoaway(this: Owned, code: number): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.host.sessionGoaway(entry, code);
}

function onSessionError(this: Owned, error: Error): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.host.sessionError(entry, error);
}

function onSessionFrameError(this: Owned, type: number, code: number, id: number): void {
  const entry = this[kEntry];
  // A session-level frame error drops the session (as upstream); a stream's (id > 0) is the stream's business.
  if (entry !== undefined && id === 0) entry.host.sessionError(entry, http2FrameError(type, id, code));
}

function onSessionClose(this: Owned): void {
  const entry = this[kEntry];
  if (entry !== undefined) entry.host.sessionClosed(entry);
}

/** `Http2Session.prototype[kUpdateTimer]`: Node calls it for every frame and write (`session.setTimeout()`'s feed). */
let activityKey: symbol | undefined;

function findActivityKey(session: object): symbol | undefined {
  for (let proto = Object.getPrototypeOf(session); activityKey === undefined && proto !== null; ) {
    activityKey = Object.getOwnPropertySymbols(proto).find((key) => key.description === "kUpdateTimer");
    proto = Object.getPrototypeOf(proto);
  }
  return activityKey;
}

/** Replaces Node's activity method on a watched session: restart the session's idle watch, then Node's own. */
function onSessionActivity(this: ClientHttp2Session & Owned): void {
  const entry = this[kEntry];
  if (entry === undefined) return;
  if (entry.idle !== undefined) entry.idle.lastActive = timing.now();
  entry.nodeActivity?.call(this);
}

/** @typeParam R - the pool's request type. @internal */
export class Http2SessionEntry<R extends Http2Waiter<R>>
  implements DeadlineOwner<typeof DeadlineKind.Connection>, IdleTarget
{
  readonly id = nextSessionId++;
  state: Http2SessionState = "connecting";
  /** Streams open on the session now, at most at once, and over its life. */
  active = 0;
  maxActive = 0;
  streams = 0;
  /** min(peer limit, handler cap); the cap alone until the peer's SETTINGS arrived. */
  streamLimit: number;
  peerMaxConcurrentStreams: number | undefined = undefined;
  referenced = true;
  wasReady = false;
  /** `timing.now()` ms at creation, TCP connect and establishment (-1: not yet). */
  readonly createdAt: number;
  tcpAt = -1;
  connectedAt = -1;
  closedBy: Http2CloseCause | undefined = undefined;
  error: Error | undefined = undefined;
  /** The one request of an isolated session (until its stream starts). */
  isolatedRequest: R | undefined = undefined;
  /** An isolated session counted in `origin.isolatedOpen` (not an event stream), until it closes. */
  boundedIsolated = false;
  /** When a stream on it last made progress, or it became ready (`timing.now()` ms). */
  socketActiveAt = 0;
  /** Frames its streams received, and their count when a pending silence check began (-1: none). */
  activitySeq = 0;
  silenceSeq = -1;
  /** The peer refused a stream while others were open on the session: no new stream until one of them ends. */
  refusing = false;
  /** Its own socket, destroyed with a session that never became ready (`session.destroy()` only `end()`s it). */
  readonly socket: Socket;
  readonly connectDeadline: Deadline<typeof DeadlineKind.Connection>;
  idle: IdleWatch | undefined = undefined;
  nodeActivity: (() => void) | undefined = undefined;

  constructor(
    readonly host: Http2SessionHost<R>,
    readonly origin: Http2Origin<Http2SessionEntry<R>, R>,
    readonly session: ClientHttp2Session,
    readonly isolated: boolean,
    streamCap: number,
    now: number
  ) {
    this.streamLimit = isolated ? 1 : streamCap;
    this.createdAt = now;
    this.connectDeadline = new Deadline(this, DeadlineKind.Connection);
    (session as Owned)[kEntry] = this;
    session.on("connect", onSessionConnect);
    session.on("remoteSettings", onRemoteSettings);
    session.on("goaway", onGoaway);
    session.on("error", onSessionError);
    session.on("frameError", onSessionFrameError);
    session.on("close", onSessionClose);
    const socket = session.socket as Socket & Owned;
    socket[kEntry] = this;
    // `once` returns its emitter: the socket itself, not the session's proxy of it (which refuses `destroy()`).
    this.socket = socket.once("connect", onSocketConnect);
  }

  /** Whether the session can take one more stream now. */
  get available(): boolean {
    // Node may destroy a session a few ticks before its 'error'/'close' reach the pool.
    return (
      this.state === "ready" &&
      this.active < this.streamLimit &&
      this.silenceSeq < 0 &&
      !this.refusing &&
      !this.session.destroyed &&
      !this.session.closed
    );
  }

  /** Starts the `sessionTimeout` watch: from now on every activity Node sees restarts it. */
  watchIdle(scheduler: DeadlineScheduler, limitMs: number, now: number): void {
    const key = findActivityKey(this.session);
    if (this.nodeActivity === undefined && key !== undefined) {
      const session = this.session as unknown as Record<symbol, () => void>;
      this.nodeActivity = session[key];
      session[key] = onSessionActivity;
    }
    this.idle ??= new IdleWatch(scheduler, this);
    this.idle.start(limitMs, now);
  }

  /** IdleTarget: `sessionTimeout` passed. */
  onIdle(): void {
    this.host.sessionIdle(this);
  }

  /** `connectionTimeout` passed before the session was established. */
  onDeadline(): void {
    this.host.connectTimedOut(this);
  }
}
