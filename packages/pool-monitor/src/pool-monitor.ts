/**
 * `PoolMonitor`: socket-pool telemetry and saturation detection for any `http.Agent` / `https.Agent`,
 * built on public Node APIs only (agent maps, request and socket events; no patching).
 *
 * Data flow:
 * - `trackRequest()` (hot path, once per request) hangs a small state object on the request and
 *   registers four shared module-level listeners (see `request-listeners.ts` for per-request costs);
 *   `attachRequest()` returns that state instead, for an embedder that forwards the request's events.
 * - Listeners update per-origin counters and histograms as the request gets a socket, a response and
 *   closes; sockets are followed from first sight to `'close'` (connect/TLS timings, close reason).
 * - Counting, sampling, delivery and snapshots are the shared `TelemetryCore` (`telemetry-core.ts`); this
 *   class is its node:http reader: `read()` turns each busy origin's agent maps and open responses into
 *   the gauges and the detector's evidence. Cost: O(busy origins × (agent names + open responses)).
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
import { LazyInterval } from "./lazy-interval";
import type { PoolMonitorOptions, ResolvedPoolMonitorOptions } from "./pool-monitor-options";
import type { PoolReading } from "./pool-reading";
import {
  attachQueued,
  attachRequest,
  attachUnpooled,
  Delivery,
  noteRequestOutcome,
  requestEventHandlers,
} from "./request-listeners";
import { TelemetryCore, UNREAD_WHILE_QUEUED_SAMPLES } from "./telemetry-core";
import { timing } from "./timing";
import {
  AgentLinks,
  kRequestState,
  OriginState,
  type RequestTracking,
  socketStateOf,
  type TrackedRequest,
} from "./tracking-state";

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
export class PoolMonitor extends TelemetryCore<OriginState> {
  /** Which origin each agent name belongs to. @internal */
  readonly links = new AgentLinks();
  private standalone = false;
  /** Standalone mode's lazy interval (see `lazy-interval.ts`); created on demand, never while idle. */
  private ticker: LazyInterval | undefined = undefined;

  /**
   * @param options - see {@link PoolMonitorOptions}; validated here (a `TypeError`/`RangeError` names the option,
   * the value received and the allowed range).
   */
  constructor(options?: PoolMonitorOptions) {
    super(options);
  }

  /** @internal */
  protected newOrigin(key: string): OriginState {
    return new OriginState(key, this.options);
  }

  /** @internal */
  protected read(o: OriginState, now: number, r: PoolReading): void {
    o.poll(this.links, this, now, r);
    const options = this.options;
    o.pollUnconsumed(now, options.unconsumedBodyMs, UNREAD_WHILE_QUEUED_SAMPLES * options.sampleIntervalMs, r);
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
    if (this.destroyed) return;
    attachRequest(
      this,
      req as TrackedRequest,
      agent,
      this.originFor(origin),
      startedAt,
      listen ? Delivery.Listen : Delivery.ForwardByRequest
    );
    if (this.standalone) this.ensureTicking();
  }

  /**
   * Starts tracking one request as `trackRequest(req, agent, origin, startedAt, false)` does, for an embedder with its
   * own per-request object: nothing is added to the request; the returned handle is the request's state, to keep and
   * forward the request's `'socket'`, `'response'`, `'error'` and `'close'` events (and `noteOutcome()`) to. Call it
   * right after `http.request()` returned, as `trackRequest()`.
   *
   * @param req - the request just created (compared with the agent's queue, never stored).
   * @param agent - the agent it was created with.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - as for `trackRequest()`.
   * @returns the handle, or `undefined` when the monitor is destroyed (nothing to forward then).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.destroyed) return undefined;
    const st = attachRequest(this, req as TrackedRequest, agent, this.originFor(origin), startedAt, Delivery.Handle);
    if (this.standalone) this.ensureTicking();
    return st;
  }

  /**
   * Starts tracking a request its embedder queues itself before creating it (e.g. the handler's per-agent gate, which
   * keeps requests beyond `maxSockets` out of `agent.requests`): it counts as queued exactly as a request waiting in
   * `agent.requests[name]` does (the `queued` gauge, the oldest queued age, `request:enqueued`, the saturation
   * detector's evidence for that agent name). Keep the returned handle; call its `dispatched(req)` right after the
   * request is created, then forward the request's events to it as for `attachRequest()`; `onClose()` (and
   * `noteOutcome()`) also when it ends without ever being created.
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
    if (this.destroyed) return undefined;
    const st = attachQueued(this, agent, name, this.originFor(origin), startedAt);
    st.method = method;
    st.requestBodySize = contentLength;
    if (this.standalone) this.ensureTicking();
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
    if (this.destroyed) return;
    attachUnpooled(
      this,
      req as TrackedRequest,
      this.originFor(origin),
      startedAt,
      listen ? Delivery.Listen : Delivery.ForwardByRequest
    );
  }

  /**
   * `trackUnpooledRequest()` for an embedder with its own per-request object, as `attachRequest()` is for
   * `trackRequest()`: nothing is added to the request; forward its events to the returned handle.
   *
   * @param req - the request just created.
   * @param origin - as for `trackRequest()`.
   * @param startedAt - `timing.now()` ms when the caller began handling the request.
   * @returns the handle, or `undefined` when the monitor is destroyed.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachUnpooledRequest(req: ClientRequest, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.destroyed) return undefined;
    return attachUnpooled(this, req as TrackedRequest, this.originFor(origin), startedAt, Delivery.Handle);
  }

  /** In standalone mode the interval is re-created with a new period. @internal */
  protected override configured(previous: ResolvedPoolMonitorOptions): void {
    if (this.options.sampleIntervalMs !== previous.sampleIntervalMs && this.ticker !== undefined) {
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
    const st = (req as TrackedRequest)[kRequestState];
    if (st !== undefined && st.core === this) noteRequestOutcome(st, outcome);
  }

  /**
   * Tells the monitor that the caller is closing `socket` on purpose (a pooled socket idle too long, or older than
   * its allowed lifetime), so its close is counted under that reason. Unknown sockets are ignored.
   */
  noteSocketClose(socket: Socket, reason: "idle_timeout" | "max_lifetime"): void {
    const ss = socketStateOf(socket);
    if (ss !== undefined && ss.core === this && !ss.closed) ss.closedBy = reason;
  }

  /**
   * Standalone mode: the monitor samples itself every `sampleIntervalMs` on a lazy, `unref()`'d interval that
   * exists only while the monitor is busy (created by `trackRequest()`, cleared by the first idle tick).
   */
  start(): void {
    if (this.destroyed) return;
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
    if (!this.busy) this.stopTicker();
  };

  private ensureTicking(): void {
    // LazyInterval also recreates the interval when the timer implementation changed (fake <-> real timers).
    this.ticker ??= new LazyInterval(this.onTick, this.options.sampleIntervalMs);
    this.ticker.ensure();
  }

  private stopTicker(): void {
    this.ticker?.stop();
  }
}
