/**
 * HandlerRuntime: everything one handler owns while requests are in flight: the shared deadline scheduler, the
 * idle-watch list for `socketTimeout`, the in-flight count, and the socket-usage monitor of the selected
 * `socketMonitor` mode.
 *
 * Saturation ("interval" mode): each request is handed to the `PoolMonitor` of `@sockeye/pool-monitor` (its
 * listeners are shared functions; no timer), and the shared tick calls `monitor.sample()` once per
 * `sampleIntervalMs`. The detector warns on sustained queue growth or stalls, never on a draining batch. With
 * `telemetry: false` there is no monitor, and the interval applies upstream's criteria to requests that have waited
 * the whole `socketAcquisitionWarningTimeout` window instead.
 *
 * Idle watch: `socketTimeout` is an inactivity timeout that stays armed through the response body. Instead of a
 * `socket.setTimeout()` per request (a native Timeout plus a bound function each time on Node 20), watched requests
 * sit on an intrusive list and every tick compares the socket's `bytesRead + bytesWritten` with the last value
 * seen. Cost: O(watched requests) field reads per tick (~3 ns each, i.e. ~30 µs per tick at 10,000 in flight).
 * Resolution: activity is observed at tick granularity, so the timeout fires between `socketTimeout` and
 * `socketTimeout + 2 × TICK_MS` after the last byte moved, never early.
 */
import type { Logger } from "@smithy/types";
import type { PoolMonitor } from "@sockeye/pool-monitor";
import type { Agent } from "node:http";
import type { Socket } from "node:net";
import { checkSocketUsage } from "./check-socket-usage";
import { MIN_WARNING_WINDOW_MS } from "./constants";
import { Deadline, DeadlineScheduler } from "./deadline-scheduler";
import { DeadlineKind, type InFlightRequest } from "./in-flight-request";
import type { SocketMonitorMode } from "./socket-monitor-mode";
import { type LifecycleCloseReason, type SocketLifecycleLimits, sweepAgent, sweepDue } from "./socket-lifecycle";
import { timing } from "./timing";

/** Settings the runtime re-reads whenever the handler's config is (re)resolved. @internal */
export interface RuntimeSettings {
  mode: SocketMonitorMode;
  /** Delay before a request counts as "waiting" for the socket-usage check, ms (upstream's formula). */
  warningWindowMs: number;
  logger: Logger | undefined;
  /** The agents the interval check samples (the http agent may not exist yet). */
  agents: () => (Agent | undefined)[];
  /** Milliseconds between two `monitor.sample()` calls. */
  sampleIntervalMs: number;
  /** Free-socket limits (`idleSocketTimeout`, `connectionLifetime`); both off = no sweeping at all. */
  lifecycle: SocketLifecycleLimits;
}

function onPerRequestWarning(state: InFlightRequest): void {
  state.warningTimer = undefined;
  state.runtime.onWarningWindow(state);
}

/** @internal */
export class HandlerRuntime {
  readonly scheduler: DeadlineScheduler;
  settings: RuntimeSettings | undefined = undefined;
  /** Upstream's per-handler warning timestamp (wall clock ms), shared by both agents. */
  socketWarningTimestamp = 0;
  /** Per-origin telemetry and saturation detection; `undefined` with `telemetry: false`. */
  monitor: PoolMonitor | undefined = undefined;
  private lastSampleAt = Number.NEGATIVE_INFINITY;
  private inFlight = 0;
  private idleHead: InFlightRequest | undefined = undefined;
  private idleExpired: InFlightRequest[] = [];
  private readonly boundIdleFlush = () => this.flushIdle();
  private readonly boundSocketClosed = (socket: Socket, reason: LifecycleCloseReason) =>
    this.socketClosedByLimit(socket, reason);

  constructor() {
    this.scheduler = new DeadlineScheduler((now) => this.onTick(now));
  }

  /** Requests started and not yet settled. */
  get inFlightCount(): number {
    return this.inFlight;
  }

  requestStarted(state: InFlightRequest): void {
    this.inFlight++;
    const monitor = this.monitor;
    if (monitor !== undefined && !state.plan.oneOffAgent) {
      // The request's own listeners forward its events to the monitor (no second set of listeners).
      monitor.trackRequest(state.req!, state.plan.agent, state.plan.origin, state.startedAt, false);
      state.tracked = true;
    }
  }

  /** Right before a request is created: drop expired free sockets of its agent so it cannot get one. */
  beforeDispatch(agent: Agent, now: number): void {
    const lifecycle = this.settings?.lifecycle;
    if (lifecycle === undefined || !(lifecycle.idleSocketTimeout || lifecycle.connectionLifetime)) return;
    if (sweepDue(agent, now)) sweepAgent(agent, lifecycle, now, this.boundSocketClosed);
  }

  /** Telemetry for a socket the handler closed on purpose. */
  socketClosedByLimit(socket: Socket, reason: LifecycleCloseReason): void {
    this.monitor?.noteSocketClose(socket, reason);
  }

  requestSettled(state: InFlightRequest): void {
    this.inFlight--;
    if (state.warning) this.scheduler.cancel(state.warning);
    if (state.warningTimer !== undefined) {
      timing.clearTimeout(state.warningTimer);
      state.warningTimer = undefined;
    }
  }

  requestClosed(state: InFlightRequest): void {
    if (state.idleWatched) this.unwatchIdle(state);
  }

