/**
 * The standalone `PoolMonitor`'s per-request state (a handler-only bundle leaves it out). `trackRequest()` hangs one
 * `TrackedRequest` on the request under a symbol, and four module-level listeners find it there (no closures).
 * Errors are observed through `events.errorMonitor`, so an unhandled `'error'` still crashes as before. Nothing lists
 * the requests: a reading finds them through its links' `agent.sockets` and `agent.requests`.
 */
import { errorMonitor } from "node:events";
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { requestFinishedChannel } from "./diagnostics";
import type { Http1PoolMonitor } from "./http1-pool-monitor";
import { type RequestOutcome, recountOutcome } from "./origin-telemetry";
import type { PoolReading } from "./pool-reading";
import { type FinishedHttp1Request, httpRequestFinishedEvent } from "./request-finished";
import { timing } from "./timing";
import {
  addActiveAge,
  addUnreadResponse,
  type AgentMaps,
  agentMaps,
  type Http1Requests,
  type OriginState,
  outcomeOf,
  type ResponseProgress,
  type SocketState,
  socketStateOf,
  takeSocket,
} from "./tracking-state";
import { attachUnpooledRequest, unpooledClosed } from "./unpooled-request";

/** One request tracked by a standalone `PoolMonitor`, from `trackRequest()` to its `'close'`. @internal */
export class TrackedRequest implements FinishedHttp1Request, ResponseProgress {
  /** Counted as queued: it was the last entry of an `agent.requests` list when tracked, and has no socket yet. */
  isQueued = false;
  hasErrored = false;
  /** Why its caller destroyed it (`noteOutcome()`); the first note wins. */
  notedOutcome: "aborted" | "timed_out" | undefined = undefined;
  /** What its close was counted as (`undefined`: not closed yet). */
  countedUnder: RequestOutcome | undefined = undefined;
  /** `timing.now()` ms at its socket, and at its response (-1: none yet). */
  acquiredAt = -1;
  responseAt = -1;
  res: IncomingMessage | undefined = undefined;
  /** Its socket's state, when this monitor owns the socket. */
  socketState: SocketState | undefined = undefined;
  /** `socket.bytesRead` when the body last made progress, and when that was. */
  seenProgress = 0;
  progressAt = 0;
  isUnpooled = false;
  /** For `request:finished`: the method, the request's error, its raw `Content-Length`. */
  readonly trackedMethod: string | undefined;
  trackedError: unknown = undefined;
  readonly requestBodySize: unknown = undefined;

  /** Starts tracking `req` right after its creation; `agent`: `undefined` for a request sent outside the pool. */
  constructor(
    readonly core: Http1PoolMonitor,
    readonly originState: OriginState,
    readonly agent: Agent | undefined,
    readonly beganAt: number,
    req: ClientRequest
  ) {
    this.trackedMethod = req.method;
    if (core.wants(requestFinishedChannel)) this.requestBodySize = req.getHeader("content-length");
    (req as TrackedClientRequest)[kTrackedRequest] = this;
    req.on("socket", onRequestSocket);
    req.on("response", onRequestResponse);
    req.on("close", onRequestClose);
    req.on(errorMonitor, onRequestError);
    if (agent === undefined) {
      attachUnpooledRequest(this);
      return;
    }
    core.started(originState);
    originState.lastAgent = agent;
    this.enqueueIfQueued(req, agent);
  }

  /** A request that just queued is the last entry of one `agent.requests` list: the last name is tried first. */
  private enqueueIfQueued(req: ClientRequest, agent: Agent): void {
    const o = this.originState;
    const requests = agentMaps(agent).requests;
    const last = o.lastQueueLink;
    if (last === undefined || last.agent !== agent || !isLastQueued(requests[last.name], req)) {
      const name = queuedUnder(requests, req);
      if (name === undefined) return;
      const link = this.core.originLinks.link(o, agent, name);
      if (link !== undefined) o.lastQueueLink = link;
    }
    this.isQueued = true;
    o.queuedTracked++;
    this.core.enqueued(o);
  }

  private leaveQueue(): void {
    this.isQueued = false;
    const o = this.originState;
    o.queueShrank(--o.queuedTracked);
  }

  onSocket(socket: Socket): void {
    const core = this.core;
    if (this.acquiredAt >= 0 || core.coreDestroyed) return;
    const now = timing.now();
    this.acquiredAt = now;
    const agent = this.agent;
    if (agent === undefined) {
      if (socket.connecting) {
        unpooledConnecting.set(socket, this);
        socket.once("connect", onUnpooledConnect);
      }
      return;
    }
    const o = this.originState;
    const wasQueued = this.isQueued;
    if (wasQueued) this.leaveQueue();
    const firstSight = socketStateOf(socket) === undefined;
    const reused = takeSocket(core, o, socket, now, this, undefined, agent);
    // A socket adopted here: this monitor times its connect.
    const ss = this.socketState;
    if (firstSight && ss?.connecting) {
      socket.on("connect", onSocketConnect);
      if (ss.tls) socket.on("secureConnect", onSocketSecureConnect);
    }
    core.acquired(o, now - this.beganAt, reused, wasQueued);
  }

