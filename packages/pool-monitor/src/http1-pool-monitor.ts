/**
 * `Http1PoolMonitor`: the node:http pool reader an embedder drives (the handler's monitor), and the base of the
 * standalone `PoolMonitor` (`pool-monitor.ts`), which adds what only a monitor of the user's own agents needs
 * (`trackRequest()` with its own listeners or forwarding by request, `start()`'s interval). An app that uses only
 * the handler therefore bundles none of that (a class's methods cannot be tree-shaken one by one; its modules can).
 *
 * Counting, sampling, delivery and snapshots are the shared `TelemetryCore` (`telemetry-core.ts`); this class is
 * its node:http reader: `read()` turns each busy origin's agent maps and open responses into the gauges and the
 * detector's evidence. Cost: O(busy origins × (agent names + open responses)). Per request: one state object
 * (`attachRequest()`, `request-listeners.ts`), returned as the handle the embedder forwards the request's events to.
 */
import type { Agent, ClientRequest } from "node:http";
import type { Socket } from "node:net";
import type { PoolReading } from "./pool-reading";
import { attachQueued, attachRequest, attachUnpooled } from "./request-listeners";
import { TelemetryCore, UNREAD_WHILE_QUEUED_SAMPLES } from "./telemetry-core";
import { AgentLinks, OriginState, type RequestTracking, socketStateOf, type TrackedRequest } from "./tracking-state";

/**
 * Socket-pool telemetry and saturation detection for requests an embedder attaches and forwards the events of (the
 * handler's monitor, `NodeHttpHandler.poolMonitor`); `PoolMonitor` extends it for your own agents.
 * @public
 */
export class Http1PoolMonitor extends TelemetryCore<OriginState> {
  /** Which origin each agent name belongs to. @internal */
  readonly links = new AgentLinks();

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
   * Starts tracking one request for an embedder with its own per-request object: nothing is added to the request;
   * the returned handle is the request's state, to keep and forward the request's `'socket'`, `'response'`,
   * `'error'` and `'close'` events (and `noteOutcome()`) to. Call it right after `http.request()` returned (before
   * any await), so that a request that had to queue is still the last entry of `agent.requests`.
   *
   * @param req - the request just created (compared with the agent's queue, never stored).
   * @param agent - the agent it was created with.
   * @param origin - `scheme://host:port` (cheapest), or any absolute URL, which is reduced to `scheme://host:port`
   *   (see `normalizeOrigin()`): only the origin is ever stored or reported, never paths, queries or headers.
   * @param startedAt - `timing.now()` / `performance.now()` ms taken when the caller began handling the request;
   *   queue wait is measured from it.
   * @returns the handle, or `undefined` when the monitor is destroyed (nothing to forward then).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.destroyed) return undefined;
    return attachRequest(this, req as TrackedRequest, agent, this.originFor(origin), startedAt);
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
   * @param origin - as for `attachRequest()`.
   * @param startedAt - as for `attachRequest()`: queue wait is measured from it.
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
    return st;
  }

  /**
   * Starts tracking a request sent outside the pool: on a one-off agent with no socket limit, e.g. the handler's
   * `Expect: 100-continue` requests. It is counted in the origin's `unpooled` block of `getStats()` (started, in
   * flight, outcomes, TCP connect time) and stays out of the pool gauges (`active`, `queued`, `inFlight`,
   * `requests`, `sockets`, histograms) and the saturation detector. Nothing is added to the request; forward its
   * events to the returned handle as for `attachRequest()`.
   *
   * @param req - the request just created.
   * @param origin - as for `attachRequest()`.
   * @param startedAt - `timing.now()` ms when the caller began handling the request.
   * @returns the handle, or `undefined` when the monitor is destroyed.
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host.
   */
  attachUnpooledRequest(req: ClientRequest, origin: string, startedAt: number): RequestTracking | undefined {
    if (this.destroyed) return undefined;
    return attachUnpooled(this, req as TrackedRequest, this.originFor(origin), startedAt);
  }

  /**
   * Tells the monitor that the caller is closing `socket` on purpose (a pooled socket idle too long, or older than
   * its allowed lifetime), so its close is counted under that reason. Unknown sockets are ignored.
   */
  noteSocketClose(socket: Socket, reason: "idle_timeout" | "max_lifetime"): void {
    const ss = socketStateOf(socket);
    if (ss !== undefined && ss.core === this && !ss.closed) ss.closedBy = reason;
  }
}
