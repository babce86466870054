/**
 * The node:http monitor's bookkeeping objects.
 *
 * `agent.getName(options)` cannot be parsed back into an origin, so each `OriginState` keeps the (agent, name) pairs
 * it was seen under (`poolLinks`), learnt from the handler's gate, or by the standalone monitor from
 * `agent.requests[name]` / `agent.sockets[name]`. Reading an origin is O(links); an idle link is dropped
 * (`dropLinkIfIdle()`), so a replaced agent is not counted forever. `maxSockets` is summed over the busy links; when
 * some link is full with a queue, the sample covers those links only.
 */
import { errorMonitor } from "node:events";
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { OriginTelemetry, type RequestOutcome } from "./origin-telemetry";
import type { CloseReasonOf } from "./pool-stats";
import { type PoolReading, SampleEvidence, type UnreadBody, type UnreadWatch } from "./pool-reading";
import type { TelemetryCore } from "./telemetry-core";
import { timing } from "./timing";

/** Node's agent maps, typed as they are at runtime. @internal */
export interface AgentMaps {
  readonly sockets: Record<string, Socket[] | undefined>;
  readonly freeSockets: Record<string, Socket[] | undefined>;
  readonly requests: Record<string, ClientRequest[] | undefined>;
  readonly maxSockets: number;
}

/** @internal */
export function agentMaps(agent: Agent): AgentMaps {
  return agent as unknown as AgentMaps;
}

/** The node:http monitor as its request and socket listeners see it: the telemetry core plus its agent links. @internal */
export type Http1Core = TelemetryCore<OriginState> & { readonly originLinks: AgentLinks };

/** Which origin each (agent, name) pair belongs to, per agent, for names already linked to an origin. @internal */
export class AgentLinks {
  readonly agentNames = new WeakMap<Agent, Map<string, PoolLink>>();

  /** Links `name` in `agent` to `o`; `undefined` if another origin owns the name. */
  link(o: OriginState, agent: Agent, name: string): PoolLink | undefined {
    let names = this.agentNames.get(agent);
    if (names === undefined) this.agentNames.set(agent, (names = new Map()));
    const known = names.get(name);
    if (known !== undefined) return known.origin === o ? known : undefined;
    const link = new PoolLink(agent, name, o);
    names.set(name, link);
    o.poolLinks.add(link);
    return link;
  }

  /** Forgets an idle link, here and in its origin's `poolLinks`. O(1). */
  unlink(link: PoolLink): void {
    const o = link.origin;
    o.poolLinks.delete(link);
    if (o.lastQueueLink === link) o.lastQueueLink = undefined;
    const names = this.agentNames.get(link.agent);
    if (names === undefined || names.get(link.name) !== link) return;
    names.delete(link.name);
    if (names.size === 0) this.agentNames.delete(link.agent);
  }

  /** The link of a newly seen socket (once per connection). */
  learnSocket(o: OriginState, agent: Agent, socket: Socket): PoolLink | undefined {
    const sockets = agentMaps(agent).sockets;
    for (const link of o.poolLinks) {
      if (link.agent !== agent) continue;
      const list = sockets[link.name];
      if (list !== undefined && list.lastIndexOf(socket) !== -1) return link;
    }
    const names = this.agentNames.get(agent);
    for (const name in sockets) {
      if (names?.has(name)) continue;
      const list = sockets[name];
      if (list !== undefined && list.lastIndexOf(socket) !== -1) return this.link(o, agent, name);
    }
    return undefined;
  }
}

/** One (agent, name) pair under which an origin's sockets and requests live. @internal */
export class PoolLink {
  /** Requests on this link's sockets that released them since the last sample. */
  linkCompletions = 0;
  /** Requests the handler's gate queues under this name. */
  gateQueued = 0;
  /** During a reading: its figures, the ages its tracker added (`Http1Requests.addAges()`), then its counts. */
  readonly ages = new SampleEvidence();

  constructor(
    readonly agent: Agent,
    readonly name: string,
    readonly origin: OriginState
  ) {}
}

