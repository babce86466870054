/**
 * HandlerRuntime: what one handler owns while requests are in flight, and the only place they are counted.
 *
 * Owns (each concern in its own module):
 * - `scheduler` (`DeadlineScheduler`): every per-request deadline on one lazy, unref'd interval; its tick calls
 *   `onTick` below.
 * - `idle` (`IdleWatchList`): the `socketTimeout` inactivity watch, sampled on the tick.
 * - `warning` (`SocketUsageWarning`): upstream's socket-usage warning in the three `socketMonitor` modes.
 * - `monitor` (`PoolMonitor`, `@sockeye/pool-monitor`): per-origin telemetry and saturation detection; the monitor's
 *   per-request state is kept on the request's state object (`InFlightRequest.tracked`, from `attachRequest()`) and
 *   the request's own listeners forward its events to it (no second set of listeners, nothing hung on the
 *   `ClientRequest`), and the tick calls `monitor.sample()` once per
 *   the monitor's `sampleIntervalMs` in `"interval"` mode (read at each tick, so `configure()` applies at once).
 * - The live list: every request between `requestStarted` and `requestFinished` (an intrusive doubly linked list
 *   through the requests' state objects: O(1) link/unlink, no allocation). Its length is the handler's one
 *   in-flight count (`inFlightCount`), and `destroy()` walks it to end every request.
 * - Free-socket sweeps (`sweepAgent` of `socket-lifecycle.ts`): on every tick and right before a dispatch.
 *
 * The tick keeps the interval alive while a deadline is armed, a request is idle-watched, or the monitor is busy;
 * an idle process has no handler timer.
 */
import { type PoolMonitor, timing } from "@sockeye/pool-monitor";
import type { Agent, ClientRequest } from "node:http";
import type { Socket } from "node:net";
import { DeadlineScheduler } from "./deadline-scheduler";
import { IdleWatchList } from "./idle-watch-list";
import type { InFlightRequest } from "./in-flight-request";
import type { RequestHost } from "./request-host";
import { type LifecycleCloseReason, type SocketLifecycleLimits, sweepAgent, sweepDue } from "./socket-lifecycle";
import { SocketUsageWarning, type SocketUsageWarningSettings } from "./socket-usage-warning";

/** Settings the runtime re-reads whenever the handler's config is (re)resolved. @internal */
export interface RuntimeSettings extends SocketUsageWarningSettings {
  /** Free-socket limits (`idleSocketTimeout`, `connectionLifetime`); both off = no sweeping at all. */
  lifecycle: SocketLifecycleLimits;
}

/** @internal */
export class HandlerRuntime implements RequestHost<InFlightRequest> {
  readonly scheduler: DeadlineScheduler;
  readonly warning: SocketUsageWarning;
  /** Per-origin telemetry and saturation detection; `undefined` with `telemetry: false`. */
  monitor: PoolMonitor | undefined = undefined;
  private currentSettings: RuntimeSettings | undefined = undefined;
  private readonly idle = new IdleWatchList();
  private liveHead: InFlightRequest | undefined = undefined;
  private live = 0;
  private lastSampleAt = Number.NEGATIVE_INFINITY;
  private readonly boundSocketClosed = (socket: Socket, reason: LifecycleCloseReason) =>
    this.socketClosedByLimit(socket, reason);

  constructor() {
    this.scheduler = new DeadlineScheduler((now) => this.onTick(now));
    this.warning = new SocketUsageWarning(this.scheduler);
  }

  /** The resolved settings (`undefined` before the first `handle()`). */
  get settings(): RuntimeSettings | undefined {
    return this.currentSettings;
  }

  set settings(settings: RuntimeSettings | undefined) {
    this.currentSettings = settings;
    this.warning.settings = settings;
  }

  /** Requests started and not yet finished (the handler's one in-flight count; response bodies included). */
  get inFlightCount(): number {
    return this.live;
  }

  /** Whether a request is idle-watched (`socketTimeout`). */
  get idleWatching(): boolean {
    return !this.idle.empty;
  }

