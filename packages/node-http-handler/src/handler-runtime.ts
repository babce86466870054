/**
 * HandlerRuntime: what one handler owns while requests are in flight, and the only place they are counted.
 *
 * Owns (each concern in its own module):
 * - `hostScheduler` (`DeadlineScheduler`): every deadline of the handler on one native timer armed for the
 *   earliest expiry; its recurring owner tick (period: the monitor's `sampleIntervalMs`) calls `onTick` below.
 * - `idle` (`IdleWatchList`): the `socketTimeout` inactivity watch, one deadline per request on the scheduler,
 *   restarted by its socket's activity.
 * - `warning` (`SocketUsageWarning`): upstream's socket-usage warning in the three `socketMonitor` modes.
 * - `monitor` (`Http1PoolMonitor`, `@sockeye/pool-monitor`): per-origin telemetry and saturation detection. Each
 *   request counts itself on it from its own phases (`InFlightRequest`); the runtime hands it the origin entry
 *   (memoised) and, as the monitor's `Http1Requests`, walks its live list for the ages and unread bodies a reading
 *   needs (at sample and snapshot time only). The owner tick calls `monitor.sample()` once per the monitor's
 *   `sampleIntervalMs` in `"interval"` mode (the period is read at each re-arm, so `configure()` applies from the
 *   next sample).
 * - The live list: every request between `requestStarted` and `requestFinished` (an intrusive doubly linked list
 *   through the requests' state objects: O(1) link/unlink, no allocation). Its length is the handler's one
 *   in-flight count (`inFlightCount`), and `destroy()` walks it to end every request.
 * - The gates (`AgentGate`, one per agent in a `WeakMap`, handed out through the request plans): per agent key, the
 *   handler's requests dispatched to the agent; a request beyond `maxSockets` / `maxTotalSockets` waits in its
 *   key's FIFO with no Node request, and is dispatched once a request of the key finishes (`requestFinished` frees
 *   the slot; the gate's drain, one `setImmediate` per turn, hands out every slot freed in the turn). During
 *   `destroy()` nothing is dispatched.
 * - Free-socket sweeps (`sweepAgent` of `socket-lifecycle.ts`): right before a dispatch (at most once per `TICK_MS`
 *   per agent), so an expired socket is never handed to a request; and, while requests are in flight, one `sweep`
 *   deadline on the scheduler armed for the earliest expiry of a free socket (a dispatch-time sweep and each
 *   finishing request arm it unless it is armed earlier; each sweep re-arms it for the next), so a socket is closed
 *   at its limit. When the last request finishes it is cancelled: an idle handler keeps no timer for its free
 *   sockets (they cost nothing; Node `unref()`s them) and they are swept before the next dispatch. Only for a request
 *   whose plan is `swept` (a caller-owned agent without explicit limits is never swept: its requests do none of this).
 *
 * The owner tick runs only while the monitor is busy; an idle handler has no armed deadline, and its one native
 * timer lapses at its due time without being re-armed.
 */
import type { Http1PoolMonitor } from "@sockeye/pool-monitor";
import {
  addActiveAge,
  addUnreadResponse,
  Deadline,
  type DeadlineOwner,
  DeadlineScheduler,
  type Http1Requests,
  type OriginState,
  type PoolReading,
  TICK_MS,
  timing as importedTiming,
} from "@sockeye/pool-monitor/internal";
import { AgentGate, type GateOwner } from "./agent-gate";
import type { Agent, ClientRequest } from "node:http";
import type { Socket } from "node:net";
import { IdleWatchList } from "./idle-watch-list";
import type { InFlightRequest } from "./in-flight-request";
import type { RequestHost } from "./request-host";
import {
  type LifecycleCloseReason,
  type SocketLifecycleLimits,
  socketExpiry,
  sweepAgent,
  sweepDue,
} from "./socket-lifecycle";
import { SocketUsageWarning, type SocketUsageWarningSettings } from "./socket-usage-warning";

// Bound once: in this package's CommonJS build every use of another package's export is a getter call.
const timing = importedTiming;

/** Settings the runtime re-reads whenever the handler's config is (re)resolved. @internal */
export interface RuntimeSettings extends SocketUsageWarningSettings {
  /** Free-socket limits (`idleSocketTimeout`, `connectionLifetime`); both off = no sweeping at all. */
  lifecycle: SocketLifecycleLimits;
}