/** The requests an `Http1PoolMonitor` reading covers (the handler's, or the standalone monitor's). @internal */
export interface Http1Requests {
  /** Adds to `o`'s links' `ages` the ages of its requests holding a socket and of its oldest queued one. */
  addAges(o: OriginState, now: number): void;
  /** Counts `o`'s unread response bodies into `r` (`addUnreadResponse()`). */
  readUnread(o: OriginState, now: number, r: PoolReading): void;
}

/** What the unread-body rule reads of a request whose response arrived. @internal */
export interface ResponseProgress extends UnreadWatch {
  readonly res: IncomingMessage | undefined;
  readonly responseAt: number;
}

/**
 * Counts `st`'s open response body into `r` (`PoolReading.addWatched()`; progress: `socket.bytesRead`). `body`: what
 * the caller reads (the `IncomingMessage` unless the handler hands out its own). @internal
 */
export function addUnreadResponse(
  r: PoolReading,
  st: ResponseProgress,
  now: number,
  body: UnreadBody | undefined = st.res
): void {
  const res = st.res;
  if (res === undefined || st.responseAt < 0) return;
  r.addWatched(st, res.socket?.bytesRead ?? st.seenProgress, now, st.responseAt, body);
}

/** Adds an active request's age to its link's figures of a reading. @internal */
export function addActiveAge(link: PoolLink, ageMs: number): void {
  const a = link.ages;
  a.activeAgeSumMs += ageMs;
  a.activeAgeCount++;
  if (ageMs > a.oldestActiveMs) a.oldestActiveMs = ageMs;
}

/** What `outcomeOf()` reads of a request. @internal */
export interface CountedRequest {
  readonly notedOutcome: "aborted" | "timed_out" | undefined;
  readonly hasErrored: boolean;
  readonly res: IncomingMessage | undefined;
}

/** What a closed request counts as: the outcome its caller noted, else failed or completed. @internal */
export function outcomeOf(st: CountedRequest): RequestOutcome {
  const res = st.res;
  return st.notedOutcome ?? (st.hasErrored || res === undefined || res.errored ? "failed" : "completed");
}

/** A socket's telemetry, from its first request to its `'close'`, fed by its tracker's listeners. @internal */
export class SocketState {
  requests = 0;
  /** The request on it now (its noted outcome names the close reason). */
  current: CountedRequest | undefined = undefined;
  /** Outcome noted for the last request that used the socket. */
  lastOutcome: "aborted" | "timed_out" | undefined = undefined;
  tcpAt = -1;
  readyAt = -1;
  /** Counted as a new connection when first seen (not one that carried traffic before tracking began). */
  opened = false;
  errored = false;
  timedOut = false;
  remoteEnded = false;
  /** The origin's link (agent name) the socket lives under, once learned. */
  link: PoolLink | undefined = undefined;
  /** Set by `PoolMonitor.noteSocketClose()`: the owner closed it on purpose. */
  closedBy: Extract<Http1CloseReason, "idle_timeout" | "max_lifetime"> | undefined = undefined;
  closed = false;

  constructor(
    readonly core: Http1Core,
    readonly origin: OriginState,
    readonly createdAt: number,
    readonly connecting: boolean,
    readonly tls: boolean
  ) {}

  onConnect(now: number): void {
    const core = this.core;
    if (core.coreDestroyed) return;
    this.tcpAt = now;
    const connectMs = now - this.createdAt;
    core.connected(this.origin, connectMs);
    if (!this.tls) {
      this.readyAt = now;
      core.connectionReady(this.origin, connectMs, null);
    }
  }

  onSecureConnect(now: number): void {
    if (this.core.coreDestroyed) return;
    const tcpAt = this.tcpAt >= 0 ? this.tcpAt : this.createdAt;
    this.readyAt = now;
    this.core.connectionReady(this.origin, tcpAt - this.createdAt, now - tcpAt);
  }

  onError(): void {
    if (this.core.coreDestroyed) return;
    this.errored = true;
    this.core.connectionErrored(this.origin);
  }

