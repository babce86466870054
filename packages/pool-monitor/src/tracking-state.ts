/**
 * The monitor's bookkeeping objects.
 *
 * Node's agent keys its maps (`sockets`, `freeSockets`, `requests`) by `agent.getName(options)`
 * (`host:port:localAddress:family`, plus TLS options for https), which cannot be parsed back into an
 * origin. Each `OriginState` therefore keeps the (agent, name) pairs it was seen under (`links`),
 * learned cheaply:
 * - at `trackRequest()`, a request that had to queue is the *last* element of `agent.requests[name]`
 *   for exactly one name, and `agent.requests` only holds names with a non-empty queue (Node deletes
 *   drained keys), so scanning the last element of each key is O(#queued names), usually 0 or 1;
 * - at the request's `'socket'` event, a socket never seen before is looked up in the origin's known
 *   `agent.sockets[name]` arrays first and in the other names second. That is O(sockets) once per
 *   *connection*, never per reused request.
 * Reading active / idle / queued for an origin is then O(links) array-length reads, plus one WeakMap
 * lookup per busy socket for the age of the requests holding them, done only at sample or snapshot
 * time. The `_OTHER` aggregate sums `maxSockets` over its links (one per host), as it sums `active`,
 * so it reads as saturated only when every one of its hosts is full and one has a queue.
 *
 * Per request: one `RequestState` (a dozen fields) hung on the request under a symbol; per socket:
 * one `SocketState` in a module-level `WeakMap<Socket, SocketState>`. Both die with their owner.
 * Per origin: counters, four `perf_hooks` histograms (a few KB each, fixed; a fifth for requests
 * sent outside the pool, created on the first one), a `Set` of responses whose body is still open
 * (bounded by the sockets in use) and one `SaturationDetector`.
 */
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Channel } from "node:diagnostics_channel";
import { DurationHistogram } from "./duration-histogram";
import type { CloseReason, PoolEvent, PoolEventListener } from "./pool-stats";
import { SaturationDetector, type SaturationSample } from "./saturation-detector";

/** Symbol under which a tracked request carries its `RequestState`. @internal */
export const kRequestState: unique symbol = Symbol("sockeye.pool-monitor.request");

/** @internal */
export type TrackedRequest = ClientRequest & { [kRequestState]?: RequestState };

/** Node's agent maps, typed as they are at runtime. @internal */
export interface AgentMaps {
  readonly sockets: Record<string, Socket[] | undefined>;
  readonly freeSockets: Record<string, Socket[] | undefined>;
  readonly requests: Record<string, TrackedRequest[] | undefined>;
  readonly maxSockets: number;
}

/** @internal */
export function agentMaps(agent: Agent): AgentMaps {
  return agent as unknown as AgentMaps;
}

/** What a finished request was counted as. @internal */
export type CountedAs = "completed" | "failed" | "aborted" | "timed_out";

/** State shared by one monitor and the module-level listeners. @internal */
export class MonitorCore {
  destroyed = false;
  /** Tracked requests not yet closed, all origins. */
  inFlight = 0;
  listeners: PoolEventListener[] = [];
  /** name -> origin, per agent, for names already linked to an origin. */
  readonly agentNames = new WeakMap<Agent, Map<string, OriginState>>();

  /** True when someone would receive an event published on `channel`. */
  wants(channel: Channel): boolean {
    return this.listeners.length !== 0 || channel.hasSubscribers;
  }

  emit(event: PoolEvent, channel: Channel): void {
    if (channel.hasSubscribers) channel.publish(event);
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i](event);
      } catch {
        // A listener must not break the request path.
      }
    }
  }

  /** Records that `name` in `agent` belongs to `o`. */
  link(o: OriginState, agent: Agent, name: string): void {
    let names = this.agentNames.get(agent);
    if (names === undefined) this.agentNames.set(agent, (names = new Map()));
    if (names.has(name)) return;
    names.set(name, o);
    o.links.push({ agent, name });
  }

  /** Learns which agent name a newly seen socket lives under (once per connection). */
  learnSocket(o: OriginState, agent: Agent, socket: Socket): void {
    const sockets = agentMaps(agent).sockets;
    const links = o.links;
    for (let i = 0; i < links.length; i++) {
      if (links[i].agent !== agent) continue;
      const list = sockets[links[i].name];
      if (list !== undefined && list.lastIndexOf(socket) !== -1) return;
    }
    const names = this.agentNames.get(agent);
    for (const name in sockets) {
      if (names?.has(name)) continue;
      const list = sockets[name];
      if (list !== undefined && list.lastIndexOf(socket) !== -1) {
        this.link(o, agent, name);
        return;
      }
    }
  }
}

