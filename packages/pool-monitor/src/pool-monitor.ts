/**
 * `PoolMonitor`: socket-pool telemetry and saturation detection for any `http.Agent` / `https.Agent`,
 * built on public Node APIs only (agent maps, request and socket events; no patching).
 *
 * Data flow:
 * - `trackRequest()` (hot path, once per request) hangs a small state object on the request and
 *   registers four shared module-level listeners (`request-forwarding.ts`; per-request costs in
 *   `request-listeners.ts`); `attachRequest()` returns that state instead, for an embedder that forwards the
 *   request's events. This tracking is the standalone monitor's own: `NodeHttpHandler` counts its requests on its
 *   `Http1PoolMonitor` (the base class) itself.
 * - Listeners update per-origin counters and histograms as the request gets a socket, a response and
 *   closes; sockets are followed from first sight to `'close'` (connect/TLS timings, close reason).
 * - Counting, sampling, delivery and snapshots are the shared `TelemetryCore` (`telemetry-core.ts`); its
 *   node:http reader is the base class (`http1-pool-monitor.ts`): `read()` turns each busy origin's agent
 *   maps and open responses into the gauges and the detector's evidence. This class adds only what a
 *   monitor of the user's own agents needs, so a handler-only app does not bundle it.
 * - Origins are keyed `scheme://host:port` (`normalize-origin.ts`): a caller's `url.href` is reduced to
 *   its origin before anything is stored, so paths and presigned queries never reach stats or events.
 * - `configure()` swaps the resolved options at runtime; detectors are re-tuned in place (their window
 *   is cleared, episodes are kept), so a new sample interval never makes every sample a gap.
 *
 * Standalone mode (`start()`): one `unref()`'d interval owned by the monitor, created on the first
 * `trackRequest()` and cleared at the first tick that finds the monitor not `busy`, so an idle
 * process has no timer and no wake-ups.
 */
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { Http1PoolMonitor } from "./http1-pool-monitor";
import { LazyInterval } from "./lazy-interval";
import type { PoolMonitorOptions, ResolvedPoolMonitorOptions } from "./pool-monitor-options";
import { hangOnRequest, requestEventHandlers, stateOnRequest, TrackedRequestState } from "./request-forwarding";
import { trackedRequests, trackQueued, trackStarted, trackUnpooled } from "./request-listeners";
import { timing } from "./timing";
import type { RequestTracking, TrackedRequest } from "./tracking-state";

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
  /** Standalone mode's lazy interval (see `lazy-interval.ts`); created on demand, never while idle. */
  private ticker: LazyInterval | undefined = undefined;

  /**
   * @param options - see {@link PoolMonitorOptions}; validated here (a `TypeError`/`RangeError` names the option,
   * the value received and the allowed range).
   */
  constructor(options?: PoolMonitorOptions) {
    super(options);
    this.requests = trackedRequests;
    // Sampling stops while nothing happens (`wantsSamples`): the next event restarts the interval.
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
   * @param origin - `scheme://host:port` (cheapest), or any absolute URL, which is reduced to `scheme://host:port`
   *   (see `normalizeOrigin()`): only the origin is ever stored or reported, never paths, queries or headers.
   * @param startedAt - `timing.now()` / `performance.now()` ms taken when the caller began handling the request;
   *   queue wait is measured from it.
   * @param listen - `true` (default): the monitor adds its own request listeners. `false`: the caller already
   *   listens to the request and forwards `'socket'`, `'response'`, `'error'` and `'close'` through
   *   `requestSocket()`, `requestResponse()`, `requestError()` and `requestClosed()` (saves four listener
   *   registrations per request on the hot path).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  trackRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number, listen = true): void {
    if (this.coreDestroyed) return;
    const st = new TrackedRequestState(agent, startedAt);
    trackStarted(this, st, this.originFor(origin), req as TrackedRequest);
    hangOnRequest(req as TrackedRequest, st, listen);
    if (this.standalone) this.ensureTicking();
  }

  /**
   * Starts tracking one request for an embedder with its own per-request object: nothing is added to the request;
   * the returned handle is the request's state, to keep and forward the request's `'socket'`, `'response'`,
   * `'error'` and `'close'` events (and `noteOutcome()`) to. Call it right after `http.request()` returned (before
   * any await), so that a request that had to queue is still the last entry of `agent.requests`. In standalone mode
   * it also starts the interval.
   *
   * @param req - the request just created (compared with the agent's queue, never stored).
   * @param agent - the agent it was created with.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - as for `trackRequest()`: queue wait is measured from it.
   * @returns the handle, or `undefined` when the monitor is destroyed (nothing to forward then).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.coreDestroyed) return undefined;
    const st = new TrackedRequestState(agent, startedAt);
    trackStarted(this, st, this.originFor(origin), req as TrackedRequest);
    if (this.standalone) this.ensureTicking();
    return st;
  }

  /**
   * Starts tracking a request its embedder queues itself before creating it (e.g. a per-agent gate that keeps
   * requests beyond `maxSockets` out of `agent.requests`, as `NodeHttpHandler` does): it counts as queued exactly as a
   * request waiting in `agent.requests[name]` does (the `queued` gauge, the oldest queued age, `request:enqueued`, the
   * saturation detector's evidence for that agent name). Keep the returned handle; call its `dispatched(req)` right
   * after the request is created, then forward the request's events to it as for `attachRequest()`; `onClose()` (and
   * `noteOutcome()`) also when it ends without ever being created. In standalone mode it also starts the interval.
   *
   * @param agent - the agent the request will be created with.
   * @param name - the agent's name for the request (`agent.getName(options)`), i.e. its `agent.requests` key.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - as for `trackRequest()`: queue wait is measured from it.
   * @param method - the request's method (for `request:finished` of a request that ends before it is created).
   * @param contentLength - its `Content-Length` header, if any (likewise).
   * @returns the handle, or `undefined` when the monitor is destroyed.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
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

  /**
   * As `trackUnpooledRequest(…, false)`, for an embedder with its own per-request object: nothing is added to the
   * request; forward its events to the returned handle as for `attachRequest()`.
   *
   * @param req - the request just created.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - `timing.now()` ms when the caller began handling the request.
   * @returns the handle, or `undefined` when the monitor is destroyed.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachUnpooledRequest(req: ClientRequest, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.coreDestroyed) return undefined;
    const st = new TrackedRequestState(undefined as never, startedAt);
    trackUnpooled(this, st, this.originFor(origin), req as TrackedRequest);
    return st;
  }

  /**
   * Starts tracking a request sent outside the pool: on a one-off agent with no socket limit, e.g. the handler's
   * `Expect: 100-continue` requests. It is counted in the origin's `unpooled` block of `getStats()` (started, in
   * flight, outcomes, TCP connect time) and stays out of the pool gauges (`active`, `queued`, `inFlight`,
   * `requests`, `sockets`, histograms) and the saturation detector. Forward its events (`requestSocket()`,
   * `requestResponse()`, `requestError()`, `requestClosed()`) and outcome (`noteOutcome()`) as for `trackRequest()`.
   *
   * @param req - the request just created.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - `timing.now()` ms when the caller began handling the request.
   * @param listen - as for `trackRequest()`: `false` when the caller forwards the request's events itself.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  trackUnpooledRequest(req: ClientRequest, origin: string, startedAt: number, listen = true): void {
    if (this.coreDestroyed) return;
    // The agent is never read for an unpooled request: `undefined` as any stands for "no pool".
    const st = new TrackedRequestState(undefined as never, startedAt);
    trackUnpooled(this, st, this.originFor(origin), req as TrackedRequest);
    hangOnRequest(req as TrackedRequest, st, listen);
  }

  /** In standalone mode the interval is re-created with a new period. @internal */
  protected override configured(previous: ResolvedPoolMonitorOptions): void {
    if (this.monitorOptions.sampleIntervalMs !== previous.sampleIntervalMs && this.ticker !== undefined) {
      this.stopTicker();
      this.ticker = undefined; // the next ensureTicking() creates it with the new period
      if (this.standalone && this.busy) this.ensureTicking();
    }
  }

  /** Forwarded `'socket'` event of a request tracked with `listen = false`. */
  requestSocket(req: ClientRequest, socket: Socket): void {
    requestEventHandlers.socket.call(req as TrackedRequest, socket);
  }

  /** Forwarded `'response'` event of a request tracked with `listen = false`. */
  requestResponse(req: ClientRequest, res: IncomingMessage): void {
    requestEventHandlers.response.call(req as TrackedRequest, res);
  }

  /** Forwarded `'error'` event of a request tracked with `listen = false` (call it before handling the error). */
  requestError(req: ClientRequest): void {
    requestEventHandlers.error.call(req as TrackedRequest);
  }

  /** Forwarded `'close'` event of a request tracked with `listen = false`. */
  requestClosed(req: ClientRequest): void {
    requestEventHandlers.close.call(req as TrackedRequest);
  }

  /**
   * Tells the monitor why the caller destroyed a request, so it is counted as aborted / timed out rather than
   * failed (and its socket's close reason says so). May be called before or after the request closed.
   */
  noteOutcome(req: ClientRequest, outcome: "aborted" | "timed_out"): void {
    const st = stateOnRequest(req as TrackedRequest);
    if (st !== undefined && st.core === this) st.noteOutcome(outcome);
  }

  /**
   * Standalone mode: the monitor samples itself every `sampleIntervalMs` on a lazy, `unref()`'d interval that
   * exists only while the monitor is busy (created by `trackRequest()`, cleared by the first idle tick).
   */
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
    // LazyInterval also recreates the interval when the timer implementation changed (fake <-> real timers).
    this.ticker ??= new LazyInterval(this.onTick, this.monitorOptions.sampleIntervalMs);
    this.ticker.ensure();
  }

  private stopTicker(): void {
    this.ticker?.stop();
  }
}