  /** The socket's `'close'` (idempotent): counted under its reason; its link goes if its name holds nothing now. */
  onClose(socket: Socket, now: number): void {
    if (this.closed) return;
    this.closed = true;
    socketStates.delete(socket);
    const core = this.core;
    if (core.coreDestroyed) return;
    core.connectionClosed(this.origin, now - this.createdAt, this.readyAt >= 0, this.requests, this.closeReason());
    // Node's agent removed the socket from its maps in its own 'close' listener (added before this one).
    dropLinkIfIdle(core, this.link);
  }

  /** The outcome noted for the request on it now, else for the last one. */
  notedOutcome(): "aborted" | "timed_out" | undefined {
    return this.current?.notedOutcome ?? this.lastOutcome;
  }

  private closeReason(): Http1CloseReason {
    for (const reason in HTTP1_CLOSE_RULES)
      if (HTTP1_CLOSE_RULES[reason as Http1CloseReason](this)) return reason as Http1CloseReason;
    return "local";
  }
}

type Http1CloseReason = CloseReasonOf<"http1">;

/** HTTP/1's close reasons, tried in key order (first match wins); a reason without its rule does not compile. */
const HTTP1_CLOSE_RULES: Readonly<Record<Http1CloseReason, (s: SocketState) => boolean>> = {
  idle_timeout: (s) => s.closedBy === "idle_timeout",
  max_lifetime: (s) => s.closedBy === "max_lifetime",
  connect_error: (s) => s.errored && s.connecting && s.readyAt < 0,
  aborted: (s) => s.notedOutcome() === "aborted",
  timed_out: (s) => s.notedOutcome() === "timed_out",
  error: (s) => s.errored,
  timeout: (s) => s.timedOut,
  server_closed: (s) => s.remoteEnded,
  local: () => true,
};

/**
 * First sight of `socket` by a request of `o`: its state, counted as a new connection unless it already carried
 * traffic, with close listeners (errors through `events.errorMonitor`, which handles nothing). @internal
 */
export function adoptSocket(core: Http1Core, o: OriginState, socket: Socket, now: number): SocketState {
  const connecting = socket.connecting;
  const ss = new SocketState(core, o, now, connecting, (socket as TLSSocket).encrypted === true);
  socketStates.set(socket, ss);
  socket.on("close", onSocketClose);
  (socket as NodeJS.EventEmitter).on(errorMonitor, onSocketError);
  socket.on("end", onSocketEnd);
  socket.on("timeout", onSocketTimeout);
  if (!connecting) ss.readyAt = now;
  if (connecting || (socket.bytesWritten === 0 && socket.bytesRead === 0)) {
    core.connectionOpened(o);
    ss.opened = true;
  }
  return ss;
}

/** A request that holds the socket it is counted on. @internal */
export interface SocketHolder extends CountedRequest {
  socketState: SocketState | undefined;
}

/**
 * `holder`, a request of `o` on `agent`, was given `socket`: the socket's state (adopted on first sight, linked to
 * `link` or to the agent name it is found under) counts it and names it current, when `core` owns that state.
 * Returns whether the socket had carried a request before (`reused`). @internal
 */
export function takeSocket(
  core: Http1Core,
  o: OriginState,
  socket: Socket,
  now: number,
  holder: SocketHolder,
  link: PoolLink | undefined,
  agent: Agent
): boolean {
  let reused = true;
  let ss = socketStateOf(socket);
  if (ss === undefined) {
    ss = adoptSocket(core, o, socket, now);
    reused = !ss.opened;
    ss.link = link ?? core.originLinks.learnSocket(o, agent, socket);
  }
  // The socket belongs to the first monitor that saw it: another one's request counts on it, not on its state.
  if (ss.core === core) {
    ss.requests++;
    ss.current = holder;
    holder.socketState = ss;
  }
  return reused;
}

function onSocketError(this: Socket): void {
  socketStateOf(this)?.onError();
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
  socketStateOf(this)?.onClose(this, timing.now());
}

