/**
 * Hot path: attaching a request and the shared, module-level listeners.
 *
 * Cost per request: one `RequestState` allocation (`TrackedRequestState`, which also serves as the embedder's
 * `RequestTracking` handle), a look at `agent.requests` (empty unless something is queued) and three
 * `timing.now()` reads (socket, response, close; none when an embedder forwards its own readings with the events:
 * each read is ~250 instructions, `performance` being a global accessor). How the request's events reach it depends
 * on the caller:
 * - `attachRequest()` (an embedder with its own per-request object, e.g. the handler): the state is only returned;
 *   the embedder keeps it and calls its `onSocket()` / `onResponse()` / `onError()` / `onClose()`, so the
 *   `ClientRequest` gets no extra property (no hidden-class transition) and no listener;
 * - the standalone `PoolMonitor.trackRequest()` hangs the state on the request and calls the same methods from its
 *   own module-level listeners or the caller's forwarded events (`request-forwarding.ts`, a module only `PoolMonitor`
 *   imports, so a handler-only bundle leaves it out).
 * A queued request is appended to its link's queue list and a responded one to its origin's open-response list
 * (intrusive lists, O(1), see `tracking-state.ts`). Per new connection: up to six listeners on the socket plus
 * one `lastIndexOf` to learn its agent name. Events are built only if `subscribe()` listeners or
 * diagnostics-channel subscribers exist.
 *
 * Requests sent outside the pool (`attachUnpooledRequest()`, one-off agents) go through the same paths and
 * leave at the first branch for `unpooled-request.ts`; socket completion also records the longest
 * hold time of the sample (the detector's expected hold) and counts the completion on the socket's
 * link (per-link evidence, see `tracking-state.ts`).
 *
 * Socket errors are observed through `events.errorMonitor`, which does not count as handling the error.
 */
