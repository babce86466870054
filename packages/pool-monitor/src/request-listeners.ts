/**
 * The standalone `PoolMonitor`'s request tracking (a handler-only bundle leaves it out). Cost per request: no
 * allocation, a look at `agent.requests` (empty unless something is queued) and up to three `timing.now()` reads. A
 * queued request joins its link's queue list, a responded one its origin's open-response list (intrusive, O(1)).
 * Per new connection: the socket's state and listeners, and one `lastIndexOf` to learn its agent name.
 */
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { requestFinishedChannel } from "./diagnostics";
import type { PoolReading } from "./pool-reading";
import { httpRequestFinishedEvent, noteRequestFacts } from "./request-finished";
import { timing } from "./timing";
import {
  addActiveAge,
  addUnreadResponse,
  adoptSocket,
  agentMaps,
  dequeueFromLink,
  enqueueOnLink,
  type Http1Core,
  type Http1Requests,
  type OriginState,
  outcomeOf,
  type PoolLink,
  queueHead,
  type RequestState,
  socketStateOf,
} from "./tracking-state";
import { countOutcome } from "./origin-telemetry";
import { attachUnpooledRequest, unpooledClosed, unpooledSocket } from "./unpooled-request";

/**
 * Starts tracking `st`, whose request `req` was just created with `st.agent` (before any await, so that a queued
 * request is still the last entry of `agent.requests`). @internal
 */
export function trackStarted(core: Http1Core, st: RequestState, o: OriginState, req: ClientRequest): void {
  st.core = core;
  st.originState = o;
  noteRequestFacts(st, req);
  core.started(o);
  const agent = st.agent;
  o.lastAgent = agent;
  enqueueIfQueued(core, st, req, agent, o);
}

/**
 * Starts tracking a request its embedder queues itself (no `ClientRequest` yet) under agent name `name`, counted as
 * queued on that name's link. `requestDispatched()` follows when the embedder creates the request. @internal
 */
export function trackQueued(core: Http1Core, st: RequestState, o: OriginState, name: string): void {
  st.core = core;
  st.originState = o;
  core.started(o);
  const agent = st.agent;
  o.lastAgent = agent;
  // The previous name first (one comparison); the agent's link map (a WeakMap lookup) only when it changes.
  const last = o.lastQueueLink;
  const link =
    last !== undefined && last.agent === agent && last.name === name ? last : core.originLinks.link(o, agent, name);
  if (link !== undefined) {
    o.lastQueueLink = link;
    st.gated = true;
    link.gateQueued++;
  }
  markQueued(core, st, o, link);
}

/**
 * The embedder dispatched a request it had queued (`trackQueued()`): `req` was just created. It stays counted as
 * queued until its `'socket'` (in `agent.requests` when the agent had to queue it too). No-op for other requests.
 * @internal
 */
export function requestDispatched(st: RequestState, req: ClientRequest): void {
  if (!st.gated) return;
  st.gated = false;
  noteRequestFacts(st, req);
  const link = st.queueLink;
  if (link !== undefined) link.gateQueued--;
  // Still queued (until its 'socket'): in agent.requests when the agent had to queue it (read there), else in flight
  // to a free or new socket. Remember the name for the next enqueueIfQueued().
  if (link !== undefined && isLastQueued(agentMaps(link.agent).requests[link.name], req))
    st.originState!.lastQueueLink = link;
}

/**
 * Starts tracking a request sent outside the pool (a one-off agent with no socket limit). Its events go through the
 * same paths, which hand it to `unpooled-request.ts`. @internal
 */
export function trackUnpooled(core: Http1Core, st: RequestState, o: OriginState, req: ClientRequest): void {
  st.core = core;
  st.originState = o;
  noteRequestFacts(st, req);
  attachUnpooledRequest(st);
}

/**
 * Right after `http.request()`, a request that could not get a socket is the last element of one `agent.requests`
 * list. The previous request's name is checked first, before a `for…in` scan of a dictionary-mode object.
 */
