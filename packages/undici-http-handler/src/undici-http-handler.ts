import type { HttpHandler, HttpRequest, HttpResponse } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Provider } from "@smithy/types";
import type { GetStatsOptions, PoolStats } from "@sockeye/pool-monitor";
import http from "node:http";
import https from "node:https";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { Agent, buildConnector, type Dispatcher, Pool } from "undici";
import { buildAbortError, buildQueryString, DeadlineScheduler } from "@sockeye/node-http-handler/internal";
import { nodeAgentTlsOptions } from "./agent-connect-options";
import { ConnectingSockets } from "./connecting-sockets";
import { PACKAGE_PREFIX } from "./constants";
import { ContinueGate, MIN_CONTINUE_WAIT_MS } from "./continue-gate";
import { DESTROYED_BY_HANDLER, handlerDestroyedError } from "./handler-destroyed-error";
import type { OriginPoolState } from "./origin-pool-state";
import { isDispatcher, normalizeMs, type ResolvedUndiciConfig, resolveUndiciConfig } from "./resolve-undici-config";
import { trackedConnector } from "./tracked-connector";
import type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";
import { type AbortSignalLike, Kind, type RequestPlan, UndiciRequest } from "./undici-request";
import { UndiciPoolMonitor } from "./undici-pool-monitor";

const NO_STATS: PoolStats = Object.freeze({
  takenAt: 0,
  origins: [],
  totals: { active: 0, idle: 0, queued: 0, inFlight: 0, saturatedOrigins: 0 },
}) as PoolStats;

/** Keys whose change requires a new handler-owned dispatcher. */
const DISPATCHER_KEYS = new Set([
  "httpAgent",
  "httpsAgent",
  "dispatcher",
  "idleSocketTimeout",
  "connectionTimeout",
  "connectionLifetime",
]);

/**
 * A Smithy `HttpHandler` on undici with `NodeHttpHandler`'s options, error shapes, socket-pool telemetry and
 * saturation detection; switching from `@sockeye/node-http-handler` (or `@smithy/node-http-handler`) is one import.
 * Deadlines run on one lazy unref'd interval per handler (no native timer per request). `Expect: 100-continue`
 * requests go through an internal Sockeye `NodeHttpHandler` (undici's HTTP/1.1 client cannot wait for `100`).
 * @public
 */
export class UndiciHttpHandler implements HttpHandler<UndiciHttpHandlerOptions> {
  /** Identifies the protocol to the SDK. */
  public readonly metadata = { handlerProtocol: "http/1.1" };
  private config: ResolvedUndiciConfig | undefined = undefined;
  private configPromise: Promise<ResolvedUndiciConfig>;
  private options: UndiciHttpHandlerOptions | undefined = undefined;
  private plan: RequestPlan | undefined = undefined;
  private dispatcher: Dispatcher | undefined = undefined;
  private ownsDispatcher = false;
  private continueHandler: NodeHttpHandler | undefined = undefined;
  private monitor: UndiciPoolMonitor | undefined = undefined;
  private lastSampleAt = Number.NEGATIVE_INFINITY;
  private readonly scheduler = new DeadlineScheduler((now) => this.onTick(now));
  /** Sockets of the handler-owned dispatcher still connecting: `destroy()` ends them (undici would not). */
  private readonly connecting = new ConnectingSockets();
  private warnedPerRequestMode = false;
  private warnedIgnoredAgentOptions = false;
  /** Incremented by `destroy()`: a `handle()` awaiting the config provider meanwhile rejects, sending nothing. */
  private destroyGeneration = 0;
  // One-entry origin cache: consecutive requests to one endpoint skip building the origin string and the lookup.
  private lastProtocol: string | undefined = undefined;
  private lastHostname: string | undefined = undefined;
  private lastPort: number | undefined = undefined;
  private lastOrigin = "";
  private lastState: OriginPoolState | undefined = undefined;

  /**
   * Returns `instanceOrOptions` unchanged when it already is a handler (has `handle`), else a new
   * `UndiciHttpHandler`.
   */
  public static create(
    instanceOrOptions?: HttpHandler<any> | UndiciHttpHandlerOptions | Provider<UndiciHttpHandlerOptions | void>
  ): HttpHandler<any> | UndiciHttpHandler {
    if (typeof (instanceOrOptions as HttpHandler<any>)?.handle === "function")
      return instanceOrOptions as HttpHandler<any>;
    return newUndiciHttpHandler(
      instanceOrOptions as UndiciHttpHandlerOptions | Provider<UndiciHttpHandlerOptions | void>
    );
  }

