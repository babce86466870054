import type { HttpHandler, HttpRequest, HttpResponse } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Logger, Provider } from "@smithy/types";
import { type GetStatsOptions, Http1PoolMonitor, type PoolMonitorOptions, type PoolStats } from "@sockeye/pool-monitor";
import {
  buildAbortError,
  buildQueryString,
  checkHandlerUpdate,
  configEntry,
  handlerDestroyedError,
  handlerMonitorOptions,
  resolveDefaultSocketTimeout,
  SHARED_OPTIONS,
  timing,
  validateRequest as importedValidateRequest,
} from "@sockeye/pool-monitor/internal";
import type { Agent, ClientRequest } from "node:http";
import https from "node:https";
import { checkSocketUsage } from "./check-socket-usage";
import { PACKAGE_PREFIX } from "./constants";
import { HandlerRuntime } from "./handler-runtime";
import { InFlightRequest } from "./in-flight-request";
import type { NodeHttpHandlerOptions } from "./node-http-handler-options";
import type { RequestPlan } from "./request-plan";
import { loadedHttp, ownedAgents, type ResolvedHandlerConfig, resolveHandlerConfig } from "./resolve-handler-config";

type RequestFunc = (options: object) => ClientRequest;

// Bound once: in this package's CommonJS build every use of another package's export is a getter call.
const validateRequest = importedValidateRequest;

/** Where a request was when `destroy()` ran during `handle()`'s first-time setup (before any Node request). */
const SETUP_WHERE = "while handle() was still resolving the handler config or creating its http agent";

/**
 * A drop-in replacement for `NodeHttpHandler` from `@smithy/node-http-handler` (HTTP/1.1): same constructor forms,
 * `create`, `handle`, `destroy`, `updateHttpClientConfig`, `httpHandlerConfigs`, `metadata`, error shapes and
 * messages (prefixed `@sockeye/node-http-handler`). Per-request deadlines and the socket-usage check run on one
 * native timer per handler, armed for the earliest deadline, instead of native timers per request.
 * @public
 */
export class NodeHttpHandler implements HttpHandler<NodeHttpHandlerOptions> {
  /** Identifies the protocol to the SDK. */
  public readonly metadata = { handlerProtocol: "http/1.1" };
  private config?: ResolvedHandlerConfig;
  private configProvider: Promise<ResolvedHandlerConfig>;
  private lastConfig?: ResolvedHandlerConfig;
  private agentIsExternal = false;
  private readonly runtime = new HandlerRuntime();
  /**
   * Incremented by every `destroy()`. A `handle()` still in its first-time setup (config provider, lazily created
   * http agent) records it on entry and compares it after each await: if `destroy()` ran meanwhile, it rejects with
   * a `HandlerDestroyedError` and opens no connection.
   */
  private destroyGeneration = 0;
  /** The handler's monitor, also while `telemetry` is off (then the runtime has none). */
  private monitorInstance: Http1PoolMonitor | undefined = undefined;
  /**
   * Provider form only, until the provider resolves: the monitor updates made meanwhile through
   * `updateHttpClientConfig()` (`saturation`, `onSaturation`, `onRecovery`, `telemetry`), re-applied over the
   * provider's options so the later call wins, as upstream's config updates do. `undefined` once resolved.
   */
  private pendingMonitorUpdates: Record<string, unknown> | undefined = undefined;
  /** Shared plans of the current config (see `cachedPlan`). */
  private readonly plans: {
    planConfig: ResolvedHandlerConfig | undefined;
    externalAgent: boolean;
    http: RequestPlan | undefined;
    https: RequestPlan | undefined;
  } = { planConfig: undefined, externalAgent: false, http: undefined, https: undefined };
  private readonly lastOrigin: {
    isSSL: boolean;
    hostname: string | undefined;
    port: number | undefined;
    origin: string;
  } = { isSSL: false, hostname: undefined, port: undefined, origin: "" };

  /**
   * Returns `instanceOrOptions` unchanged when it already has a `handle` function (any handler class), otherwise a
   * new `NodeHttpHandler` built from it.
   */
  public static create(
    instanceOrOptions?: HttpHandler<any> | NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>
  ): HttpHandler<any> | NodeHttpHandler {
    if (typeof (instanceOrOptions as HttpHandler<any>)?.handle === "function") {
      return instanceOrOptions as HttpHandler<any>;
    }
    return newNodeHttpHandler(instanceOrOptions as NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>);
  }