  onResponse(res: IncomingMessage): void {
    this.res = res;
    this.responseAt = this.progressAt = timing.now();
    this.seenProgress = res.socket?.bytesRead ?? 0;
  }

  onError(error: unknown): void {
    this.hasErrored = true;
    if (this.notedOutcome === undefined) this.trackedError ??= error;
  }

  onClose(): void {
    const core = this.core;
    if (core.coreDestroyed) return;
    if (core.wants(requestFinishedChannel)) core.emit(httpRequestFinishedEvent(this), requestFinishedChannel);
    if (this.isUnpooled) {
      this.countedUnder = unpooledClosed(this);
      return;
    }
    const o = this.originState;
    if (this.isQueued) this.leaveQueue();
    this.countedUnder = outcomeOf(this);
    core.finished(o, this.countedUnder);
    if (this.acquiredAt < 0) return;
    core.released(o, timing.now() - this.acquiredAt);
    const ss = this.socketState;
    if (ss === undefined) return;
    if (ss.link !== undefined) ss.link.linkCompletions++;
    ss.lastOutcome = this.notedOutcome;
    if (ss.current === this) ss.current = undefined;
  }

  /** Why the caller destroyed the request; after its close, moves its count from what it was counted as. */
  noteOutcome(outcome: "aborted" | "timed_out"): void {
    if (this.core.coreDestroyed || this.notedOutcome !== undefined) return;
    this.notedOutcome = outcome;
    const counted = this.countedUnder;
    if (counted === undefined) return;
    this.countedUnder = outcome;
    const o = this.originState;
    recountOutcome(this.isUnpooled ? o.unpooledCounters! : o, counted, outcome);
    if (this.isUnpooled) return;
    const ss = this.socketState;
    if (ss !== undefined && ss.current === undefined) ss.lastOutcome = outcome;
  }
}

const kTrackedRequest = Symbol("sockeye.pool-monitor.request");

type TrackedClientRequest = ClientRequest & { [kTrackedRequest]?: TrackedRequest };

/** The state `trackRequest()` / `trackUnpooledRequest()` hung on `req`, if any. @internal */
export function trackedRequestOf(req: ClientRequest): TrackedRequest | undefined {
  return (req as TrackedClientRequest)[kTrackedRequest];
}

function onRequestSocket(this: ClientRequest, socket: Socket): void {
  trackedRequestOf(this)!.onSocket(socket);
}

function onRequestResponse(this: ClientRequest, res: IncomingMessage): void {
  trackedRequestOf(this)!.onResponse(res);
}

function onRequestError(this: ClientRequest, error: unknown): void {
  trackedRequestOf(this)!.onError(error);
}

function onRequestClose(this: ClientRequest): void {
  trackedRequestOf(this)!.onClose();
}

function onSocketConnect(this: Socket): void {
  socketStateOf(this)?.onConnect(timing.now());
}

function onSocketSecureConnect(this: Socket): void {
  socketStateOf(this)?.onSecureConnect(timing.now());
}

/** Unpooled requests whose (new) socket is connecting: their TCP connect is timed in `origin.unpooled`. */
const unpooledConnecting = new WeakMap<Socket, TrackedRequest>();

function onUnpooledConnect(this: Socket): void {
  const st = unpooledConnecting.get(this);
  unpooledConnecting.delete(this);
  if (st === undefined || st.core.coreDestroyed) return;
  st.originState.unpooledCounters?.connect.record(timing.now() - st.acquiredAt);
}

function isLastQueued(q: ClientRequest[] | undefined, req: ClientRequest): boolean {
  return q !== undefined && q.length !== 0 && q[q.length - 1] === req;
}

function queuedUnder(requests: AgentMaps["requests"], req: ClientRequest): string | undefined {
  for (const name in requests) if (isLastQueued(requests[name], req)) return name;
  return undefined;
}

/** `o`'s request on `socket`, if this monitor tracks it there. */
function trackedOn(socket: Socket, o: OriginState): TrackedRequest | undefined {
  const st = socketStateOf(socket)?.current;
  return st instanceof TrackedRequest && st.originState === o ? st : undefined;
}

const NONE: never[] = [];

/** The standalone monitor's requests per link: those on its busy sockets and its first queued one. @internal */
export const trackedRequests: Http1Requests = {
  addAges(o: OriginState, now: number): void {
    for (const l of o.poolLinks) {
      const maps = agentMaps(l.agent);
      for (const socket of maps.sockets[l.name] ?? NONE) {
        const st = trackedOn(socket, o);
        if (st !== undefined) addActiveAge(l, now - st.acquiredAt);
      }
      for (const req of maps.requests[l.name] ?? NONE) {
        const st = trackedRequestOf(req);
        if (st?.originState === o && st.isQueued) {
          l.ages.oldestQueuedMs = now - st.beganAt;
          break;
        }
      }
    }
  },
  readUnread(o: OriginState, now: number, r: PoolReading): void {
    for (const l of o.poolLinks) {
      for (const socket of agentMaps(l.agent).sockets[l.name] ?? NONE) {
        const st = trackedOn(socket, o);
        if (st !== undefined) addUnreadResponse(r, st, now);
      }
    }
  },
};
