/**
 * `PoolMonitor`: telemetry and saturation detection for the user's own `http.Agent`s, from public Node APIs only.
 * `trackRequest()` hangs a state object and four shared listeners on the request (`request-forwarding.ts`);
 * `attach*()` return the state instead, for an embedder that forwards the events. What a handler does not need lives
 * here, so a handler-only app does not bundle it.
 */
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { Http1PoolMonitor } from "./http1-pool-monitor";
import { LazyInterval } from "./lazy-interval";
import type { PoolMonitorOptions, ResolvedPoolMonitorOptions } from "./pool-monitor-options";
import { hangOnRequest, requestEventHandlers, stateOnRequest, TrackedRequestState } from "./request-forwarding";
import { trackedRequests, trackQueued, trackStarted, trackUnpooled } from "./request-listeners";
import { timing } from "./timing";
import type { RequestTracking } from "./tracking-state";

/**
 * Socket-pool telemetry and saturation detection for Node `http.Agent` / `https.Agent`.
 *
 * @example
 * ```ts
 * const monitor = new PoolMonitor({ logger: console });
 * monitor.start(); // standalone: the monitor samples on its own unref'd interval
 * const startedAt = performance.now();
 * const req = http.request(url, { agent });
 * monitor.trackRequest(req, agent, "http://127.0.0.1:8080", startedAt);
 * ```
 * @public
 */
export class PoolMonitor extends Http1PoolMonitor {
  private standalone = false;
  /** Standalone mode's interval; created on demand, never while idle. */
  private ticker: LazyInterval | undefined = undefined;

  /**
   * @param options - see {@link PoolMonitorOptions}; a bad value throws a `TypeError`/`RangeError` naming it.
   */
  constructor(options?: PoolMonitorOptions) {
    super(options);
    this.requests = trackedRequests;
    this.onResume = () => {
      if (this.standalone) this.ensureTicking();
    };
  }