  /**
   * @param options - an options object (validated now: a bad value throws a `TypeError` naming the option and the
   *   value), a provider function (called now; a rejection or bad value rejects every `handle()`), or nothing.
   */
  constructor(options?: UndiciHttpHandlerOptions | Provider<UndiciHttpHandlerOptions | void>) {
    if (typeof options === "function") {
      this.configPromise = options().then((o) => this.resolve(o ?? undefined));
      this.configPromise.catch(() => {});
    } else {
      this.configPromise = Promise.resolve(this.resolve(options));
    }
  }

  /**
   * Sends `request`; resolves once response headers arrived, with the body as a `node:stream` `Readable`.
   * Every failure is a rejection.
   */
  public handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    const config = this.config;
    if (config !== undefined && this.dispatcher !== undefined) return this.dispatch(config, request, options);
    return this.handleAfterSetup(request, options);
  }

  private async handleAfterSetup(
    request: HttpRequest,
    options?: HttpHandlerOptions
  ): Promise<{ response: HttpResponse }> {
    if (this.config === undefined) {
      const generation = this.destroyGeneration;
      const config = await this.configPromise;
      if (generation !== this.destroyGeneration) {
        throw handlerDestroyedError("while handle() was still resolving the handler config");
      }
      this.config = config;
      this.plan = this.buildPlan(config);
    }
    if (this.dispatcher === undefined) this.dispatcher = this.createDispatcher(this.config);
    return this.dispatch(this.config, request, options);
  }

  private dispatch(
    config: ResolvedUndiciConfig,
    request: HttpRequest,
    options: HttpHandlerOptions | undefined
  ): Promise<{ response: HttpResponse }> {
    const abortSignal = options?.abortSignal as AbortSignalLike | undefined;
    if (abortSignal?.aborted) return Promise.reject(buildAbortError(abortSignal));
    try {
      let headers = request.headers;
      if (headers !== undefined) {
        const expect = headers.Expect ?? headers.expect;
        if (expect === "100-continue") return this.sendExpectingContinue(config, request, options);
        if (headers["transfer-encoding"] !== undefined || headers["Transfer-Encoding"] !== undefined) {
          // undici frames a body of unknown length itself and rejects a caller-set transfer-encoding.
          headers = { ...headers };
          delete headers["transfer-encoding"];
          delete headers["Transfer-Encoding"];
        }
      }
      if (request.username != null || request.password != null) {
        const credentials = Buffer.from(`${request.username ?? ""}:${request.password ?? ""}`).toString("base64");
        headers = { ...headers, authorization: `Basic ${credentials}` };
      }
      let path = request.path;
      if (request.query) {
        const qs = buildQueryString(request.query);
        if (qs) path += `?${qs}`;
      }
      if (request.fragment) path += `#${request.fragment}`;
      const plan = this.plan as RequestPlan;
      const origin = this.originOf(request);
      const requestTimeout = options?.requestTimeout ?? config.requestTimeout;
      const state = new UndiciRequest(plan, this.lastState, abortSignal, requestTimeout);
      const dispatchOptions: Dispatcher.DispatchOptions = {
        origin,
        path,
        method: request.method as Dispatcher.HttpMethod,
        headers,
        body: (request.body ?? null) as Dispatcher.DispatchOptions["body"],
        headersTimeout: plan.socketTimeout,
        bodyTimeout: plan.socketTimeout,
      };
      const dispatcher = this.dispatcher as Dispatcher;
      return new Promise((resolve, reject) => state.start(resolve, reject, dispatcher, dispatchOptions));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `scheme://host:port`, cached for consecutive requests to one endpoint; also selects the telemetry state. */
  private originOf(request: HttpRequest): string {
    const protocol = request.protocol;
    const hostname = request.hostname;
    const port = request.port;
    if (protocol === this.lastProtocol && hostname === this.lastHostname && port === this.lastPort)
      return this.lastOrigin;
    const https = protocol === "https:";
    const origin = `${https ? "https:" : "http:"}//${hostname}:${port ?? (https ? 443 : 80)}`;
    this.lastProtocol = protocol;
    this.lastHostname = hostname;
    this.lastPort = port;
    this.lastOrigin = origin;
    this.lastState = this.monitor?.origin(origin);
    if (this.lastState !== undefined && !this.ownsDispatcher) this.describeExternal(this.lastState, origin);
    return origin;
  }

  /** A caller's dispatcher: read its `stats` when it has them (Agent: keyed by origin; Pool/Client: its own). */
  private describeExternal(o: OriginPoolState, origin: string): void {
    const d = this.dispatcher as (Dispatcher & { stats?: unknown }) | undefined;
    if (d === undefined || o.stats !== undefined) return;
    const short = new URL(origin).origin;
    o.stats = () => {
      const stats = d.stats as Record<string, unknown> | undefined;
      if (stats === undefined || stats === null) return undefined;
      if (typeof (stats as { connected?: unknown }).connected === "number") return stats as any;
      return (stats[origin] ?? stats[short]) as any;
    };
  }

  /**
   * `Expect: 100-continue`: through an internal `NodeHttpHandler` on one-off `node:http(s)` agents that carry the
   * handler's TLS / socket options; the body waits in a `ContinueGate` for `100 Continue` (upstream's race).
   */
  private sendExpectingContinue(
    config: ResolvedUndiciConfig,
    request: HttpRequest,
    options: HttpHandlerOptions | undefined
  ): Promise<{ response: HttpResponse }> {
    const requestTimeout = options?.requestTimeout ?? config.requestTimeout;
    const gate = new ContinueGate(
      request.body,
      this.scheduler,
      Math.max(MIN_CONTINUE_WAIT_MS, requestTimeout ?? MIN_CONTINUE_WAIT_MS)
    );
    const gated = Object.assign(Object.create(Object.getPrototypeOf(request)), request, { body: gate }) as HttpRequest;
    return this.continueVia(config).handle(gated, options);
  }

  private continueVia(config: ResolvedUndiciConfig): NodeHttpHandler {
    if (this.continueHandler === undefined) {
      const connect = config.dispatcherOptions?.connect;
      // Caller-visible agents are never used as such (their options are): one-off connections, as NodeHttpHandler's
      // own 100-continue agents, with the TLS / socket options of the undici path.
      const oneOff = { keepAlive: false, maxSockets: Number.POSITIVE_INFINITY };
      this.continueHandler = new NodeHttpHandler({
        connectionTimeout: config.connectionTimeout,
        requestTimeout: config.requestTimeout,
        throwOnRequestTimeout: config.throwOnRequestTimeout,
        socketTimeout: config.socketTimeout,
        socketAcquisitionTimeout: config.socketAcquisitionTimeout,
        httpAgent: new http.Agent({ ...nodeAgentTlsOptions(config.httpConnect, connect), ...oneOff }),
        httpsAgent: new https.Agent({ ...nodeAgentTlsOptions(config.httpsConnect, connect), ...oneOff }),
        logger: config.logger,
        socketMonitor: "off",
        telemetry: false,
      });
      if (config.defaultSocketTimeout !== undefined) {
        this.continueHandler.updateHttpClientConfig(
          Symbol.for("@smithy/defaultSocketTimeout"),
          config.defaultSocketTimeout
        );
      }
    }
    return this.continueHandler;
  }

  private resolve(options: UndiciHttpHandlerOptions | undefined): ResolvedUndiciConfig {
    const config = resolveUndiciConfig(options);
    this.options = options;
    if (this.monitor === undefined && config.telemetry) {
      this.monitor = new UndiciPoolMonitor({
        ...options?.saturation,
        onSaturation: options?.onSaturation,
        onRecovery: options?.onRecovery,
        messagePrefix: `${PACKAGE_PREFIX}:WARN - `,
        warn: (message) => (this.config?.logger ?? console)?.warn?.(message),
      });
    }
    const ignored = [...config.httpConnect.ignored, ...config.httpsConnect.ignored];
    if (ignored.length > 0 && !this.warnedIgnoredAgentOptions) {
      this.warnedIgnoredAgentOptions = true;
      try {
        (config.logger ?? console)?.warn?.(
          `${PACKAGE_PREFIX}:WARN - agent options without an undici equivalent are ignored: ${ignored.join("; ")}.`
        );
      } catch {
        // ignore
      }
    }
    if (options?.socketMonitor === "per-request" && !this.warnedPerRequestMode) {
      this.warnedPerRequestMode = true;
      try {
        (config.logger ?? console)?.warn?.(
          `${PACKAGE_PREFIX}:WARN - socketMonitor "per-request" has no undici equivalent; using "interval".`
        );
      } catch {
        // ignore
      }
    }
    return config;
  }

  private buildPlan(config: ResolvedUndiciConfig): RequestPlan {
    const connection = config.connectionTimeout ?? 0;
    const acquisition = config.socketAcquisitionTimeout ?? 0;
    let firstMs = 0;
    let firstKind = Kind.Connection;
    if (connection > 0 && (acquisition === 0 || connection <= acquisition)) firstMs = connection;
    else if (acquisition > 0) {
      firstMs = acquisition;
      firstKind = Kind.Acquisition;
    }
    const explicit = config.socketTimeout;
    const serviceDefault =
      explicit === undefined && typeof config.defaultSocketTimeout === "number" && config.defaultSocketTimeout > 0
        ? config.defaultSocketTimeout
        : undefined;
    const socketTimeout = serviceDefault ?? explicit ?? 0;
    return {
      firstMs,
      firstKind,
      connectionTimeout: config.connectionTimeout,
      socketAcquisitionTimeout: config.socketAcquisitionTimeout,
      requestTimeout: config.requestTimeout,
      throwOnRequestTimeout: config.throwOnRequestTimeout === true,
      socketTimeout: Number.isFinite(socketTimeout) ? socketTimeout : 0,
      socketTimeoutIsServiceDefault: serviceDefault !== undefined,
      logger: config.logger,
      scheduler: this.scheduler,
      monitor: this.monitor,
      sampling: this.monitor !== undefined && config.socketMonitor === "interval",
    };
  }

  private createDispatcher(config: ResolvedUndiciConfig): Dispatcher {
    this.lastProtocol = undefined;
    if (config.dispatcher !== undefined) {
      this.ownsDispatcher = false;
      return config.dispatcher;
    }
    this.ownsDispatcher = true;
    const idle = config.idleSocketTimeout > 0 ? config.idleSocketTimeout : 600_000;
    const user = (config.dispatcherOptions ?? {}) as Agent.Options & Record<string, unknown>;
    const monitor = this.monitor;
    const lifetime = config.connectionLifetime;
    const connecting = this.connecting;
    const factory = (origin: string | URL, opts: object): Dispatcher => {
      const key = String(origin);
      const https = key.startsWith("https:");
      const o = opts as Pool.Options & Record<string, unknown>;
      const maxSockets =
        o.connections !== undefined ? (o.connections ?? null) : https ? config.httpsMaxSockets : config.httpMaxSockets;
      const agent = https ? config.httpsConnect : config.httpConnect;
      const connectOptions = typeof o.connect === "object" && o.connect !== null ? o.connect : {};
      const base = connecting.wrap(
        typeof o.connect === "function"
          ? (o.connect as buildConnector.connector)
          : buildConnector({
              ...agent.connect,
              ...(connectOptions as object),
              timeout: config.connectionTimeout ?? 0,
            } as buildConnector.BuildOptions)
      );
      const state: OriginPoolState | undefined = monitor?.origin(key);
      const pool = new Pool(origin, {
        ...(agent.localAddress !== undefined ? { localAddress: agent.localAddress } : {}),
        // keepAlive: false on the agent: a new connection per request, as with node:http.
        ...(agent.keepAlive ? {} : { pipelining: 0 }),
        ...o,
        connections: maxSockets,
        connect: state === undefined || monitor === undefined ? base : trackedConnector(base, monitor, state, lifetime),
        ...(lifetime !== undefined ? { clientTtl: lifetime } : {}),
      });
      // Registered by exact origin: `_OTHER` sums the pools of its origins; a replacement pool replaces its entry.
      if (state !== undefined) state.registerPool(key, pool, maxSockets);
      return pool;
    };
    return new Agent({
      keepAliveTimeout: idle,
      keepAliveMaxTimeout: Math.max(idle, 600_000),
      ...user,
      factory: (user.factory as typeof factory | undefined) ?? factory,
    });
  }

  private onTick(now: number): boolean {
    const monitor = this.monitor;
    if (monitor === undefined || this.plan?.sampling !== true) return false;
    const period = this.config?.sampleIntervalMs ?? 1000;
    if (now - this.lastSampleAt >= period) {
      this.lastSampleAt = now;
      monitor.sample(now);
    }
    return monitor.busy;
  }

  /**
   * A JSON-serialisable snapshot per origin in `@sockeye/pool-monitor`'s `PoolStats` shape, fed from undici's own
   * pool stats and connection events. Empty before the first request and with `telemetry: false`.
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them.
   */
  public getPoolStats(options?: GetStatsOptions): PoolStats {
    return this.monitor?.getStats(options) ?? { ...NO_STATS, takenAt: performance.now() };
  }

  /**
   * The handler's monitor (`getStats()`, `subscribe()`): pass it to `registerPoolMetrics()` from
   * `@sockeye/opentelemetry`. `undefined` with `telemetry: false`. It outlives `destroy()`.
   */
  public get poolMonitor(): UndiciPoolMonitor | undefined {
    return this.monitor;
  }

  /**
   * Destroys the dispatcher (a caller's too, as upstream) and the 100-continue handler's agents, and clears the
   * shared interval. Every queued or in-flight request rejects (a response body still streaming fails) with a
   * `HandlerDestroyedError` (`code: "ERR_HANDLER_DESTROYED"`, as `NodeHttpHandler`), never undici's
   * `ClientDestroyedError`; a `handle()` still awaiting an options provider rejects the same way without sending.
   * A later `handle()` creates a new handler-owned dispatcher.
   */
  public destroy(): void {
    this.destroyGeneration++;
    this.scheduler.stop();
    const dispatcher = this.dispatcher;
    this.dispatcher = undefined;
    this.lastProtocol = undefined;
    // undici errors every queued and running request with the error given here; each maps it to its own
    // HandlerDestroyedError (see handler-destroyed-error.ts).
    if (dispatcher !== undefined) void dispatcher.destroy(DESTROYED_BY_HANDLER).catch(() => {});
    else if (this.config?.dispatcher !== undefined)
      void this.config.dispatcher.destroy(DESTROYED_BY_HANDLER).catch(() => {});
    this.connecting.destroyAll(DESTROYED_BY_HANDLER);
    if (this.config?.dispatcher !== undefined) this.config = { ...this.config, dispatcher: undefined };
    this.continueHandler?.destroy();
    this.continueHandler = undefined;
  }

  /**
   * Updates one config key; the next `handle()` uses it. `Symbol.for("logger")` sets the logger unless the handler
   * has its own; `Symbol.for("@smithy/defaultSocketTimeout")` sets the service default inactivity timeout; a
   * millisecond option is validated now (a bad value throws naming it); `dispatcher`, `httpAgent`, `httpsAgent`,
   * `idleSocketTimeout`, `connectionTimeout` and `connectionLifetime` close the handler's dispatcher gracefully and
   * build a new one.
   */
  public updateHttpClientConfig(key: keyof UndiciHttpHandlerOptions | symbol, value: unknown): void {
    if (typeof key === "string" && key.endsWith("Timeout")) value = normalizeMs(key, value);
    if (
      key === "dispatcher" &&
      value !== undefined &&
      value !== null &&
      !isDispatcher(value) &&
      typeof value !== "object"
    ) {
      throw new TypeError(
        `${PACKAGE_PREFIX} - invalid option dispatcher: ${String(value)}; expected an undici Dispatcher or Agent options object.`
      );
    }
    const rebuild = typeof key === "string" && DISPATCHER_KEYS.has(key);
    this.configPromise = this.configPromise.then((config) => {
      let next: ResolvedUndiciConfig;
      if (key === Symbol.for("logger"))
        next = { ...config, logger: config.logger ?? (value as ResolvedUndiciConfig["logger"]) };
      else if (key === Symbol.for("@smithy/defaultSocketTimeout"))
        next = { ...config, defaultSocketTimeout: value as number };
      else if (typeof key === "string") {
        const merged = { ...(this.options ?? {}), [key]: value } as UndiciHttpHandlerOptions;
        next = {
          ...resolveUndiciConfig(merged),
          logger: merged.logger ?? config.logger,
          defaultSocketTimeout: config.defaultSocketTimeout,
        };
        this.options = merged;
      } else next = { ...config, [key as unknown as string]: value };
      return next;
    });
    this.configPromise.catch(() => {});
    this.config = undefined;
    this.continueHandler?.destroy();
    this.continueHandler = undefined;
    if (rebuild) {
      const old = this.dispatcher;
      this.dispatcher = undefined;
      if (old !== undefined && this.ownsDispatcher) void old.close().catch(() => {});
    }
  }

  /** The resolved config, or `{}` before the first `handle()` and after an update until the next one (upstream). */
  public httpHandlerConfigs(): UndiciHttpHandlerOptions {
    return (this.config ?? {}) as UndiciHttpHandlerOptions;
  }
}

/** `new UndiciHttpHandler()` outside the class body, so the build names the class `UndiciHttpHandler`, not `_UndiciHttpHandler` (see tsup.config.ts). */
function newUndiciHttpHandler(
  options?: UndiciHttpHandlerOptions | Provider<UndiciHttpHandlerOptions | void>
): UndiciHttpHandler {
  return new UndiciHttpHandler(options);
}