/** @internal */
export class HandlerRuntime implements RequestHost<InFlightRequest>, DeadlineOwner<"sweep">, GateOwner, Http1Requests {
  readonly hostScheduler: DeadlineScheduler;
  readonly socketWarning: SocketUsageWarning;
  private monitor: Http1PoolMonitor | undefined = undefined;
  private currentSettings: RuntimeSettings | undefined = undefined;
  private readonly idle: IdleWatchList;
  /** The free-socket sweep, armed for the earliest expiry of a free socket. */
  private readonly sweep = new Deadline<"sweep">(this, "sweep");
  /** While idle: when the next free socket expires (the sweep is re-armed for it when a request starts). */
  private sweepPendingAt = Number.POSITIVE_INFINITY;
  /** `destroy()` is ending every request: the gates dispatch nothing. */
  destroying = false;
  private readonly gates = new WeakMap<Agent, AgentGate>();
  private liveHead: InFlightRequest | undefined = undefined;
  private live = 0;
  private lastSampleAt = Number.NEGATIVE_INFINITY;
  // One-entry memo of the monitor's origin entry for the last origin key (one endpoint per client is the common
  // case): a monitor keeps its entries until it is destroyed, so the entry stays valid while the monitor is the same.
  private memoMonitor: Http1PoolMonitor | undefined = undefined;
  private memoKey = "";
  private memoOrigin: OriginState | undefined = undefined;
  private readonly boundSocketClosed = (socket: Socket, reason: LifecycleCloseReason) =>
    this.socketClosedByLimit(socket, reason);

  constructor() {
    this.hostScheduler = new DeadlineScheduler(
      (now) => this.onTick(now),
      () => this.hostMonitor?.sampleIntervalMs ?? TICK_MS
    );
    this.idle = new IdleWatchList(this.hostScheduler);
    this.socketWarning = new SocketUsageWarning(this.hostScheduler, (agent) => this.gates.get(agent));
  }

  /**
   * The handler's gate in front of `agent` (created on first use; lives as long as the agent). `undefined` for an
   * agent that is not a Node `http.Agent` in shape (no `getName()` or no numeric `maxSockets`, e.g. a duck-typed one):
   * its requests go to it at once, as before.
   */
  gateFor(agent: Agent): AgentGate | undefined {
    if (typeof agent?.getName !== "function" || typeof agent.maxSockets !== "number") return undefined;
    let gate = this.gates.get(agent);
    if (gate === undefined) this.gates.set(agent, (gate = new AgentGate(agent, this)));
    return gate;
  }

  /**
   * Per-origin telemetry and saturation detection; `undefined` with `telemetry: false`. The monitor reads this
   * runtime's live requests (`Http1Requests`) for their ages and unread bodies.
   */
  get hostMonitor(): Http1PoolMonitor | undefined {
    return this.monitor;
  }

  set hostMonitor(monitor: Http1PoolMonitor | undefined) {
    this.monitor = monitor;
    if (monitor !== undefined) monitor.requests = this;
  }

  /** The resolved settings (`undefined` before the first `handle()`). */
  get runtimeSettings(): RuntimeSettings | undefined {
    return this.currentSettings;
  }

  set runtimeSettings(settings: RuntimeSettings | undefined) {
    this.currentSettings = settings;
    this.socketWarning.warningSettings = settings;
  }

  /** Requests started and not yet finished (the handler's one in-flight count; response bodies included). */
  get inFlightCount(): number {
    return this.live;
  }

  /** Whether a request is idle-watched (`socketTimeout`). */
  get idleWatching(): boolean {
    return !this.idle.empty;
  }

