import type { HttpHandler, HttpRequest, HttpResponse } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Provider } from "@smithy/types";
import type { PoolMonitorOptions, PoolStats } from "@sockeye/pool-monitor";
import {
  DeadlinePlan,
  buildAbortError,
  checkHandlerUpdate,
  configEntry,
  emptyPoolStats,
  handlerMonitorOptions,
  validateRequest,
} from "@sockeye/pool-monitor/internal";
import { MIN_CONTINUE_WAIT_MS, PACKAGE_PREFIX } from "./constants";
import { Http2PoolMonitor } from "./http2-pool-monitor";
import { Http2SessionPool } from "./http2-session-pool";
import { type AbortSignalLike, Http2StreamRequest } from "./http2-stream-request";
import type { NodeHttp2HandlerOptions } from "./node-http2-handler-options";
import { HTTP2_OPTIONS, type ResolvedHttp2Config, resolveHttp2Config } from "./resolve-http2-config";

/** The SDK's per-call flag that asks for an isolated session (event streams). */
type EventStreamSignal = { isEventStream?: boolean };

/**
 * A drop-in replacement for `NodeHttp2Handler` from `@smithy/node-http-handler` 4.14.2 (HTTP/2): same constructor
 * forms, `create`, `handle` (with `abortSignal`, `requestTimeout`, `isEventStream`), `destroy`,
 * `updateHttpClientConfig`, `httpHandlerConfigs`, `metadata` and error shapes and messages. Sockeye adds a session
 * establishment timeout (`connectionTimeout`), a bound on pooled sessions per origin with a queue of waiting streams
 * (`maxSessionsPerOrigin`) and one on isolated sessions (`maxIsolatedSessionsPerOrigin`, event streams excepted), the
 * peer's `maxConcurrentStreams` honoured, session-pool telemetry (`getPoolStats()`,
 * `poolMonitor`) and saturation detection; every deadline runs on one shared scheduler per handler (one native
 * timer armed for the earliest expiry) instead of a native timer per stream and per session.
 * @public
 */
export class NodeHttp2Handler implements HttpHandler<NodeHttp2HandlerOptions> {
  /** Identifies the protocol to the SDK. */
  public readonly metadata = { handlerProtocol: "h2" };
  private config?: ResolvedHttp2Config;
  private configProvider: Promise<ResolvedHttp2Config>;
  private readonly pool = new Http2SessionPool();
  /** The deadline plan of the last request (see `planFor`). */
  private plan: DeadlinePlan<"http2"> | undefined = undefined;
  private planIdleMs: number | undefined = undefined;
  private monitor: Http2PoolMonitor | undefined = undefined;

  /**
   * Returns `instanceOrOptions` unchanged when it already has a `handle` function (any handler class), otherwise a
   * new `NodeHttp2Handler` built from it.
   */
  public static create(
    instanceOrOptions?: HttpHandler<any> | NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>
  ): NodeHttp2Handler | HttpHandler<any> {
    if (typeof (instanceOrOptions as HttpHandler<any>)?.handle === "function") {
      return instanceOrOptions as HttpHandler<any>;
    }
    return newNodeHttp2Handler(instanceOrOptions as NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>);
  }

  /**
   * @param options - an options object (validated now: a bad value throws a `TypeError` naming the option and the
   *   value), a provider function (called now; its rejection or a bad value rejects every `handle()`), or nothing.
   */
  constructor(options?: NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>) {
    if (typeof options === "function") {
      this.configProvider = options().then((resolved) => resolveHttp2Config(resolved));
      // Surfaced by handle(); an unused handler must not raise an unhandled rejection.
      this.configProvider.catch(() => {});
      // The telemetry source exists from construction here too (metrics can be registered before the first
      // request); it is dropped at the first handle() if the provider's options say `telemetry: false`.
      this.monitor = this.pool.monitor = this.newMonitor(undefined, true);
    } else {
      const resolved = resolveHttp2Config(options);
      this.configProvider = Promise.resolve(resolved);
      // The telemetry source exists from construction, so metrics can be registered before the first request.
      if (resolved.telemetry)
        this.monitor = this.pool.monitor = this.newMonitor(resolved, resolved.socketMonitor === "interval");
    }
  }

  /** Destroys every session of the handler (streams still open fail) and stops its shared timer. */
  public destroy(): void {
    this.pool.destroy();
  }

  /**
   * Sends `request` on an HTTP/2 stream and resolves once response headers arrived; the body is the stream.
   * `isEventStream: true` (set by the SDK for event streams) puts the stream on an isolated session that is never
   * queued; other isolated requests (`disableConcurrentStreams`) wait beyond `maxIsolatedSessionsPerOrigin`.
   */
  public handle(
    request: HttpRequest,
    options?: HttpHandlerOptions & EventStreamSignal
  ): Promise<{ response: HttpResponse }> {
    const config = this.config;
    if (config === undefined) return this.handleAfterSetup(request, options);
    try {
      return this.dispatch(config, request, options);
    } catch (error) {
      // Every failure of handle() is a rejection (e.g. a null request), never a synchronous throw.
      return Promise.reject(error);
    }
  }

  private async handleAfterSetup(
    request: HttpRequest,
    options?: HttpHandlerOptions & EventStreamSignal
  ): Promise<{ response: HttpResponse }> {
    if (this.config === undefined) {
      const config = await this.configProvider;
      this.apply(config);
    }
    return this.dispatch(this.config as ResolvedHttp2Config, request, options);
  }