/** One (agent, name) pair under which an origin's sockets and requests live. @internal */
export interface PoolLink {
  agent: Agent;
  name: string;
}

/** @internal */
export class RequestState {
  queued = false;
  closed = false;
  errored = false;
  outcome: "aborted" | "timed_out" | undefined = undefined;
  countedAs: CountedAs | undefined = undefined;
  acquiredAt = -1;
  responseAt = -1;
  res: IncomingMessage | undefined = undefined;
  socket: SocketState | undefined = undefined;
  /** `socket.bytesRead` when the body last made progress, and when that was. */
  lastBytes = 0;
  progressAt = 0;
  /** Tracked through `trackUnpooledRequest()`: counted in `origin.unpooled` only. */
  unpooled = false;

  constructor(
    readonly core: MonitorCore,
    readonly origin: OriginState,
    readonly agent: Agent,
    readonly startedAt: number
  ) {}
}

/** @internal */
export class SocketState {
  requests = 0;
  current: RequestState | undefined = undefined;
  /** Outcome noted for the last request that used the socket. */
  lastOutcome: "aborted" | "timed_out" | undefined = undefined;
  tcpAt = -1;
  readyAt = -1;
  errored = false;
  timedOut = false;
  remoteEnded = false;
  /** Set by `PoolMonitor.noteSocketClose()`: the owner closed it on purpose. */
  closedBy: "idle_timeout" | "max_lifetime" | undefined = undefined;
  closed = false;

  constructor(
    readonly core: MonitorCore,
    readonly origin: OriginState,
    readonly createdAt: number,
    readonly connecting: boolean,
    readonly tls: boolean
  ) {}
}

/** Counters of the requests of one origin sent outside the pool (`trackUnpooledRequest()`). @internal */
export class UnpooledCounters {
  started = 0;
  inFlight = 0;
  completed = 0;
  failed = 0;
  aborted = 0;
  timedOut = 0;
  readonly connect = new DurationHistogram();
}

/** Socket bookkeeping, shared by every monitor (a socket is owned by the first monitor that saw it). @internal */
export const socketStates = new WeakMap<Socket, SocketState>();