import { errorMonitor } from "node:events";
import type { Agent, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { requestFinishedChannel } from "./diagnostics";
import type { CloseReason } from "./pool-stats";
import { httpRequestFinishedEvent, noteRequestFacts } from "./request-finished";
import { timing } from "./timing";
import {
  agentMaps,
  dequeueFromLink,
  enqueueOnLink,
  type Http1Core,
  type OriginState,
  outcomeOf,
  type PoolLink,
  RequestState,
  type RequestTracking,
  SocketState,
  setSocketState,
  socketStateOf,
  type TrackedRequest,
} from "./tracking-state";
import { countOutcome } from "./origin-telemetry";
import { attachUnpooledRequest, unpooledClosed, unpooledSocket } from "./unpooled-request";

/** A request's state, and the handle an embedder forwards the request's events to. @internal */
export class TrackedRequestState extends RequestState implements RequestTracking {
  onSocket(socket: Socket, now?: number): void {
    requestSocket(this, socket, now);
  }

  onResponse(res: IncomingMessage, now?: number): void {
    requestResponse(this, res, now);
  }

  onError(error?: unknown): void {
    this.errored = true;
    if (error !== undefined && this.outcome === undefined) this.error ??= error;
  }

  onClose(error?: unknown, now?: number): void {
    if (error !== undefined && !this.closed) this.error = error;
    requestClosed(this, now);
  }

  dispatched(req: TrackedRequest): void {
    requestDispatched(this, req);
  }

  noteOutcome(outcome: "aborted" | "timed_out"): void {
    noteRequestOutcome(this, outcome);
  }
}

/** @internal */
export function attachRequest(
  core: Http1Core,
  req: TrackedRequest,
  agent: Agent,
  o: OriginState,
  startedAt: number
): TrackedRequestState {
  const st = new TrackedRequestState(core, o, agent, startedAt);
  noteRequestFacts(st, req);
  core.started(o);
  o.lastAgent = agent;
  enqueueIfQueued(core, st, req, agent, o);
  return st;
}

/**
 * Starts tracking a request its embedder queues itself (it has no `ClientRequest` yet) under agent name `name`:
 * counted as queued on that name's link (`gateQueued`, read with `agent.requests[name]`) and on the link's queue list
 * (oldest queued age), `request:enqueued` emitted. `dispatched()` follows when the embedder creates the request.
 * @internal
 */
export function attachQueued(
  core: Http1Core,
  agent: Agent,
  name: string,
  o: OriginState,
  startedAt: number
): TrackedRequestState {
  const st = new TrackedRequestState(core, o, agent, startedAt);
  core.started(o);
  o.lastAgent = agent;
  // The name the origin's previous request was queued under first (one comparison; the embedder passes the same
  // string each time), the agent's link map (a WeakMap lookup) only when it changes.
  const last = o.lastQueueLink;
  const link =
    last !== undefined && last.agent === agent && last.name === name ? last : core.links.link(o, agent, name);
  if (link !== undefined) {
    o.lastQueueLink = link;
    st.gated = true;
    link.gateQueued++;
  }
  markQueued(core, st, o, link);
  return st;
}

/** The embedder dispatched a request it had queued (`attachQueued()`): it now waits for its socket in Node's hands. */
function requestDispatched(st: RequestState, req: TrackedRequest): void {
  if (!st.gated) return;
  st.gated = false;
  noteRequestFacts(st, req);
  const link = st.queueLink;
  if (link !== undefined) link.gateQueued--;
  // Still queued (until its 'socket'): in agent.requests when the agent had to queue it (read there), else in flight
  // to a free or new socket. Remember the name for the next enqueueIfQueued().
  if (link !== undefined && isLastQueued(agentMaps(link.agent).requests[link.name], req))
    st.origin.lastQueueLink = link;
}

/**
 * Starts tracking a request sent outside the pool (a one-off agent with no socket limit). Its events go through the
 * same paths, which hand it to `unpooled-request.ts`.
 * @internal
 */
export function attachUnpooled(
  core: Http1Core,
  req: TrackedRequest,
  o: OriginState,
  startedAt: number
): TrackedRequestState {
  // The agent is never read for an unpooled request: `undefined` as any stands for "no pool".
  const st = new TrackedRequestState(core, o, undefined as never, startedAt);
  noteRequestFacts(st, req);
  attachUnpooledRequest(st);
  return st;
}

/**
 * Right after `http.request()`, a request that could not get a socket is the last element of one `agent.requests`
 * list (usually none: Node deletes drained keys). A queued request is counted and appended to its link's queue list.
 * The name the origin's previous request was queued under is checked first, without the `for…in` scan (which
 * enumerates the keys of an object Node keeps in dictionary mode) or the link lookup.
 */
function enqueueIfQueued(core: Http1Core, st: RequestState, req: TrackedRequest, agent: Agent, o: OriginState): void {
  const requests = agentMaps(agent).requests;
  const last = o.lastQueueLink;
  if (last !== undefined && last.agent === agent && isLastQueued(requests[last.name], req)) {
    markQueued(core, st, o, last);
    return;
  }
  for (const name in requests) {
    if (isLastQueued(requests[name], req)) {
      const link = core.links.link(o, agent, name);
      if (link !== undefined) o.lastQueueLink = link;
      markQueued(core, st, o, link);
      return;
    }
  }
}

/** `req` is the last request of queue `q` (it was just appended there). */
function isLastQueued(q: TrackedRequest[] | undefined, req: TrackedRequest): boolean {
  return q !== undefined && q.length !== 0 && q[q.length - 1] === req;
}

function markQueued(core: Http1Core, st: RequestState, o: OriginState, link: PoolLink | undefined): void {
  st.queued = true;
  o.queuedTracked++;
  if (link !== undefined) enqueueOnLink(link, st);
  core.enqueued(o);
}

/** Leaves the queued state (at its socket or its close). */
function leaveQueue(st: RequestState, o: OriginState): void {
  st.queued = false;
  if (st.gated) {
    // Closed while the embedder still queued it (abort, a deadline, destroy()).
    st.gated = false;
    if (st.queueLink !== undefined) st.queueLink.gateQueued--;
  }
  o.queueShrank(--o.queuedTracked);
  dequeueFromLink(st);
}

/** `at`: the caller's `timing.now()` reading at the event, if it has one (one clock read per event, not two). */
function requestSocket(st: RequestState, socket: Socket, at?: number): void {
  if (st.acquiredAt >= 0 || st.core.destroyed) return;
  if (st.unpooled) {
    unpooledSocket(st, socket);
    return;
  }
  const core = st.core;
  const o = st.origin;
  const now = at ?? timing.now();
  st.acquiredAt = now;
  const wasQueued = st.queued;
  if (wasQueued) leaveQueue(st, o);
  const waitMs = now - st.startedAt;
  let reused = true;
  let ss = socketStateOf(socket);
  if (ss === undefined) {
    const connecting = socket.connecting;
    ss = new SocketState(core, o, now, connecting, (socket as TLSSocket).encrypted === true);
    setSocketState(socket, ss);
    socket.on("close", onSocketClose);
    (socket as NodeJS.EventEmitter).on(errorMonitor, onSocketError);
    socket.on("end", onSocketEnd);
    socket.on("timeout", onSocketTimeout);
    if (connecting) {
      socket.on("connect", onSocketConnect);
      if (ss.tls) socket.on("secureConnect", onSocketSecureConnect);
    } else {
      ss.readyAt = now;
    }
    // A socket first seen here is new unless it already carried traffic (adopted from before tracking began).
    if (connecting || (socket.bytesWritten === 0 && socket.bytesRead === 0)) {
      core.connectionOpened(o);
      reused = false;
    }
    ss.link = core.links.learnSocket(o, st.agent, socket);
  }
  if (ss.core === core) {
    ss.requests++;
    ss.current = st;
    st.socket = ss;
  }
  core.acquired(o, waitMs, reused, wasQueued);
}

function requestResponse(st: RequestState, res: IncomingMessage, now?: number): void {
  if (st.core.destroyed) return;
  st.res = res;
  if (st.unpooled || st.closed) return;
  st.responseAt = st.progressAt = now ?? timing.now();
  st.lastBytes = res.socket?.bytesRead ?? 0;
  st.origin.openResponse(st);
}

function requestClosed(st: RequestState, now?: number): void {
  if (st.closed) return;
  st.closed = true;
  const core = st.core;
  if (core.destroyed) return;
  if (core.wants(requestFinishedChannel)) core.emit(httpRequestFinishedEvent(st), requestFinishedChannel);
  if (st.unpooled) {
    unpooledClosed(st);
    return;
  }
  const o = st.origin;
  if (st.queued) leaveQueue(st, o);
  o.closeResponse(st);
  const counted = outcomeOf(st);
  st.countedAs = counted;
  core.finished(o, counted);
  if (st.acquiredAt >= 0) {
    core.released(o, (now ?? timing.now()) - st.acquiredAt);
    const ss = st.socket;
    if (ss !== undefined) {
      if (ss.link !== undefined) ss.link.completions++;
      ss.lastOutcome = st.outcome;
      if (ss.current === st) ss.current = undefined;
    }
  }
}

/**
 * Why the caller destroyed a request: counted as aborted / timed out rather than failed (and its socket's close
 * reason says so). Before or after the request closed; the first outcome noted wins.
 * @internal
 */
export function noteRequestOutcome(st: RequestState, outcome: "aborted" | "timed_out"): void {
  if (st.core.destroyed || st.outcome !== undefined) return;
  st.outcome = outcome;
  if (st.unpooled) {
    if (st.closed && st.countedAs !== undefined && st.origin.unpooled !== undefined) {
      countOutcome(st.origin.unpooled, st.countedAs, -1);
      countOutcome(st.origin.unpooled, outcome, 1);
      st.countedAs = outcome;
    }
    return;
  }
  if (st.closed && st.countedAs !== undefined) {
    st.core.recount(st.origin, st.countedAs, outcome);
    st.countedAs = outcome;
    if (st.socket !== undefined && st.socket.current === undefined) st.socket.lastOutcome = outcome;
  }
}

function onSocketConnect(this: Socket): void {
  const ss = socketStateOf(this);
  if (ss === undefined || ss.core.destroyed) return;
  const now = timing.now();
  ss.tcpAt = now;
  const connectMs = now - ss.createdAt;
  ss.core.connected(ss.origin, connectMs);
  if (!ss.tls) {
    ss.readyAt = now;
    ss.core.connectionReady(ss.origin, connectMs, null);
  }
}

function onSocketSecureConnect(this: Socket): void {
  const ss = socketStateOf(this);
  if (ss === undefined || ss.core.destroyed) return;
  const now = timing.now();
  const tcpAt = ss.tcpAt >= 0 ? ss.tcpAt : ss.createdAt;
  const tlsMs = now - tcpAt;
  ss.readyAt = now;
  ss.core.connectionReady(ss.origin, tcpAt - ss.createdAt, tlsMs);
}

function onSocketError(this: Socket): void {
  const ss = socketStateOf(this);
  if (ss === undefined || ss.core.destroyed) return;
  ss.errored = true;
  ss.core.connectionError(ss.origin);
}

function onSocketEnd(this: Socket): void {
  const ss = socketStateOf(this);
  if (ss !== undefined) ss.remoteEnded = true;
}

function onSocketTimeout(this: Socket): void {
  const ss = socketStateOf(this);
  if (ss !== undefined) ss.timedOut = true;
}

function onSocketClose(this: Socket): void {
  const ss = socketStateOf(this);
  if (ss === undefined || ss.closed) return;
  ss.closed = true;
  setSocketState(this, undefined);
  if (ss.core.destroyed) return;
  ss.core.connectionClosed(ss.origin, timing.now() - ss.createdAt, ss.readyAt >= 0, ss.requests, closeReason(ss));
}

function closeReason(ss: SocketState): CloseReason {
  if (ss.closedBy !== undefined) return ss.closedBy;
  if (ss.errored && ss.connecting && ss.readyAt < 0) return "connect_error";
  const outcome = ss.current?.outcome ?? ss.lastOutcome;
  if (outcome === "aborted") return "aborted";
  if (outcome === "timed_out") return "timed_out";
  if (ss.errored) return "error";
  if (ss.timedOut) return "timeout";
  if (ss.remoteEnded) return "server_closed";
  return "local";
}