  requestStarted(r: InFlightRequest, now: number): boolean {
    r.livePrev = undefined;
    r.liveNext = this.liveHead;
    if (this.liveHead !== undefined) this.liveHead.livePrev = r;
    this.liveHead = r;
    this.live++;
    if (this.live === 1 && this.sweepPendingAt !== Number.POSITIVE_INFINITY) {
      const lifecycle = this.currentSettings?.lifecycle;
      if (lifecycle !== undefined) this.armSweepAt(this.sweepPendingAt, lifecycle);
      this.sweepPendingAt = Number.POSITIVE_INFINITY;
    }
    const monitor = this.hostMonitor;
    this.socketWarning.arm(r, now, monitor !== undefined);
    const gate = r.requestPlan.agentGate;
    if (gate === undefined) return true;
    const options = r.nodeOptions!;
    const key = gate.keyFor(options.host, options.port);
    if (gate.admit(r, key)) return true;
    // Queued in the gate: counted by the monitor as a request queued under the agent's name for it.
    if (monitor !== undefined && !monitor.coreDestroyed)
      r.countQueued(monitor, this.originOf(monitor, r.originKey), key.name);
    return false;
  }

  requestDispatching(r: InFlightRequest, now: number): void {
    if (r.requestPlan.swept) this.beforeDispatch(r.requestPlan.agent, now);
  }

  /** Its Node request was just created: counted from now (or, if it waited in the gate, since then). */
  requestCreated(r: InFlightRequest, req: ClientRequest): void {
    const tracking = r.monitor;
    if (tracking !== undefined) {
      r.countDispatched(tracking, r.originState!, req);
      return;
    }
    const monitor = this.hostMonitor;
    if (monitor !== undefined && !monitor.coreDestroyed)
      r.countDispatched(monitor, this.originOf(monitor, r.originKey), req);
  }

  /** `monitor.originFor(key)`, memoised for the last key (a `Map` lookup saved per request). */
  private originOf(monitor: Http1PoolMonitor, key: string): OriginState {
    if (key === this.memoKey && monitor === this.memoMonitor) return this.memoOrigin!;
    const o = monitor.originFor(key);
    this.memoMonitor = monitor;
    this.memoKey = key;
    this.memoOrigin = o;
    return o;
  }

  requestSettled(r: InFlightRequest): void {
    this.socketWarning.clear(r);
  }

  requestFinished(r: InFlightRequest): void {
    this.idle.unwatch(r);
    this.socketWarning.clear(r);
    const tracked = r.monitor !== undefined;
    const lifecycle = this.currentSettings?.lifecycle;
    // Only a socket of a swept agent expires (a caller-owned agent without explicit limits is left alone).
    const socket = r.requestPlan.swept ? (r.req?.socket ?? undefined) : undefined;
    const expires = socket !== undefined && lifecycle !== undefined;
    // One clock reading for telemetry's hold time and the socket's expiry.
    const now = tracked || expires ? timing.now() : 0;
    if (tracked) r.countClosed(now);
    if (r.livePrev !== undefined) r.livePrev.liveNext = r.liveNext;
    else if (this.liveHead === r) this.liveHead = r.liveNext;
    if (r.liveNext !== undefined) r.liveNext.livePrev = r.livePrev;
    r.liveNext = r.livePrev = undefined;
    this.live--;
    // While other requests run, a sweep comes at this socket's expiry; an idle handler keeps no timer for its free
    // sockets (the dispatch-time sweep closes an expired one before the next request could get it).
    const at = expires ? socketExpiry(socket!, now, lifecycle!, now) : Number.POSITIVE_INFINITY;
    if (this.live > 0) {
      if (lifecycle !== undefined) this.armSweepAt(at, lifecycle);
    } else {
      this.sweepPendingAt = Math.min(
        this.sweepPendingAt,
        at,
        this.sweep.armed ? this.sweep.at : Number.POSITIVE_INFINITY
      );
      this.hostScheduler.disarm(this.sweep);
    }
    // Last: its slot goes to the head of its gate key's queue (dispatched by the gate's drain, this turn).
    if (r.gateKey !== undefined) r.requestPlan.agentGate?.leave(r);
  }

  /** Http1Requests: the ages of `o`'s live requests holding a socket or queued, on their links. O(live requests). */
  addAges(o: OriginState, now: number): void {
    for (let r = this.liveHead; r !== undefined; r = r.liveNext) {
      const link = r.link;
      if (r.originState !== o || link === undefined) continue;
      if (r.isQueued) {
        if (now - r.beganAt > link.ages.oldestQueuedMs) link.ages.oldestQueuedMs = now - r.beganAt;
      } else if (r.acquiredAt >= 0 && r.socketState?.current === r) {
        addActiveAge(link, now - r.acquiredAt);
      }
    }
  }