  requestStarted(r: InFlightRequest, now: number): void {
    r.livePrev = undefined;
    r.liveNext = this.liveHead;
    if (this.liveHead !== undefined) this.liveHead.livePrev = r;
    this.liveHead = r;
    this.live++;
    if (!r.plan.oneOffAgent) this.beforeDispatch(r.plan.agent, now);
  }

  requestCreated(r: InFlightRequest, req: ClientRequest, now: number): void {
    const monitor = this.monitor;
    if (monitor !== undefined) {
      // The request's own listeners forward its events to the monitor's state for it (kept on the request's state
      // object, so a runtime `telemetry` switch never orphans a tracked request). A one-off 100-continue request is
      // counted per origin outside the pool gauges and the detector (its agent has no socket limit).
      r.tracked = r.plan.oneOffAgent
        ? monitor.attachUnpooledRequest(req, r.origin, r.startedAt)
        : monitor.attachRequest(req, r.plan.agent, r.origin, r.startedAt);
    }
    this.warning.arm(r, now, monitor !== undefined);
  }

  requestSettled(r: InFlightRequest): void {
    this.warning.clear(r);
  }

  requestFinished(r: InFlightRequest): void {
    this.idle.unwatch(r);
    this.warning.clear(r);
    const tracked = r.tracked;
    if (tracked !== undefined) {
      r.tracked = undefined;
      tracked.onClose();
    }
    if (r.livePrev !== undefined) r.livePrev.liveNext = r.liveNext;
    else if (this.liveHead === r) this.liveHead = r.liveNext;
    if (r.liveNext !== undefined) r.liveNext.livePrev = r.livePrev;
    r.liveNext = r.livePrev = undefined;
    this.live--;
  }

  noteOutcome(r: InFlightRequest, outcome: "aborted" | "timed_out"): void {
    r.tracked?.noteOutcome(outcome);
  }

  watchIdle(r: InFlightRequest, socket: Socket): void {
    this.idle.watch(r, socket, timing.now());
    this.scheduler.ensureTicking();
  }

  onWarningWindow(r: InFlightRequest): void {
    this.warning.onWindow(r);
  }

  /** Telemetry for a socket the handler closed on purpose. */
  socketClosedByLimit(socket: Socket, reason: LifecycleCloseReason): void {
    this.monitor?.noteSocketClose(socket, reason);
  }

  /**
   * Handler `destroy()`: ends every live request (queued ones leave the agent queue first, so Node never hands
   * them a new socket; each rejects with `HandlerDestroyedError` unless it had settled), then stops the interval
   * and forgets every deadline and watch. Returns the number of requests it ended.
   */
  destroy(): number {
    let ended = 0;
    for (let r = this.liveHead; r !== undefined; ) {
      const next = r.liveNext;
      r.destroyByHandler();
      ended++;
      r = next;
    }
    this.stop();
    return ended;
  }

  /** Stops the interval and forgets every deadline and watch. */
  stop(): void {
    this.scheduler.stop();
    this.idle.clear();
    this.lastSampleAt = Number.NEGATIVE_INFINITY;
  }

  /** Right before a request is created: drop expired free sockets of its agent so it cannot get one. */
  private beforeDispatch(agent: Agent, now: number): void {
    const lifecycle = this.currentSettings?.lifecycle;
    if (lifecycle === undefined || !(lifecycle.idleSocketTimeout || lifecycle.connectionLifetime)) return;
    if (sweepDue(agent, now)) sweepAgent(agent, lifecycle, now, this.boundSocketClosed);
  }

  private onTick(now: number): boolean {
    this.idle.sample(now);
    let busy = !this.idle.empty;
    const settings = this.currentSettings;
    const lifecycle = settings?.lifecycle;
    if (lifecycle !== undefined && (lifecycle.idleSocketTimeout || lifecycle.connectionLifetime)) {
      for (const agent of settings!.agents()) {
        if (agent !== undefined) sweepAgent(agent, lifecycle, now, this.boundSocketClosed);
      }
    }
    const monitor = this.monitor;
    if (monitor !== undefined && settings?.mode === "interval") {
      if (now - this.lastSampleAt >= monitor.sampleIntervalMs) {
        this.lastSampleAt = now;
        monitor.sample(now);
      }
      busy ||= monitor.busy;
    }
    return busy;
  }
}
