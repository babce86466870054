/**
 * HandlerRuntime: what one HTTP/1 handler owns while requests are in flight: the deadline scheduler (its tick
 * samples the monitor in `"interval"` mode), the `socketTimeout` watches, the socket-usage warning, one `AgentGate`
 * per agent, the free-socket sweeps (`socket-lifecycle.ts`), and the live list (intrusive, O(1) link/unlink) of every
 * request between `requestStarted` and `requestFinished`: the one in-flight count, walked only by `destroy()` and the
 * monitor's reading.
 */
import type { Http1PoolMonitor } from "@sockeye/pool-monitor";
import {
  addActiveAge,
  addUnreadResponse,
  bodyOf,
  Deadline,
  type DeadlineOwner,
  DeadlineScheduler,
  type Http1Requests,
  type OriginState,
  type PoolReading,
  TICK_MS,
} from "@sockeye/pool-monitor/internal";
import { type Admission, AgentGate, type GateOwner } from "./agent-gate";
import type { Agent } from "node:http";
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
import type { ResolvedHandlerConfig } from "./resolve-handler-config";
import { SocketUsageWarning } from "./socket-usage-warning";

/** @internal */
export class HandlerRuntime implements RequestHost<InFlightRequest>, DeadlineOwner<"sweep">, GateOwner, Http1Requests {
  readonly hostScheduler: DeadlineScheduler;
  readonly socketWarning: SocketUsageWarning;
  private monitor: Http1PoolMonitor | undefined = undefined;
  private currentSettings: ResolvedHandlerConfig | undefined = undefined;
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
  // One-entry memo of the monitor's origin entry (valid while the monitor is the same).
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

  /** The handler's gate in front of `agent`; `undefined` for an agent not shaped as Node's (no gate, as upstream). */
  gateFor(agent: Agent): AgentGate | undefined {
    if (typeof agent?.getName !== "function" || typeof agent.maxSockets !== "number") return undefined;
    let gate = this.gates.get(agent);
    if (gate === undefined) this.gates.set(agent, (gate = new AgentGate(agent, this)));
    return gate;
  }

  get hostMonitor(): Http1PoolMonitor | undefined {
    return this.monitor;
  }

  set hostMonitor(monitor: Http1PoolMonitor | undefined) {
    this.monitor = monitor;
    if (monitor !== undefined) monitor.requests = this;
  }

  /** The resolved settings (`undefined` before the first `handle()`). */
  get runtimeSettings(): ResolvedHandlerConfig | undefined {
    return this.currentSettings;
  }