  private apply(config: ResolvedHttp2Config): void {
    this.config = config;
    this.pool.poolConfig = config;
    if (!config.telemetry) {
      // Only before any origin existed (a provider's first resolution): origins keep the counters they were built with.
      if (this.pool.originsCreated === 0) this.monitor = this.pool.monitor = undefined;
    } else if (this.monitor === undefined) {
      this.monitor = this.pool.monitor = this.newMonitor(config, config.socketMonitor === "interval");
    } else {
      // A provider's options: the monitor built at construction takes them now.
      this.monitor.configure(this.monitorOptions(config));
    }
    if (this.monitor !== undefined) this.monitor.detect = config.socketMonitor === "interval";
  }

  private newMonitor(config: ResolvedHttp2Config | undefined, detect: boolean): Http2PoolMonitor {
    const monitor = new Http2PoolMonitor(() => this.pool.poolConfig, detect, this.monitorOptions(config));
    // Sampling stops while nothing happens (`wantsSamples`): the next event restarts the tick.
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
    let origin = this.pool.origins.get(key);
    if (origin === undefined) {
      const name = `${protocol}//${hostname}:${port ?? (protocol === "http:" ? 80 : 443)}`;
      origin = this.pool.origin(key, name);
    }
    const perCall = options?.requestTimeout;
    const configured = perCall ?? config.options.requestTimeout;
    let idleMs: number | undefined;
    if (configured !== undefined && configured !== null) {
      const n = Number(configured);
      idleMs = n > 0 && Number.isFinite(n) ? n : undefined;
    } else if (config.options.sessionTimeout === undefined) {
      idleMs = config.defaultSocketTimeout;
    }
    const eventStream = options?.isEventStream === true;
    const isolated = config.disableConcurrentStreams || eventStream;
    const pool = this.pool;
    const target = origin;
    const req = new Http2StreamRequest(pool, target, request, isolated, eventStream, abortSignal, this.planFor(idleMs));
    return new Promise((resolve, reject) => req.start(resolve, reject));
  }

  /** The deadlines of a request whose inactivity limit is `idleMs` (kept for the next request with the same one). */
  private planFor(idleMs: number | undefined): DeadlinePlan<"http2"> {
    const plan = this.plan;
    if (plan !== undefined && this.planIdleMs === idleMs) return plan;
    this.planIdleMs = idleMs;
    const continueMs = Math.max(MIN_CONTINUE_WAIT_MS, idleMs ?? MIN_CONTINUE_WAIT_MS);
    return (this.plan = new DeadlinePlan<"http2">(this.pool.sharedScheduler, {
      stream_idle: idleMs,
      continue: continueMs,
    }));
  }

  /**
   * Updates one config key; the next `handle()` re-resolves the config, as upstream. An option is checked now by the
   * rule the constructor applies (a bad value throws its one-line error and changes nothing); `"saturation"`,
   * `"onSaturation"`, `"onRecovery"` are applied to the monitor at once (a `saturation` block replaces the old one:
   * omitted fields return to their defaults). `Symbol.for("@smithy/defaultSocketTimeout")` sets the service default
   * idle timeout unless one is set already.
   */
  public updateHttpClientConfig(key: keyof NodeHttp2HandlerOptions | symbol, value: unknown): void {
    value = checkHandlerUpdate(HTTP2_OPTIONS, key, value, PACKAGE_PREFIX, this.monitor).value;
    this.config = undefined;
    this.configProvider = this.configProvider.then((config) => {
      const [name, next] = configEntry(config.options, key, value);
      return resolveHttp2Config({ ...config.options, [name]: next } as NodeHttp2HandlerOptions);
    });
    this.configProvider.catch(() => {});
  }

  /** The current config (upstream's shape: the options given, plus `defaultSocketTimeout`); `{}` before resolution. */
  public httpHandlerConfigs(): NodeHttp2HandlerOptions {
    return this.config?.options ?? {};
  }

  /**
   * A plain, JSON-serialisable snapshot of the session pool, one entry per origin (`scheme://host:port` only), in
   * `@sockeye/pool-monitor`'s `PoolStats` shape: sessions count as connections, streams as requests, and each origin
   * carries an `http2` block (sessions open, active streams per session, the peer's `maxConcurrentStreams`, streams
   * waiting, closes by reason and GOAWAY code). Empty before the first request or with `telemetry: false`.
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them.
   */
  public getPoolStats(options?: { resetSummaries?: boolean }): PoolStats {
    return this.monitor?.getStats(options) ?? emptyPoolStats(performance.now());
  }

  /**
   * The telemetry source (`getStats()`, `subscribe()`), e.g. for `registerPoolMetrics(handler.poolMonitor)` from
   * `@sockeye/opentelemetry`. Exists from construction; `undefined` with `telemetry: false` (for a provider whose
   * options say so: from the first `handle()` on, once they are known). It outlives `destroy()`.
   */
  public get poolMonitor(): Http2PoolMonitor | undefined {
    return this.monitor;
  }
}

/** `new NodeHttp2Handler()` outside the class body, so the build names the class `NodeHttp2Handler`, not `_NodeHttp2Handler` (see tsup.config.ts). */
function newNodeHttp2Handler(
  options?: NodeHttp2HandlerOptions | Provider<NodeHttp2HandlerOptions | void>
): NodeHttp2Handler {
  return new NodeHttp2Handler(options);
}