  noteOutcome(state: InFlightRequest, outcome: "aborted" | "timed_out"): void {
    if (this.monitor !== undefined && state.req !== undefined) this.monitor.noteOutcome(state.req, outcome);
  }

  /**
   * Arms the socket-usage window of a new request according to the mode. Nothing is armed for agents without a
   * finite `maxSockets` (the check could never warn) or for one-off 100-continue agents.
   */
  armWarning(state: InFlightRequest, now: number): void {
    const settings = this.settings;
    if (settings === undefined || settings.mode === "off" || state.plan.oneOffAgent) return;
    const maxSockets = state.plan.agent.maxSockets;
    if (typeof maxSockets !== "number" || maxSockets === Infinity) return;
    if (settings.mode === "per-request") {
      // Upstream exactly: one native timer per request, cleared when it settles.
      state.warningTimer = timing.setTimeout(onPerRequestWarning, settings.warningWindowMs, state);
      return;
    }
    if (this.monitor !== undefined) {
      // Interval mode with telemetry: the detector samples the pool on the shared tick; nothing per request.
      this.scheduler.ensureTicking();
      return;
    }
    // Interval mode without telemetry: upstream's criteria on the shared scheduler. The window is at least MIN_WARNING_WINDOW_MS, so a 0 ms config
    // (requestTimeout: 0, connectionTimeout: 0) neither spins nor falls back to native short timers.
    state.warning ??= new Deadline(state, DeadlineKind.Warning);
    this.scheduler.arm(state.warning, now, Math.max(MIN_WARNING_WINDOW_MS, settings.warningWindowMs));
  }

  /** A request has waited the whole warning window without settling: run upstream's check. */
  onWarningWindow(state: InFlightRequest): void {
    const settings = this.settings;
    if (settings === undefined) return;
    if (settings.mode === "per-request") {
      this.socketWarningTimestamp = checkSocketUsage(state.plan.agent, this.socketWarningTimestamp, state.plan.logger);
      return;
    }
    for (const agent of settings.agents()) {
      if (agent === undefined) continue;
      const before = this.socketWarningTimestamp;
      this.socketWarningTimestamp = checkSocketUsage(agent, before, settings.logger);
      if (this.socketWarningTimestamp !== before) return;
    }
  }

  watchIdle(state: InFlightRequest, socket: Socket): void {
    state.idleWatched = true;
    state.idleBytes = socket.bytesRead + socket.bytesWritten;
    state.idleSince = timing.now();
    state.idlePrev = undefined;
    state.idleNext = this.idleHead;
    if (this.idleHead) this.idleHead.idlePrev = state;
    this.idleHead = state;
    this.scheduler.ensureTicking();
  }

  unwatchIdle(state: InFlightRequest): void {
    if (!state.idleWatched) return;
    state.idleWatched = false;
    if (state.idlePrev) state.idlePrev.idleNext = state.idleNext;
    else this.idleHead = state.idleNext;
    if (state.idleNext) state.idleNext.idlePrev = state.idlePrev;
    state.idleNext = state.idlePrev = undefined;
  }

  /** Stops the interval and forgets every watch (handler `destroy()`). */
  stop(): void {
    this.scheduler.stop();
    this.lastSampleAt = Number.NEGATIVE_INFINITY;
    while (this.idleHead) this.unwatchIdle(this.idleHead);
  }

  private onTick(now: number): boolean {
    for (let state = this.idleHead; state !== undefined; ) {
      const next = state.idleNext;
      const socket = state.req?.socket;
      if (socket) {
        const bytes = socket.bytesRead + socket.bytesWritten;
        if (bytes !== state.idleBytes) {
          state.idleBytes = bytes;
          state.idleSince = now;
        } else if (now - state.idleSince >= (state.plan.socketTimeout as number) && !state.idleExpiring) {
          // Confirm after the poll phase: bytes that arrived during an event-loop stall are read there first.
          state.idleExpiring = true;
          if (this.idleExpired.push(state) === 1) timing.setImmediate(this.boundIdleFlush);
        }
      }
      state = next;
    }
    let busy = this.idleHead !== undefined;
    const lifecycle = this.settings?.lifecycle;
    if (lifecycle !== undefined && (lifecycle.idleSocketTimeout || lifecycle.connectionLifetime)) {
      for (const agent of this.settings!.agents()) {
        if (agent !== undefined) sweepAgent(agent, lifecycle, now, this.boundSocketClosed);
      }
    }
    const monitor = this.monitor;
    if (monitor !== undefined && this.settings?.mode === "interval") {
      if (now - this.lastSampleAt >= this.settings.sampleIntervalMs) {
        this.lastSampleAt = now;
        monitor.sample(now);
      }
      busy ||= monitor.busy;
    }
    return busy;
  }

  private flushIdle(): void {
    const expired = this.idleExpired;
    this.idleExpired = [];
    for (const state of expired) {
      state.idleExpiring = false;
      if (!state.idleWatched) continue;
      const socket = state.req?.socket;
      if (socket && socket.bytesRead + socket.bytesWritten !== state.idleBytes) {
        state.idleBytes = socket.bytesRead + socket.bytesWritten;
        state.idleSince = timing.now();
        continue;
      }
      this.unwatchIdle(state);
      state.onIdleTimeout();
    }
  }
}