  /**
   * Upstream's static socket check, same signature and contract: warns (at most once per 15 s, per timestamp) when
   * some agent key has `>= maxSockets` sockets in use and `>= 2 × maxSockets` queued requests; returns the new
   * warning timestamp (wall-clock ms), or the one given.
   * @internal
   */
  public static checkSocketUsage(agent: Agent, socketWarningTimestamp: number, logger: Logger = console): number {
    return checkSocketUsage(agent, socketWarningTimestamp, logger);
  }

  /**
   * @param options - an options object (validated now: a bad value throws a `TypeError` naming the option), a
   *   provider function (called now; its rejection or a bad value rejects every `handle()`), or nothing.
   */
  constructor(options?: NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>) {
    if (typeof options === "function") {
      // The monitor exists from construction (with default options until the provider resolves), so `poolMonitor`
      // and runtime monitor updates work before the first handle().
      this.pendingMonitorUpdates = {};
      this.monitorInstance = this.newMonitor(undefined);
      this.runtime.hostMonitor = this.monitorInstance;
      this.configProvider = options().then((resolved) => this.resolveConfig(resolved));
      // The rejection is surfaced by handle(); do not let an unused handler raise an unhandled rejection.
      this.configProvider.catch(() => {});
    } else {
      const resolved = this.resolveConfig(options);
      this.configProvider = Promise.resolve(resolved);
    }
  }

  /**
   * Ends every request in flight or queued (each still pending rejects with a `HandlerDestroyedError`, code
   * `ERR_HANDLER_DESTROYED`; a queued one leaves the agent queue, so no connection is opened for it; a response body
   * still streaming fails as with upstream; a `handle()` still resolving the config or creating the http agent
   * rejects the same way as soon as that step completes, without opening a connection — upstream sends it), then
   * destroys both agents (caller-owned ones too, as upstream) and clears the handler's shared timer. Afterwards
   * the handler holds no socket, timer or listener. As upstream, a `handle()` called after `destroy()` still works
   * (with new connections).
   */
  public destroy(): void {
    this.destroyGeneration++;
    this.runtime.destroy();
    const config = this.config ?? this.lastConfig;
    config?.httpAgent?.destroy();
    config?.httpsAgent?.destroy();
  }

  /**
   * Sends `request` and resolves with the response once its headers arrived; the body is the `IncomingMessage`.
   */
  public handle(request: HttpRequest, options?: HttpHandlerOptions | null): Promise<{ response: HttpResponse }> {
    const config = this.config;
    // Fast path: config resolved and the agent exists. Not `async`: returning the request's own promise saves the
    // promise adoption (two microtask hops) an async function pays when it returns a promise. Every failure,
    // synchronous or not, is a rejection.
    if (config !== undefined && (request?.protocol === "https:" || config.httpAgent !== undefined)) {
      return this.dispatch(config, request, options);
    }
    return this.handleAfterSetup(request, options);
  }

  /** First request (or first after `updateHttpClientConfig()`), or first http: request: resolve config and agent. */
  private async handleAfterSetup(
    request: HttpRequest,
    options?: HttpHandlerOptions | null
  ): Promise<{ response: HttpResponse }> {
    const generation = this.destroyGeneration;
    if (!this.config) {
      this.config = await this.configProvider;
      this.lastConfig = this.config;
      this.applyRuntimeSettings(this.config);
      if (generation !== this.destroyGeneration) throw handlerDestroyedError(PACKAGE_PREFIX, SETUP_WHERE);
    }
    const config = this.config;
    // Only a request that will go out as plain http needs the http agent (an invalid protocol is refused by dispatch).
    if (!config.httpAgent && typeof request?.protocol === "string" && request.protocol.toLowerCase() === "http:") {
      config.httpAgent = await config.httpAgentProvider();
      if (generation !== this.destroyGeneration) throw handlerDestroyedError(PACKAGE_PREFIX, SETUP_WHERE);
    }
    return this.dispatch(config, request, options);
  }

