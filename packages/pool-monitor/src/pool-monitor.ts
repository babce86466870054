import type { Agent, ClientRequest } from "node:http";
import { Http1PoolMonitor } from "./http1-pool-monitor";
import { LazyInterval } from "./lazy-interval";
import type { PoolMonitorOptions, ResolvedPoolMonitorOptions } from "./pool-monitor-options";
import { TrackedRequest, trackedRequestOf, trackedRequests } from "./tracked-request";
import { timing } from "./timing";

/**
 * Socket-pool telemetry and saturation detection for your own Node `http.Agent` / `https.Agent`, from public Node APIs
 * only. Each tracked request gets a `TrackedRequest`; an app that only uses a handler bundles neither.
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
  /** The sampling interval of standalone mode (`start()` to `stop()`); it runs only while busy. */
  private ticker: LazyInterval | undefined = undefined;

  /** @param options - see {@link PoolMonitorOptions}; a bad value throws a `TypeError`/`RangeError` naming it. */
  constructor(options?: PoolMonitorOptions) {
    super(options);
    this.requests = trackedRequests;
    this.onResume = () => this.ticker?.ensure();
  }

  /**
   * Starts tracking one request (four listeners). Call it right after `http.request()` returned (before any await),
   * so that a request that had to queue is still the last entry of `agent.requests`.
   * @param req - the request just created.
   * @param agent - the agent it was created with.
   * @param origin - `scheme://host:port`, or an absolute URL reduced to it: paths and queries are never stored.
   * @param startedAt - `performance.now()` ms when the caller began handling the request (queue wait runs from it).
   * @throws TypeError when `origin` is neither `scheme://host:port` nor an absolute URL with a host (likewise below).
   */
  trackRequest(req: ClientRequest, agent: Agent, origin: string, startedAt: number): void {
    if (this.coreDestroyed) return;
    new TrackedRequest(this, this.originFor(origin), agent, startedAt, req);
    this.ticker?.ensure();
  }

  /** Tracks a request sent outside the pool (a one-off agent), counted in `unpooled` only; as `trackRequest()`. */
  trackUnpooledRequest(req: ClientRequest, origin: string, startedAt: number): void {
    if (this.coreDestroyed) return;
    new TrackedRequest(this, this.originFor(origin), undefined, startedAt, req);
  }

  /** Why the caller destroyed a request: counted aborted / timed out, not failed. Before or after it closed. */
  noteOutcome(req: ClientRequest, outcome: "aborted" | "timed_out"): void {
    const st = trackedRequestOf(req);
    if (st?.core === this) st.noteOutcome(outcome);
  }

  /** Standalone mode: samples every `sampleIntervalMs` on an `unref()`'d interval that exists only while busy. */
  start(): void {
    if (this.coreDestroyed) return;
    this.ticker ??= new LazyInterval(this.onTick, this.monitorOptions.sampleIntervalMs);
    if (this.busy) this.ticker.ensure();
  }

  /** Leaves standalone mode and clears the interval. Tracking continues; `sample()` can still be called. */
  stop(): void {
    this.ticker?.stop();
    this.ticker = undefined;
  }

  /** Clears the interval and all state. Later calls are no-ops; requests still in flight are ignored. */
  override destroy(): void {
    this.stop();
    super.destroy();
  }

  /** In standalone mode the interval is re-created with a new period. @internal */
  protected override configured(previous: ResolvedPoolMonitorOptions): void {
    if (this.ticker === undefined || this.monitorOptions.sampleIntervalMs === previous.sampleIntervalMs) return;
    this.stop();
    this.start();
  }

  private readonly onTick = (): void => {
    this.sample(timing.now());
    if (!this.wantsSamples) this.ticker?.stop();
  };
}
