import type { HttpHandler, HttpRequest, HttpResponse } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Provider } from "@smithy/types";
import type { PoolMonitorOptions, PoolStats } from "@sockeye/pool-monitor";
import {
  type AbortSignalLike,
  DeadlinePlan,
  buildAbortError,
  checkHandlerUpdate,
  emptyPoolStats,
  handlerMonitorOptions,
  validateRequest,
  withUpdate,
} from "@sockeye/pool-monitor/internal";
import { MIN_CONTINUE_WAIT_MS, PACKAGE_PREFIX } from "./constants";
import { Http2PoolMonitor } from "./http2-pool-monitor";
import { Http2SessionPool } from "./http2-session-pool";
import { Http2StreamRequest } from "./http2-stream-request";
import type { NodeHttp2HandlerOptions } from "./node-http2-handler-options";
import { HTTP2_OPTIONS, type ResolvedHttp2Config, resolveHttp2Config } from "./resolve-http2-config";

/** The SDK's per-call flag that asks for an isolated session (event streams). */
type EventStreamSignal = { isEventStream?: boolean };

/**
 * A drop-in replacement for `NodeHttp2Handler` from `@smithy/node-http-handler` (same API, error shapes and
 * messages), plus `connectionTimeout`, bounded session pools with FIFO queues, the peer's `maxConcurrentStreams`,
 * telemetry and saturation detection; every deadline runs on one native timer per handler. @public
 */
export class NodeHttp2Handler implements HttpHandler<NodeHttp2HandlerOptions> {
  /** Identifies the protocol to the SDK. */
  public readonly metadata = { handlerProtocol: "h2" };
  private config?: ResolvedHttp2Config;
  private configProvider: Promise<ResolvedHttp2Config>;
  private readonly pool = new Http2SessionPool();
  /** The deadline plan of the last request, and its inputs (`planFor`). */
  private plan: DeadlinePlan<"http2"> | undefined = undefined;
  private planIdleMs: number | undefined = undefined;
  private planUnreadMs: number | undefined = undefined;

  /** Returns `instanceOrOptions` unchanged when it already has `handle`, else a new `NodeHttp2Handler`. */
  public static create(
    instanceOrOptions?: HttpHandler<any> | NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>
  ): NodeHttp2Handler | HttpHandler<any> {
    if (typeof (instanceOrOptions as HttpHandler<any>)?.handle === "function") {
      return instanceOrOptions as HttpHandler<any>;
    }
    return newNodeHttp2Handler(instanceOrOptions as NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>);
  }

  /** @param options - options (a bad value throws a `TypeError` now), a provider (its failure rejects `handle()`). */
  constructor(options?: NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>) {
    if (typeof options === "function") {
      this.configProvider = options().then((resolved) => resolveHttp2Config(resolved));
      // Surfaced by handle(); an unused handler must not raise an unhandled rejection.
      this.configProvider.catch(() => {});
      // Exists from construction; dropped at the first handle() if the provider says `telemetry: false`.
      this.pool.monitor = this.newMonitor(undefined);
    } else {
      const resolved = resolveHttp2Config(options);
      this.configProvider = Promise.resolve(resolved);
      if (resolved.telemetry) this.pool.monitor = this.newMonitor(resolved);
    }
  }

  /** Destroys every session of the handler (streams still open fail) and stops its shared timer. */
  public destroy(): void {
    this.pool.destroy();
  }

  /** Sends `request` on a stream; resolves at the response headers. `isEventStream`: an isolated, unqueued session. */
  public handle(
    request: HttpRequest,
    options?: HttpHandlerOptions & EventStreamSignal
  ): Promise<{ response: HttpResponse }> {
    const config = this.config;
    if (config === undefined) return this.handleAfterSetup(request, options);
    try {
      return this.dispatch(config, request, options);
    } catch (error) {
      // A rejection, never a synchronous throw.
      return Promise.reject(error);
    }
  }

  private async handleAfterSetup(
    request: HttpRequest,
    options?: HttpHandlerOptions & EventStreamSignal
  ): Promise<{ response: HttpResponse }> {
    if (this.config === undefined) this.apply(await this.configProvider);
    return this.dispatch(this.config as ResolvedHttp2Config, request, options);
  }

  private apply(config: ResolvedHttp2Config): void {
    const pool = this.pool;
    this.config = pool.poolConfig = config;
    if (!config.telemetry) {
      // Only before any origin existed: origins keep the counters they were built with.
      if (pool.originsCreated === 0) pool.monitor = undefined;
    } else if (pool.monitor === undefined) {
      pool.monitor = this.newMonitor(config);
    } else {
      // A provider's options: the monitor built at construction takes them now.
      pool.monitor.configure(this.monitorOptions(config));
    }
    if (pool.monitor !== undefined) pool.monitor.detect = config.socketMonitor === "interval";
  }