  private dispatch(
    config: ResolvedHandlerConfig,
    request: HttpRequest,
    options: HttpHandlerOptions | null | undefined
  ): Promise<{ response: HttpResponse }> {
    try {
      const abortSignal = options?.abortSignal;
      if (abortSignal?.aborted) {
        return Promise.reject(buildAbortError(abortSignal));
      }
      const isSSL = validateRequest(request, PACKAGE_PREFIX) === "https:";
      return this.startRequest(config, request, isSSL, abortSignal, options?.requestTimeout);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private startRequest(
    config: ResolvedHandlerConfig,
    request: HttpRequest,
    isSSL: boolean,
    abortSignal: HttpHandlerOptions["abortSignal"],
    requestTimeout: number | undefined
  ): Promise<{ response: HttpResponse }> {
    const headers = request.headers;
    const expectContinue = headers ? (headers.Expect ?? headers.expect) === "100-continue" : false;
    const plan =
      !expectContinue && (requestTimeout === undefined || requestTimeout === config.requestTimeout)
        ? this.cachedPlan(config, isSSL)
        : this.buildPlan(config, isSSL, requestTimeout ?? config.requestTimeout, expectContinue);
    const agent = plan.agent;
    const origin = this.runtime.hostMonitor === undefined ? "" : this.originOf(isSSL, request.hostname, request.port);

    let path = request.path;
    const query = request.query;
    if (query) {
      // No sort, escaping or array when the bag is empty (the common case).
      for (const _ in query) {
        const queryString = buildQueryString(query);
        if (queryString) path += `?${queryString}`;
        break;
      }
    }
    if (request.fragment) path += `#${request.fragment}`;
    let hostname = request.hostname ?? "";
    if (hostname[0] === "[" && hostname.endsWith("]")) hostname = hostname.slice(1, -1);
    else hostname = request.hostname;
    const nodeOptions: {
      headers: HttpRequest["headers"];
      host: string;
      method: string;
      path: string;
      port: number | undefined;
      agent: Agent;
      auth?: string;
    } = {
      headers: request.headers,
      host: hostname,
      method: request.method,
      path,
      port: request.port,
      agent,
    };
    // No `auth` key unless there are credentials: Node's agent copies every own key of these options into a
    // null-prototype (dictionary) object per request, held while the request is queued; one key fewer keeps that
    // dictionary a size class smaller (measured in the bench heap pass: ~370 B less heap per queued request).
    if (request.username != null || request.password != null) {
      nodeOptions.auth = `${request.username ?? ""}:${request.password ?? ""}`;
    }
    // Looked up at call time so interception (nock, APM) installed after construction is honoured.
    const requestFunc: RequestFunc = isSSL ? https.request : loadedHttp().request;

    const state = new InFlightRequest(this.runtime, request, plan, origin, abortSignal);
    return new Promise((resolve, reject) => state.start(resolve, reject, requestFunc, nodeOptions));
  }

  /**
   * The plan of a request without per-call overrides: built once per (resolved config, protocol) and shared by
   * every such request, so the hot path allocates no plan. Rebuilt when the config is re-resolved or the agent
   * changes.
   */
  private cachedPlan(config: ResolvedHandlerConfig, isSSL: boolean): RequestPlan {
    const cache = this.plans;
    if (cache.planConfig !== config || cache.externalAgent !== this.agentIsExternal) {
      cache.planConfig = config;
      cache.externalAgent = this.agentIsExternal;
      cache.http = cache.https = undefined;
    }
    let plan = isSSL ? cache.https : cache.http;
    if (plan === undefined || plan.agent !== (isSSL ? config.httpsAgent : config.httpAgent)) {
      plan = this.buildPlan(config, isSSL, config.requestTimeout, false);
      if (isSSL) cache.https = plan;
      else cache.http = plan;
    }
    return plan;
  }

  private buildPlan(
    config: ResolvedHandlerConfig,
    isSSL: boolean,
    requestTimeout: number | undefined,
    expectContinue: boolean
  ): RequestPlan {
    let agent: Agent = isSSL ? config.httpsAgent : (config.httpAgent as Agent);
    const externalAgent = this.agentIsExternal;
    let oneOffAgent = false;
    if (expectContinue && !externalAgent) {
      // PR smithy-typescript#1754: wait for 100-continue on a private agent so pooled sockets are not held.
      // It inherits the pooled agent's own options (TLS: `ca`, `cert`, `rejectUnauthorized`, `servername`…; `lookup`,
      // `family`, `localAddress`) so a custom CA works for large uploads too; upstream's one-off agent drops them.
      agent = new (isSSL ? https.Agent : loadedHttp().Agent)({
        ...(agent as Agent & { options?: object }).options,
        keepAlive: false,
        maxSockets: Infinity,
        maxTotalSockets: Infinity,
      });
      oneOffAgent = true;
    }
    const serviceDefault = config.socketTimeout === undefined ? resolveDefaultSocketTimeout(config) : undefined;
    const socketTimeout = serviceDefault ?? config.socketTimeout;
    return {
      agent,
      isSSL,
      oneOffAgent,
      swept:
        !oneOffAgent &&
        !!(config.idleSocketTimeout || config.connectionLifetime) &&
        (config.lifecycleForExternalAgents || ownedAgents.has(agent)),
      expectContinue,
      connectWaitMs: config.connectionTimeout,
      requestMs: requestTimeout,
      requestTimeoutThrows: config.throwOnRequestTimeout === true,
      socketIdleMs:
        socketTimeout !== undefined && Number.isFinite(socketTimeout) && socketTimeout > 0 ? socketTimeout : undefined,
      socketTimeoutIsServiceDefault: serviceDefault !== undefined,
      acquireMs: config.socketAcquisitionTimeout,
      maxQueued: config.maxQueuedRequests ?? Number.POSITIVE_INFINITY,
      unreadBodyMs: config.unreadBodyTimeout,
      lifetimeMs: config.connectionLifetime,
      logger: config.logger,
      callerAgent: externalAgent,
      // The one-off agent has no socket limit: nothing to wait for.
      agentGate: oneOffAgent ? undefined : this.runtime.gateFor(agent),
      deadlines: undefined,
    };
  }

  /** `scheme://host:port` for telemetry; the last one is memoised (one endpoint per client is the common case). */
  private originOf(isSSL: boolean, hostname: string, port: number | undefined): string {
    const memo = this.lastOrigin;
    if (memo.isSSL === isSSL && memo.hostname === hostname && memo.port === port) return memo.origin;
    memo.isSSL = isSSL;
    memo.hostname = hostname;
    memo.port = port;
    memo.origin = `${isSSL ? "https:" : "http:"}//${hostname}:${port ?? (isSSL ? 443 : 80)}`;
    return memo.origin;
  }

  /**
   * A plain, JSON-serialisable snapshot of the socket pool, one entry per origin (`scheme://host:port`, never a
   * path, query or header): sockets active/idle, queued requests, oldest queued age, request and socket counters,
   * queue-wait and connect-time summaries, and the saturation state. See `@sockeye/pool-monitor`'s `PoolStats`
   * for every field and its unit. Empty before the first request or with `telemetry: false`. Counters are updated
   * by request/socket events, so right after a burst resolves they may trail it by an event-loop turn.
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them (windowed
   *   percentiles).
   */
  public getPoolStats(options?: GetStatsOptions): PoolStats {
    return (
      this.runtime.hostMonitor?.getStats(options) ?? {
        takenAt: timing.now(),
        origins: [],
        totals: { active: 0, idle: 0, queued: 0, inFlight: 0, saturatedOrigins: 0 },
      }
    );
  }

  /**
   * The handler's `Http1PoolMonitor` (from `@sockeye/pool-monitor`), e.g. for `registerPoolMetrics(handler.poolMonitor)`
   * from `@sockeye/opentelemetry` or `poolMonitor.subscribe(listener)`. `undefined` with `telemetry: false`. It
   * outlives `destroy()`, so the final counters stay readable.
   */
  public get poolMonitor(): Http1PoolMonitor | undefined {
    return this.runtime.hostMonitor;
  }

  /**
   * Updates one config key; the next `handle()` re-resolves the config (upstream semantics). Keys:
   * `Symbol.for("logger")` sets the logger unless the handler has its own; `Symbol.for("@smithy/defaultSocketTimeout")`
   * sets the service default idle timeout unless the handler has a valid one. An option is checked now by the rule the
   * constructor applies (a bad value throws its one-line error and changes nothing; an agent is then taken as
   * given, as upstream); `"saturation"`, `"onSaturation"`, `"onRecovery"` are applied to the monitor at once (a new
   * `saturation` object replaces the old one, omitted fields return to their defaults); `"telemetry"` switches
   * tracking on or off for requests started from now on.
   */
  public updateHttpClientConfig(key: keyof NodeHttpHandlerOptions | symbol, value: unknown): void {
    const update = checkHandlerUpdate(SHARED_OPTIONS, key, value, PACKAGE_PREFIX, this.monitorInstance);
    value = update.value;
    if (key === "telemetry") {
      // Applies to requests started from now on; requests already tracked keep reporting to the monitor.
      this.runtime.hostMonitor = value === false ? undefined : this.monitorInstance;
      if (this.runtime.hostMonitor !== undefined && this.runtime.inFlightCount > 0)
        this.runtime.hostScheduler.ensureTicking();
    }
    const pending = this.pendingMonitorUpdates;
    if (pending !== undefined && (update.update === "monitor" || key === "telemetry")) pending[key as string] = value;
    this.config = undefined;
    this.configProvider = this.configProvider.then((config) => {
      const [name, next] = configEntry(config, key, value);
      return { ...config, [name]: next } as ResolvedHandlerConfig;
    });
    this.configProvider.catch(() => {});
  }

  /**
   * The resolved config (agents included), or `{}` before the first `handle()` and after an update until the next
   * `handle()`, as upstream.
   */
  public httpHandlerConfigs(): NodeHttpHandlerOptions {
    return (this.config ?? {}) as NodeHttpHandlerOptions;
  }

  private resolveConfig(options: NodeHttpHandlerOptions | void | undefined): ResolvedHandlerConfig {
    // A provider's options, with the monitor updates made while it was pending over them (the later call wins).
    const pending = this.pendingMonitorUpdates;
    this.pendingMonitorUpdates = undefined;
    const config = resolveHandlerConfig(pending === undefined ? options : { ...options, ...pending }, () => {
      this.agentIsExternal = true;
    });
    // Built even with `telemetry: false` (it holds no timer and tracks nothing until used): the saturation options
    // are validated the same way in both cases, and `updateHttpClientConfig("telemetry", true)` can switch it on.
    if (this.monitorInstance === undefined) this.monitorInstance = this.newMonitor(config);
    else this.monitorInstance.configure(this.monitorOptions(config));
    this.runtime.hostMonitor = config.telemetry ? this.monitorInstance : undefined;
    return config;
  }

  private newMonitor(config: ResolvedHandlerConfig | undefined): Http1PoolMonitor {
    const runtime = this.runtime;
    const monitor = new Http1PoolMonitor(this.monitorOptions(config));
    // Sampling stops while nothing happens (`wantsSamples`): the next event restarts the tick.
    monitor.onResume = () => runtime.hostScheduler.ensureTicking();
    return monitor;
  }

  private monitorOptions(config: ResolvedHandlerConfig | undefined): PoolMonitorOptions {
    return handlerMonitorOptions(config, PACKAGE_PREFIX, () => this.runtime.runtimeSettings?.logger);
  }

  private applyRuntimeSettings(config: ResolvedHandlerConfig): void {
    const window =
      config.socketAcquisitionWarningTimeout ?? (config.requestTimeout ?? 2000) + (config.connectionTimeout ?? 1000);
    this.runtime.runtimeSettings = {
      mode: config.socketMonitor,
      warningWindowMs: window,
      logger: config.logger,
      agents: () => [config.httpAgent, config.httpsAgent],
      lifecycle: {
        idleSocketTimeout: config.idleSocketTimeout,
        connectionLifetime: config.connectionLifetime,
        externalAgents: config.lifecycleForExternalAgents,
      },
    };
  }
}

/** `new NodeHttpHandler()` outside the class body, so the build names the class `NodeHttpHandler`, not `_NodeHttpHandler` (see tsup.config.ts). */
function newNodeHttpHandler(
  options?: NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>
): NodeHttpHandler {
  return new NodeHttpHandler(options);
}