/** @internal */
export class OriginState {
  readonly links: PoolLink[] = [];
  readonly agents: Agent[] = [];
  lastAgent: Agent | undefined = undefined;
  // Counters since creation.
  started = 0;
  completed = 0;
  failed = 0;
  aborted = 0;
  timedOut = 0;
  inFlight = 0;
  socketsCreated = 0;
  socketErrors = 0;
  acquisitions = 0;
  reusedAcquisitions = 0;
  readonly closed: Record<CloseReason, number> = {
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
  // Tracked queued requests now, and the minimum since the last sample (queue floor).
  queuedTracked = 0;
  minQueued = 0;
  // Accumulators since the last sample.
  arrivals = 0;
  completions = 0;
  holdSumMs = 0;
  holdCount = 0;
  holdMaxMs = 0;
  readonly queueWait = new DurationHistogram();
  readonly connect = new DurationHistogram();
  readonly tls = new DurationHistogram();
  readonly connectionAge = new DurationHistogram();
  readonly openResponses = new Set<RequestState>();
  readonly detector: SaturationDetector;
  /** Reused sample object (one per origin: the detector keeps a reference to the latest). */
  readonly sample: SaturationSample = {
    now: 0,
    active: 0,
    maxSockets: 0,
    queued: 0,
    minQueued: 0,
    completions: 0,
    arrivals: 0,
    holdTimeSumMs: 0,
    holdCount: 0,
    holdTimeMaxMs: 0,
    oldestActiveMs: 0,
    activeAgeSumMs: 0,
    activeAgeCount: 0,
    oldestQueuedMs: 0,
    unconsumedCount: 0,
    unconsumedOldestMs: 0,
  };
  lastWarnAt = Number.NEGATIVE_INFINITY;
  /** Cause of the last logged line (the lockout limits repeats of one cause, never a change). */
  lastWarnCause: string | null = null;
  /** Requests sent outside the pool; created on the first one. */
  unpooled: UnpooledCounters | undefined = undefined;
  // Last poll results.
  active = 0;
  idle = 0;
  queued = 0;
  maxSockets = 0;
  oldestQueuedMs = 0;
  oldestActiveMs = 0;
  activeAgeSumMs = 0;
  activeAgeCount = 0;
  unconsumedCount = 0;
  unconsumedOldestMs = 0;

  /**
   * @param overflow - the `_OTHER` aggregate: `maxSockets` is summed per link (host) instead of per agent.
   */
  constructor(
    readonly origin: string,
    windowSamples: number,
    sampleIntervalMs: number,
    stallAfterMs: number,
    readonly overflow = false
  ) {
    this.detector = new SaturationDetector({ origin, windowSamples, sampleIntervalMs, stallAfterMs });
  }

  resetSampleCounters(): void {
    this.arrivals = this.completions = this.holdSumMs = this.holdCount = this.holdMaxMs = 0;
    this.minQueued = this.queuedTracked;
  }

  /**
   * Reads active / idle / queued / maxSockets, the oldest queued age and the ages of the requests holding sockets from
   * the agents. O(links + agents + busy sockets).
   */
  poll(core: MonitorCore, now: number): void {
    let active = 0;
    let idle = 0;
    let queued = 0;
    let oldest = 0;
    let oldestActive = 0;
    let ageSum = 0;
    let ageCount = 0;
    let linkMax = 0;
    const links = this.links;
    for (let i = 0; i < links.length; i++) {
      const maps = agentMaps(links[i].agent);
      const name = links[i].name;
      linkMax += maps.maxSockets;
      const sockets = maps.sockets[name];
      if (sockets !== undefined) {
        active += sockets.length;
        for (let j = 0; j < sockets.length; j++) {
          const st = socketStates.get(sockets[j])?.current;
          if (st === undefined || st.core !== core || st.acquiredAt < 0) continue;
          const age = now - st.acquiredAt;
          ageSum += age;
          ageCount++;
          if (age > oldestActive) oldestActive = age;
        }
      }
      idle += maps.freeSockets[name]?.length ?? 0;
      const q = maps.requests[name];
      if (q !== undefined && q.length !== 0) {
        queued += q.length;
        // The head is the oldest; skip (a few) requests tracked by someone else.
        for (let j = 0; j < q.length && j < 8; j++) {
          const st = q[j][kRequestState];
          if (st !== undefined && st.core === core) {
            if (now - st.startedAt > oldest) oldest = now - st.startedAt;
            break;
          }
        }
      }
    }
    let max = linkMax;
    if (!this.overflow) {
      max = 0;
      const agents = this.agents;
      for (let i = 0; i < agents.length; i++) max += agentMaps(agents[i]).maxSockets;
    }
    this.oldestActiveMs = oldestActive;
    this.activeAgeSumMs = ageSum;
    this.activeAgeCount = ageCount;
    this.active = active;
    this.idle = idle;
    this.queued = queued;
    this.maxSockets = max;
    this.oldestQueuedMs = oldest;
  }

  /**
   * Counts open responses whose body made no progress for `thresholdMs` and that the caller is not
   * reading: never read (`readableFlowing === null`) or data left buffered (`readableLength > 0`). A
   * consumer waiting on a slow server is not counted. While requests of this origin are queued, such
   * a body counts after `queuedThresholdMs` already (when shorter): it holds a socket others wait
   * for. O(open responses).
   */
  pollUnconsumed(now: number, thresholdMs: number, queuedThresholdMs = thresholdMs): void {
    const limit = this.queued > 0 ? Math.min(thresholdMs, queuedThresholdMs) : thresholdMs;
    let count = 0;
    let oldest = 0;
    for (const st of this.openResponses) {
      const res = st.res!;
      if (res.readableEnded || res.destroyed) continue;
      const bytes = res.socket?.bytesRead ?? st.lastBytes;
      if (bytes !== st.lastBytes) {
        st.lastBytes = bytes;
        st.progressAt = now;
        continue;
      }
      if (now - st.progressAt < limit) continue;
      if (res.readableFlowing !== null && res.readableLength === 0) continue;
      count++;
      if (now - st.responseAt > oldest) oldest = now - st.responseAt;
    }
    this.unconsumedCount = count;
    this.unconsumedOldestMs = oldest;
  }
}