function enqueueIfQueued(core: Http1Core, st: RequestState, req: ClientRequest, agent: Agent, o: OriginState): void {
  const requests = agentMaps(agent).requests;
  const last = o.lastQueueLink;
  if (last !== undefined && last.agent === agent && isLastQueued(requests[last.name], req)) {
    markQueued(core, st, o, last);
    return;
  }
  for (const name in requests) {
    if (isLastQueued(requests[name], req)) {
      const link = core.originLinks.link(o, agent, name);
      if (link !== undefined) o.lastQueueLink = link;
      markQueued(core, st, o, link);
      return;
    }
  }
}

/** `req` is the last request of queue `q` (it was just appended there). */
function isLastQueued(q: ClientRequest[] | undefined, req: ClientRequest): boolean {
  return q !== undefined && q.length !== 0 && q[q.length - 1] === req;
}

function markQueued(core: Http1Core, st: RequestState, o: OriginState, link: PoolLink | undefined): void {
  st.isQueued = true;
  o.queuedTracked++;
  if (link !== undefined) enqueueOnLink(link, st);
  core.enqueued(o);
}

/** Leaves the queued state (at its socket or its close). */
function leaveQueue(st: RequestState, o: OriginState): void {
  st.isQueued = false;
  if (st.gated) {
    // Closed while the embedder still queued it (abort, a deadline, destroy()).
    st.gated = false;
    if (st.queueLink !== undefined) st.queueLink.gateQueued--;
  }
  o.queueShrank(--o.queuedTracked);
  dequeueFromLink(st);
}

/**
 * The request's `'socket'` event. `at`: the caller's `timing.now()` reading, if it has one (likewise below).
 * @internal
 */
export function requestSocket(st: RequestState, socket: Socket, at?: number): void {
  const core = st.core!;
  if (st.acquiredAt >= 0 || core.coreDestroyed) return;
  if (st.isUnpooled) {
    unpooledSocket(st, socket);
    return;
  }
  const o = st.originState!;
  const now = at ?? timing.now();
  st.acquiredAt = now;
  const wasQueued = st.isQueued;
  if (wasQueued) leaveQueue(st, o);
  const waitMs = now - st.beganAt;
  let reused = true;
  let ss = socketStateOf(socket);
  if (ss === undefined) {
    ss = adoptSocket(core, o, socket, now);
    reused = !ss.opened;
    if (ss.connecting) {
      socket.on("connect", onSocketConnect);
      if (ss.tls) socket.on("secureConnect", onSocketSecureConnect);
    }
    ss.link = core.originLinks.learnSocket(o, st.agent, socket);
  }
  if (ss.core === core) {
    ss.requests++;
    ss.current = st;
    st.socketState = ss;
  }
  core.acquired(o, waitMs, reused, wasQueued);
}

/** The request's `'response'` event. @internal */
export function requestResponse(st: RequestState, res: IncomingMessage, now?: number): void {
  if (st.core!.coreDestroyed) return;
  st.res = res;
  if (st.isUnpooled || st.closeCounted) return;
  st.responseAt = st.progressAt = now ?? timing.now();
  st.seenProgress = res.socket?.bytesRead ?? 0;
  openResponse(st.originState!, st);
}

/** The request's `'error'` event (call it before handling the error); `error`: the request's error, if known. @internal */
export function requestError(st: RequestState, error?: unknown): void {
  st.hasErrored = true;
  if (error !== undefined && st.notedOutcome === undefined) st.trackedError ??= error;
}