/**
 * Each seen socket's state, in a `WeakMap` rather than a property on the socket: a socket with a property of its own
 * gets a hidden class of its own, which turns Node's per-request property reads on sockets megamorphic. One map per
 * process, under a registered symbol on `globalThis`, so the CommonJS and ESM builds share it.
 */
const socketStates: WeakMap<Socket, SocketState> = ((globalThis as Record<symbol, unknown>)[
  Symbol.for("sockeye.poolMonitor.socketState")
] ??= new WeakMap<Socket, SocketState>()) as WeakMap<Socket, SocketState>;

/** The socket's state, if a monitor has seen it. @internal */
export function socketStateOf(socket: Socket): SocketState | undefined {
  return socketStates.get(socket);
}

/** The node:http transport's state of one origin entry: its agent links, queue and open responses. @internal */
export class OriginState extends OriginTelemetry {
  readonly poolLinks = new Set<PoolLink>();
  /** Agent of the latest request (its `maxSockets` is the origin's while no link is live). */
  lastAgent: Agent | undefined = undefined;
  /** Link of the latest request found queued: checked first, as under saturation most queue under one name. */
  lastQueueLink: PoolLink | undefined = undefined;
  queuedTracked = 0;

  /** The next interval's queue floor starts from the tracked queue (this monitor's requests), not the agent's. */
  override resetSampleCounters(_queued: number): void {
    super.resetSampleCounters(this.queuedTracked);
    for (const link of this.poolLinks) link.linkCompletions = 0;
  }

  /** Reads the agents' gauges per link into `r` and `r.evidence` (see the header); drops idle links. O(links). */
  poll(agentLinks: AgentLinks, requests: Http1Requests | undefined, now: number, r: PoolReading): void {
    for (const l of this.poolLinks) l.ages.zero();
    requests?.addAges(this, now);
    const sum = scratchSum.zero();
    const full = r.evidence.zero();
    let idle = 0;
    let fullLinks = 0;
    for (const l of this.poolLinks) {
      const maps = agentMaps(l.agent);
      const name = l.name;
      const busy = maps.sockets[name]?.length ?? 0;
      const free = maps.freeSockets[name]?.length ?? 0;
      const waiting = (maps.requests[name]?.length ?? 0) + l.gateQueued;
      if (busy + free + waiting === 0) {
        agentLinks.unlink(l);
        continue;
      }
      idle += free;
      const link = l.ages;
      link.active = busy;
      link.queued = waiting;
      link.completions = l.linkCompletions;
      if (busy + waiting !== 0) link.maxSockets = maps.maxSockets;
      if (waiting === 0) link.oldestQueuedMs = 0;
      sum.add(link);
      if (waiting !== 0 && busy >= maps.maxSockets) {
        full.add(link);
        fullLinks++;
      }
    }
    if (sum.maxSockets === 0 && this.lastAgent !== undefined) sum.maxSockets = agentMaps(this.lastAgent).maxSockets;
    if (fullLinks === 0) {
      full.zero().add(sum);
      full.completions = -1; // the origin's own count
    }
    const { active, queued, oldestQueuedMs } = sum;
    const maxSockets = sum.maxSockets > 0 && sum.maxSockets !== Number.POSITIVE_INFINITY ? sum.maxSockets : null;
    r.setGauges({ maxSockets, active, idle, queued, oldestQueuedMs });
  }
}

/** Forgets `l` when it holds no socket and no queued request. O(1). @internal */
export function dropLinkIfIdle(core: Http1Core, l: PoolLink | undefined): void {
  if (l === undefined) return;
  const maps = agentMaps(l.agent);
  const name = l.name;
  if (
    l.gateQueued === 0 &&
    !maps.sockets[name]?.length &&
    !maps.freeSockets[name]?.length &&
    !maps.requests[name]?.length
  )
    core.originLinks.unlink(l);
}

/** The sum of poll()'s links, never held across calls. */
const scratchSum = new SampleEvidence();