  /** A monitor for `config` (`undefined`: a provider's, not resolved yet). */
  private newMonitor(config: ResolvedHttp2Config | undefined): Http2PoolMonitor {
    const detect = config === undefined || config.socketMonitor === "interval";
    const monitor = new Http2PoolMonitor(() => this.pool.poolConfig, detect, this.monitorOptions(config));
    monitor.onResume = () => this.pool.resumeSampling();
    return monitor;
  }

  private monitorOptions(config: ResolvedHttp2Config | undefined): PoolMonitorOptions {
    return handlerMonitorOptions(config, PACKAGE_PREFIX, () => this.config?.logger);
  }

  private dispatch(
    config: ResolvedHttp2Config,
    request: HttpRequest,
    options: (HttpHandlerOptions & EventStreamSignal) | undefined
  ): Promise<{ response: HttpResponse }> {
    const abortSignal = options?.abortSignal as AbortSignalLike | undefined;
    if (abortSignal?.aborted) return Promise.reject(buildAbortError(abortSignal));
    const protocol = validateRequest(request, PACKAGE_PREFIX, true);
    const { hostname, port } = request;
    let auth = "";
    if (request.username != null || request.password != null) {
      // Upstream keys sessions by user info too; escaped here, so a "/" or "@" in it can never change the host.
      auth = `${encodeURIComponent(request.username ?? "")}:${encodeURIComponent(request.password ?? "")}@`;
    }
    const key = `${protocol}//${auth}${hostname}${port ? `:${port}` : ""}`;
    const origin =
      this.pool.origins.get(key) ??
      this.pool.addOrigin(key, `${protocol}//${hostname}:${port ?? (protocol === "http:" ? 80 : 443)}`);
    const configured = options?.requestTimeout ?? config.options.requestTimeout;
    let idleMs: number | undefined;
    if (configured !== undefined && configured !== null) {
      const n = Number(configured);
      idleMs = n > 0 && Number.isFinite(n) ? n : undefined;
    } else if (config.options.sessionTimeout === undefined) {
      idleMs = config.defaultSocketTimeout;
    }
    const eventStream = options?.isEventStream === true;
    const req = new Http2StreamRequest(
      this.pool,
      origin,
      request,
      config.disableConcurrentStreams || eventStream,
      eventStream,
      abortSignal,
      this.planFor(idleMs, config.unreadBodyTimeout)
    );
    return new Promise((resolve, reject) => req.start(resolve, reject));
  }

  /** The deadlines of a request with these limits (the last plan is kept for the next request). */
  private planFor(idleMs: number | undefined, unreadMs: number | undefined): DeadlinePlan<"http2"> {
    const plan = this.plan;
    if (plan !== undefined && this.planIdleMs === idleMs && this.planUnreadMs === unreadMs) return plan;
    this.planIdleMs = idleMs;
    this.planUnreadMs = unreadMs;
    const continueMs = Math.max(MIN_CONTINUE_WAIT_MS, idleMs ?? MIN_CONTINUE_WAIT_MS);
    return (this.plan = new DeadlinePlan<"http2">(this.pool.sharedScheduler, {
      stream_idle: idleMs,
      continue: continueMs,
      unread_body: unreadMs,
    }));
  }

  /**
   * Updates one config key; the next `handle()` re-resolves the config, as upstream. A bad value throws and changes
   * nothing; monitor options apply at once (a `saturation` block replaces the old one).
   * `Symbol.for("@smithy/defaultSocketTimeout")` sets the service default idle timeout unless one is set.
   */
  public updateHttpClientConfig(key: keyof NodeHttp2HandlerOptions | symbol, value: unknown): void {
    value = checkHandlerUpdate(HTTP2_OPTIONS, key, value, PACKAGE_PREFIX, this.pool.monitor).value;
    this.config = undefined;
    this.configProvider = this.configProvider.then((config) =>
      resolveHttp2Config(withUpdate(config.options, key, value))
    );
    this.configProvider.catch(() => {});
  }

  /** The current config (upstream's shape: the options given, plus `defaultSocketTimeout`); `{}` before resolution. */
  public httpHandlerConfigs(): NodeHttp2HandlerOptions {
    return this.config?.options ?? {};
  }

  /**
   * A JSON-serialisable snapshot per origin in `PoolStats` shape: sessions count as connections, streams as
   * requests, plus an `http2` block per origin. Empty before the first request or with `telemetry: false`.
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them.
   */
  public getPoolStats(options?: { resetSummaries?: boolean }): PoolStats {
    return this.pool.monitor?.getStats(options) ?? emptyPoolStats(performance.now());
  }

  /** The telemetry source; `undefined` with `telemetry: false` (a provider's: from the first `handle()`). */
  public get poolMonitor(): Http2PoolMonitor | undefined {
    return this.pool.monitor;
  }
}

/** Outside the class body, so the build names the class `NodeHttp2Handler` (see tsup.config.ts). */
function newNodeHttp2Handler(
  options?: NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>
): NodeHttp2Handler {
  return new NodeHttp2Handler(options);
}