  /**
   * Starts tracking one request. Call it right after `http.request()` / `https.request()` returned (before any
   * await), so that a request that had to queue is still the last entry of `agent.requests`.
   *
   * @param req - the request just created.
   * @param agent - the agent it was created with.
   * @param origin - `scheme://host:port`, or an absolute URL reduced to it: paths and queries are never stored.
   * @param startedAt - `performance.now()` ms when the caller began handling the request (queue wait runs from it).
   * @param listen - `true` (default): the monitor adds its own listeners; `false`: the caller forwards the events
   *   through `requestSocket()` … `requestClosed()`.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host (likewise below).
   */
  trackRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number, listen = true): void {
    if (this.coreDestroyed) return;
    const st = new TrackedRequestState(agent, startedAt);
    trackStarted(this, st, this.originFor(origin), req);
    hangOnRequest(req, st, listen);
    if (this.standalone) this.ensureTicking();
  }

  /**
   * As `trackRequest()`, but nothing is added to the request: forward its events (and `noteOutcome()`) to the returned
   * handle (`undefined` when the monitor is destroyed).
   */
  attachRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.coreDestroyed) return undefined;
    const st = new TrackedRequestState(agent, startedAt);
    trackStarted(this, st, this.originFor(origin), req);
    if (this.standalone) this.ensureTicking();
    return st;
  }

  /**
   * Starts tracking a request its embedder queues itself before creating it (a gate in front of `agent.requests`):
   * it counts as queued exactly as one waiting in `agent.requests[name]`. Call the handle's `dispatched(req)` once
   * the request is created, then forward events as for `attachRequest()`; `onClose()` if it is never created.
   *
   * @param agent - the agent the request will be created with.
   * @param name - the agent's name for the request (`agent.getName(options)`), i.e. its `agent.requests` key.
   * @param method - the request's method, for `request:finished` if it ends before it is created.
   * @param contentLength - its `Content-Length` header, if any (likewise).
   * @returns the handle, or `undefined` when the monitor is destroyed.
   */
  attachQueued(
    agent: Agent,
    name: string,
    origin: string,
    startedAt: number,
    method?: string,
    contentLength?: unknown
  ): RequestTracking | undefined {
    if (this.coreDestroyed) return undefined;
    const st = new TrackedRequestState(agent, startedAt);
    st.trackedMethod = method;
    st.requestBodySize = contentLength;
    trackQueued(this, st, this.originFor(origin), name);
    if (this.standalone) this.ensureTicking();
    return st;
  }

  /** As `trackUnpooledRequest()`, returning a handle to forward its events to (as `attachRequest()`). */
  attachUnpooledRequest(req: ClientRequest, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.coreDestroyed) return undefined;
    const st = new TrackedRequestState(undefined as never, startedAt);
    trackUnpooled(this, st, this.originFor(origin), req);
    return st;
  }

  /**
   * Starts tracking a request sent outside the pool (e.g. `Expect: 100-continue`): counted in the origin's `unpooled`
   * block of `getStats()` only. Parameters as for `trackRequest()`.
   */
  trackUnpooledRequest(req: ClientRequest, origin: string, startedAt: number, listen = true): void {
    if (this.coreDestroyed) return;
    const st = new TrackedRequestState(undefined as never, startedAt);
    trackUnpooled(this, st, this.originFor(origin), req);
    hangOnRequest(req, st, listen);
  }

  /** In standalone mode the interval is re-created with a new period. @internal */
  protected override configured(previous: ResolvedPoolMonitorOptions): void {
    if (this.monitorOptions.sampleIntervalMs !== previous.sampleIntervalMs && this.ticker !== undefined) {
      this.stopTicker();
      this.ticker = undefined;
      if (this.standalone && this.busy) this.ensureTicking();
    }
  }

  /** Forwarded `'socket'` event of a request tracked with `listen = false`. */
  requestSocket(req: ClientRequest, socket: Socket): void {
    requestEventHandlers.socket.call(req, socket);
  }

  /** Forwarded `'response'` event of a request tracked with `listen = false`. */
  requestResponse(req: ClientRequest, res: IncomingMessage): void {
    requestEventHandlers.response.call(req, res);
  }

  /** Forwarded `'error'` event of a request tracked with `listen = false` (call it before handling the error). */
  requestError(req: ClientRequest): void {
    requestEventHandlers.error.call(req);
  }

  /** Forwarded `'close'` event of a request tracked with `listen = false`. */
  requestClosed(req: ClientRequest): void {
    requestEventHandlers.close.call(req);
  }

  /**
   * Tells the monitor why the caller destroyed a request, so it is counted as aborted / timed out rather than
   * failed (and its socket's close reason says so). May be called before or after the request closed.
   */
  noteOutcome(req: ClientRequest, outcome: "aborted" | "timed_out"): void {
    const st = stateOnRequest(req);
    if (st !== undefined && st.core === this) st.noteOutcome(outcome);
  }

  /** Standalone mode: samples every `sampleIntervalMs` on an `unref()`'d interval that exists only while busy. */
  start(): void {
    if (this.coreDestroyed) return;
    this.standalone = true;
    if (this.busy) this.ensureTicking();
  }

  /** Leaves standalone mode and clears the interval. Tracking continues; `sample()` can still be called. */
  stop(): void {
    this.standalone = false;
    this.stopTicker();
  }

  /** Clears the interval and all state. Later calls are no-ops; requests still in flight are ignored. */
  override destroy(): void {
    this.stop();
    super.destroy();
  }

  private readonly onTick = (): void => {
    this.sample(timing.now());
    if (!this.wantsSamples) this.stopTicker();
  };

  private ensureTicking(): void {
    this.ticker ??= new LazyInterval(this.onTick, this.monitorOptions.sampleIntervalMs);
    this.ticker.ensure();
  }

  private stopTicker(): void {
    this.ticker?.stop();
  }
}