  /**
   * Http1Requests: `o`'s live responses whose body is not being read. O(live requests). A body received in full
   * (`bodyRef` dropped) pins nothing; one already collected is being reclaimed.
   */
  readUnread(o: OriginState, now: number, limitMs: number, reading: PoolReading): void {
    for (let r = this.liveHead; r !== undefined; r = r.liveNext) {
      if (r.originState !== o || r.isUnpooled) continue;
      const body = r.bodyRef?.deref();
      if (body !== undefined) addUnreadResponse(reading, r, now, limitMs, body);
    }
  }

  watchIdle(r: InFlightRequest, socket: Socket, now: number): void {
    this.idle.watch(r, socket, now);
  }

  onWarningWindow(r: InFlightRequest): void {
    this.socketWarning.onWindow(r);
  }

  /** Telemetry for a socket the handler closed on purpose. */
  socketClosedByLimit(socket: Socket, reason: LifecycleCloseReason): void {
    this.hostMonitor?.noteSocketClose(socket, reason);
  }

  /**
   * Handler `destroy()`: ends every live request (queued ones leave the gate or the agent queue first, so Node never
   * hands them a new socket, and the gates dispatch nothing meanwhile; each rejects with `HandlerDestroyedError` unless it had settled), then stops the timer
   * and forgets every deadline and watch. Returns the number of requests it ended.
   */
  destroy(): number {
    let ended = 0;
    this.destroying = true;
    try {
      for (let r = this.liveHead; r !== undefined; ) {
        const next = r.liveNext;
        r.destroyByHandler();
        ended++;
        r = next;
      }
    } finally {
      this.destroying = false;
    }
    this.stop();
    return ended;
  }

  /** Stops the timer and forgets every deadline and watch. */
  stop(): void {
    this.hostScheduler.stop();
    this.idle.clear();
    this.sweepPendingAt = Number.POSITIVE_INFINITY;
    this.lastSampleAt = Number.NEGATIVE_INFINITY;
  }

  /** Right before a request is created: drop expired free sockets of its agent so it cannot get one. */
  private beforeDispatch(agent: Agent, now: number): void {
    const lifecycle = this.currentSettings?.lifecycle;
    if (lifecycle === undefined || !(lifecycle.idleSocketTimeout || lifecycle.connectionLifetime)) return;
    if (sweepDue(agent, now)) this.armSweepAt(sweepAgent(agent, lifecycle, now, this.boundSocketClosed), lifecycle);
  }

  private armSweepAt(at: number, lifecycle: SocketLifecycleLimits): void {
    if (at === Number.POSITIVE_INFINITY || (this.sweep.armed && this.sweep.at <= at)) return;
    // Armed as (at − D, D) with the handler's fixed limit D, so every re-arm lands on the same duration's list.
    const duration = (lifecycle.idleSocketTimeout || lifecycle.connectionLifetime) as number;
    this.hostScheduler.arm(this.sweep, at - duration, duration);
  }

  /** DeadlineOwner: the sweep deadline fired: close what expired, re-arm for the next free socket's expiry. */
  onDeadline(_kind: "sweep", now: number): void {
    const settings = this.currentSettings;
    const lifecycle = settings?.lifecycle;
    if (lifecycle === undefined || !(lifecycle.idleSocketTimeout || lifecycle.connectionLifetime)) return;
    let next = Number.POSITIVE_INFINITY;
    for (const agent of settings!.agents()) {
      if (agent !== undefined) next = Math.min(next, sweepAgent(agent, lifecycle, now, this.boundSocketClosed));
    }
    if (this.live > 0) this.armSweepAt(next, lifecycle);
    else this.sweepPendingAt = Math.min(this.sweepPendingAt, next);
  }

  private onTick(now: number): boolean {
    const monitor = this.hostMonitor;
    if (monitor === undefined || this.currentSettings?.mode !== "interval") return false;
    if (now - this.lastSampleAt >= monitor.sampleIntervalMs - 1) {
      this.lastSampleAt = now;
      monitor.sample(now);
    }
    return monitor.wantsSamples;
  }
}