/** The request's `'close'` (idempotent). `error`: the error the caller saw, named in `request:finished`. @internal */
export function requestClosed(st: RequestState, error?: unknown, now?: number): void {
  if (st.closeCounted) return;
  st.closeCounted = true;
  if (error !== undefined) st.trackedError = error;
  const core = st.core!;
  if (core.coreDestroyed) return;
  if (core.wants(requestFinishedChannel)) core.emit(httpRequestFinishedEvent(st), requestFinishedChannel);
  if (st.isUnpooled) {
    st.countedUnder = unpooledClosed(st);
    return;
  }
  const o = st.originState!;
  if (st.isQueued) leaveQueue(st, o);
  closeResponse(o, st);
  const counted = outcomeOf(st);
  st.countedUnder = counted;
  core.finished(o, counted);
  if (st.acquiredAt >= 0) {
    core.released(o, (now ?? timing.now()) - st.acquiredAt);
    const ss = st.socketState;
    if (ss !== undefined) {
      if (ss.link !== undefined) ss.link.linkCompletions++;
      ss.lastOutcome = st.notedOutcome;
      if (ss.current === st) ss.current = undefined;
    }
  }
}

/**
 * Why the caller destroyed a request: counted as aborted / timed out rather than failed. The first outcome wins.
 * @internal
 */
export function noteRequestOutcome(st: RequestState, outcome: "aborted" | "timed_out"): void {
  const core = st.core!;
  if (core.coreDestroyed || st.notedOutcome !== undefined) return;
  st.notedOutcome = outcome;
  const o = st.originState!;
  if (st.isUnpooled) {
    if (st.closeCounted && st.countedUnder !== undefined && o.unpooledCounters !== undefined) {
      countOutcome(o.unpooledCounters, st.countedUnder, -1);
      countOutcome(o.unpooledCounters, outcome, 1);
      st.countedUnder = outcome;
    }
    return;
  }
  if (st.closeCounted && st.countedUnder !== undefined) {
    core.recount(o, st.countedUnder, outcome);
    st.countedUnder = outcome;
    const ss = st.socketState;
    if (ss !== undefined && ss.current === undefined) ss.lastOutcome = outcome;
  }
}

function onSocketConnect(this: Socket): void {
  socketStateOf(this)?.onConnect(timing.now());
}

function onSocketSecureConnect(this: Socket): void {
  socketStateOf(this)?.onSecureConnect(timing.now());
}

/** Puts a request whose response arrived on its origin's open-response list. O(1). */
function openResponse(o: OriginState, st: RequestState): void {
  st.open = true;
  st.openPrev = undefined;
  const head = o.openHead;
  st.openNext = head;
  if (head !== undefined) head.openPrev = st;
  o.openHead = st;
}

/** Takes a request off its origin's open-response list (no-op if it is not on it). O(1). */
function closeResponse(o: OriginState, st: RequestState): void {
  if (!st.open) return;
  st.open = false;
  const prev = st.openPrev;
  const next = st.openNext;
  if (prev !== undefined) prev.openNext = next;
  else o.openHead = next;
  if (next !== undefined) next.openPrev = prev;
  st.openPrev = st.openNext = undefined;
}

/**
 * The standalone monitor's requests as its reading sees them: the queue lists of its links and the requests on their
 * busy sockets (ages), and each origin's open-response list (unread bodies). @internal
 */
export const trackedRequests: Http1Requests = {
  addAges(o: OriginState, now: number): void {
    for (const l of o.poolLinks) {
      const sockets = agentMaps(l.agent).sockets[l.name];
      if (sockets !== undefined) {
        for (let j = 0; j < sockets.length; j++) {
          // `current` may be another tracker's request (the socket belongs to the first monitor that saw it).
          const st = socketStateOf(sockets[j])?.current as RequestState | undefined;
          if (st === undefined || st.originState !== o || st.acquiredAt < 0) continue;
          addActiveAge(l, now - st.acquiredAt);
        }
      }
      // The head of the link's queue list is this monitor's oldest request queued under the name.
      const head = queueHead(l);
      if (head !== undefined) l.ages.oldestQueuedMs = now - head.beganAt;
    }
  },
  readUnread(o: OriginState, now: number, limitMs: number, r: PoolReading): void {
    for (let st = o.openHead; st !== undefined; st = st.openNext) addUnreadResponse(r, st, now, limitMs);
  },
};