  set runtimeSettings(settings: ResolvedHandlerConfig | undefined) {
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

  requestStarted(r: InFlightRequest, now: number): Admission {
    r.livePrev = undefined;
    r.liveNext = this.liveHead;
    if (this.liveHead !== undefined) this.liveHead.livePrev = r;
    this.liveHead = r;
    this.live++;
    if (this.live === 1 && this.sweepPendingAt !== Number.POSITIVE_INFINITY) {
      const limits = this.currentSettings;
      if (limits !== undefined) this.armSweepAt(this.sweepPendingAt, limits);
      this.sweepPendingAt = Number.POSITIVE_INFINITY;
    }
    this.socketWarning.arm(r, now, this.hostMonitor !== undefined);
    const gate = r.requestPlan.agentGate;
    if (gate === undefined) return "dispatch";
    const options = r.nodeOptions!;
    return gate.admit(r, gate.keyFor(options.host, options.port), r.requestPlan.maxQueued);
  }

  requestDispatching(r: InFlightRequest, now: number): void {
    const limits = this.currentSettings;
    if (!r.requestPlan.swept || limits === undefined) return;
    if (!(limits.idleSocketTimeout || limits.connectionLifetime)) return;
    const agent = r.requestPlan.agent;
    if (sweepDue(agent, now)) this.armSweepAt(sweepAgent(agent, limits, now, this.boundSocketClosed), limits);
  }

  /** `monitor.originFor(key)`, memoised for the last key. */
  originOf(monitor: Http1PoolMonitor, key: string): OriginState {
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

  requestFinished(r: InFlightRequest, now: number): void {
    this.idle.unwatch(r);
    this.socketWarning.clear(r);
    const limits = this.currentSettings;
    const socket = r.requestPlan.swept ? (r.req?.socket ?? undefined) : undefined;
    const expires = socket !== undefined && limits !== undefined;
    if (r.livePrev !== undefined) r.livePrev.liveNext = r.liveNext;
    else if (this.liveHead === r) this.liveHead = r.liveNext;
    if (r.liveNext !== undefined) r.liveNext.livePrev = r.livePrev;
    r.liveNext = r.livePrev = undefined;
    this.live--;
    const at = expires ? socketExpiry(socket!, now, limits!, now) : Number.POSITIVE_INFINITY;
    if (this.live > 0) {
      if (limits !== undefined) this.armSweepAt(at, limits);
    } else {
      this.sweepPendingAt = Math.min(
        this.sweepPendingAt,
        at,
        this.sweep.armed ? this.sweep.at : Number.POSITIVE_INFINITY
      );
      this.hostScheduler.disarm(this.sweep);
    }
    // Last: its slot goes to the head of its gate key's queue.
    if (r.gateKey !== undefined) r.requestPlan.agentGate?.leave(r);
  }

  /** Http1Requests: the ages of `o`'s live requests holding a socket or queued, on their links. O(live requests). */
  addAges(o: OriginState, now: number): void {
    for (let r = this.liveHead; r !== undefined; r = r.liveNext) {
      const link = r.link;
      if (r.telemetry !== o || link === undefined) continue;
      if (r.isQueued) {
        if (now - r.begunAt > link.ages.oldestQueuedMs) link.ages.oldestQueuedMs = now - r.begunAt;
      } else if (r.heldSince >= 0 && r.socketState?.current === r) {
        addActiveAge(link, now - r.heldSince);
      }
    }
  }

  /** Http1Requests: `o`'s live responses whose body is not being read (a body received in full pins nothing). */
  readUnread(o: OriginState, now: number, reading: PoolReading): void {
    for (let r = this.liveHead; r !== undefined; r = r.liveNext) {
      if (r.telemetry !== o || r.isUnpooled) continue;
      const body = bodyOf(r);
      if (body !== undefined) addUnreadResponse(reading, r, now, body);
    }
  }

  watchIdle(r: InFlightRequest, socket: Socket, now: number): void {
    this.idle.watch(r, socket, now);
  }

  onWarningWindow(r: InFlightRequest): void {
    this.socketWarning.onWindow(r);
  }

  socketClosedByLimit(socket: Socket, reason: LifecycleCloseReason): void {
    this.hostMonitor?.noteSocketClose(socket, reason);
  }

  /** Handler `destroy()`: ends every request (no gate dispatches meanwhile), stops the timer; returns the count. */
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
  }

  private armSweepAt(at: number, limits: SocketLifecycleLimits): void {
    if (at === Number.POSITIVE_INFINITY || (this.sweep.armed && this.sweep.at <= at)) return;
    // Armed as (at − D, D) with the handler's fixed limit D, so every re-arm lands on the same duration's list.
    const duration = (limits.idleSocketTimeout || limits.connectionLifetime) as number;
    this.hostScheduler.arm(this.sweep, at - duration, duration);
  }

  /** DeadlineOwner: the sweep deadline fired: close what expired, re-arm for the next free socket's expiry. */
  onDeadline(_kind: "sweep", now: number): void {
    const limits = this.currentSettings;
    if (limits === undefined || !(limits.idleSocketTimeout || limits.connectionLifetime)) return;
    let next = Number.POSITIVE_INFINITY;
    for (const agent of [limits.httpAgent, limits.httpsAgent]) {
      if (agent !== undefined) next = Math.min(next, sweepAgent(agent, limits, now, this.boundSocketClosed));
    }
    if (this.live > 0) this.armSweepAt(next, limits);
    else this.sweepPendingAt = Math.min(this.sweepPendingAt, next);
  }

  private onTick(now: number): boolean {
    const monitor = this.hostMonitor;
    if (monitor === undefined || this.currentSettings?.socketMonitor !== "interval") return false;
    return monitor.sampleOnTick(now);
  }
}
