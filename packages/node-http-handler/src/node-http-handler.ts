import type { HttpHandler, HttpRequest, HttpResponse } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Logger, Provider } from "@smithy/types";
import { type GetStatsOptions, Http1PoolMonitor, type PoolMonitorOptions, type PoolStats } from "@sockeye/pool-monitor";
import {
  buildAbortError,
  buildQueryString,
  checkHandlerUpdate,
  emptyPoolStats,
  handlerDestroyedError,
  handlerMonitorOptions,
  resolveDefaultSocketTimeout,
  SHARED_OPTIONS,
  timing,
  validateRequest as importedValidateRequest,
  withUpdate,
} from "@sockeye/pool-monitor/internal";
import type { Agent, ClientRequest } from "node:http";
import https from "node:https";
import { checkSocketUsage } from "./check-socket-usage";
import { PACKAGE_PREFIX } from "./constants";
import { HandlerRuntime } from "./handler-runtime";
import { InFlightRequest, type NodeRequestOptions } from "./in-flight-request";
import type { NodeHttpHandlerOptions } from "./node-http-handler-options";
import type { RequestPlan } from "./request-plan";
import { loadedHttp, ownedAgents, type ResolvedHandlerConfig, resolveHandlerConfig } from "./resolve-handler-config";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const validateRequest = importedValidateRequest;

type RequestFunc = (options: object) => ClientRequest;

/** Where a request was when `destroy()` ran during `handle()`'s first-time setup (before any Node request). */
const SETUP_WHERE = "while handle() was still resolving the handler config or creating its http agent";

/**
 * A drop-in replacement for `NodeHttpHandler` from `@smithy/node-http-handler` (HTTP/1.1): same constructor forms,
 * `create`, `handle`, `destroy`, `updateHttpClientConfig`, `httpHandlerConfigs`, `metadata`, error shapes and
 * messages (prefixed `@sockeye/node-http-handler`). Per-request deadlines and the socket-usage check run on one
 * native timer per handler, armed for the earliest deadline, instead of native timers per request. @public
 */
export class NodeHttpHandler implements HttpHandler<NodeHttpHandlerOptions> {
  /** Identifies the protocol to the SDK. */
  public readonly metadata = { handlerProtocol: "http/1.1" };
  private config?: ResolvedHandlerConfig;
  private configProvider: Promise<ResolvedHandlerConfig>;
  private agentIsExternal = false;
  private readonly runtime = new HandlerRuntime();
  /** Incremented by every `destroy()`: a `handle()` in its first-time setup rejects if it changed across an await. */
  private destroyGeneration = 0;
  /** The handler's monitor, also while `telemetry` is off (then the runtime has none). */
  private monitorInstance: Http1PoolMonitor | undefined = undefined;
  /** Provider form, until it resolves: monitor updates made meanwhile, re-applied over its options (later wins). */
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

  /** `instanceOrOptions` if it has a `handle` function, else a new `NodeHttpHandler` built from it. */
  public static create(
    instanceOrOptions?: HttpHandler<any> | NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>
  ): HttpHandler<any> | NodeHttpHandler {
    if (typeof (instanceOrOptions as HttpHandler<any>)?.handle === "function") {
      return instanceOrOptions as HttpHandler<any>;
    }
    return newNodeHttpHandler(instanceOrOptions as NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>);
  }

  /** Upstream's static socket check, same signature and contract (see `checkSocketUsage`). @internal */
  public static checkSocketUsage(agent: Agent, socketWarningTimestamp: number, logger: Logger = console): number {
    return checkSocketUsage(agent, socketWarningTimestamp, logger);
  }

  /** @param options - options (a bad value throws a `TypeError` now), a provider (its failure rejects `handle()`). */
  constructor(options?: NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>) {
    if (typeof options === "function") {
      // The monitor exists from construction, so `poolMonitor` and monitor updates work before the first handle().
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
   * Ends every request in flight or queued (a pending one rejects with a `HandlerDestroyedError`, code
   * `ERR_HANDLER_DESTROYED`, and a queued one opens no connection; a streaming body fails as with upstream), then
   * destroys both agents (caller-owned ones too, as upstream). Afterwards the handler holds no socket, timer or
   * listener; as upstream, a later `handle()` still works, with new connections.
   */
  public destroy(): void {
    this.destroyGeneration++;
    this.runtime.destroy();
    // The config last applied (`config` is unset after an update until the next handle()).
    const config = this.runtime.runtimeSettings;
    config?.httpAgent?.destroy();
    config?.httpsAgent?.destroy();
  }

  /** Sends `request` and resolves with the response once its headers arrived; its body is a `Readable` stream. */
  public handle(request: HttpRequest, options?: HttpHandlerOptions | null): Promise<{ response: HttpResponse }> {
    const config = this.config;
    // Not `async`: returning the request's own promise saves two microtask hops. Every failure is a rejection.
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
      this.runtime.runtimeSettings = this.config;
      if (generation !== this.destroyGeneration) throw handlerDestroyedError(PACKAGE_PREFIX, SETUP_WHERE);
    }
    const config = this.config;
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
      if (abortSignal?.aborted) return Promise.reject(buildAbortError(abortSignal));
      const isSSL = validateRequest(request, PACKAGE_PREFIX) === "https:";
      const requestTimeout = options?.requestTimeout;
      const headers = request.headers;
      const expectContinue = headers ? (headers.Expect ?? headers.expect) === "100-continue" : false;
      const plan =
        !expectContinue && (requestTimeout === undefined || requestTimeout === config.requestTimeout)
          ? this.cachedPlan(config, isSSL)
          : this.buildPlan(config, isSSL, requestTimeout ?? config.requestTimeout, expectContinue);
      const origin = this.runtime.hostMonitor === undefined ? "" : this.originOf(isSSL, request.hostname, request.port);
      let path = request.path;
      const query = request.query;
      if (query) {
        for (const _ in query) {
          const queryString = buildQueryString(query);
          if (queryString) path += `?${queryString}`;
          break;
        }
      }
      if (request.fragment) path += `#${request.fragment}`;
      // Validated: a non-empty string. `http.request` takes an IPv6 address without brackets.
      const hostname = request.hostname;
      const nodeOptions: NodeRequestOptions = {
        headers: request.headers,
        host: hostname[0] === "[" && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname,
        method: request.method,
        path,
        port: request.port,
        agent: plan.agent,
      };
      // No `auth` key without credentials: Node's agent copies every own key into a per-request dictionary.
      if (request.username != null || request.password != null) {
        nodeOptions.auth = `${request.username ?? ""}:${request.password ?? ""}`;
      }
      // Looked up at call time so interception (nock, APM) installed after construction is honoured.
      const requestFunc: RequestFunc = isSSL ? https.request : loadedHttp().request;
      const state = new InFlightRequest(this.runtime, request, plan, origin, abortSignal);
      return new Promise((resolve, reject) => state.start(resolve, reject, requestFunc, nodeOptions));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The plan of a request without per-call overrides, shared per (resolved config, protocol, agent). */
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
      // Wait for 100-continue on a private agent so pooled sockets are not held (as upstream). It inherits the pooled
      // agent's options (`ca`, `lookup`…), so a custom CA works for large uploads too; upstream's drops them.
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
   * A JSON-serialisable snapshot of the socket pool, one entry per origin (`scheme://host:port`); every field and its
   * unit: `@sockeye/pool-monitor`'s `PoolStats`. Empty before the first request or with `telemetry: false`. Right
   * after a burst resolves, counters may trail it by an event-loop turn.
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them.
   */
  public getPoolStats(options?: GetStatsOptions): PoolStats {
    return this.runtime.hostMonitor?.getStats(options) ?? emptyPoolStats(timing.now());
  }

  /** The handler's `Http1PoolMonitor`; `undefined` with `telemetry: false`. It outlives `destroy()`. */
  public get poolMonitor(): Http1PoolMonitor | undefined {
    return this.runtime.hostMonitor;
  }

  /**
   * Updates one config key; the next `handle()` re-resolves the config (upstream semantics). `Symbol.for("logger")`
   * and `Symbol.for("@smithy/defaultSocketTimeout")` apply unless the handler has its own. An option is checked now (a
   * bad value throws and changes nothing); `"saturation"`, `"onSaturation"`, `"onRecovery"` apply to the monitor at
   * once (omitted `saturation` fields return to their defaults); `"telemetry"` applies to requests started from now.
   */
  public updateHttpClientConfig(key: keyof NodeHttpHandlerOptions | symbol, value: unknown): void {
    const update = checkHandlerUpdate(SHARED_OPTIONS, key, value, PACKAGE_PREFIX, this.monitorInstance);
    value = update.value;
    if (key === "telemetry") {
      this.runtime.hostMonitor = value === false ? undefined : this.monitorInstance;
      if (this.runtime.hostMonitor !== undefined && this.runtime.inFlightCount > 0)
        this.runtime.hostScheduler.ensureTicking();
    }
    const pending = this.pendingMonitorUpdates;
    if (pending !== undefined && (update.update === "monitor" || key === "telemetry")) pending[key as string] = value;
    this.config = undefined;
    this.configProvider = this.configProvider.then((config) => withUpdate(config, key, value));
    this.configProvider.catch(() => {});
  }

  /** The resolved config (agents included); `{}` until the next `handle()` resolves it, as upstream. */
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
    // Built even with `telemetry: false`, so the options are validated alike and telemetry can be switched on.
    if (this.monitorInstance === undefined) this.monitorInstance = this.newMonitor(config);
    else this.monitorInstance.configure(this.monitorOptions(config));
    this.runtime.hostMonitor = config.telemetry ? this.monitorInstance : undefined;
    return config;
  }

  private newMonitor(config: ResolvedHandlerConfig | undefined): Http1PoolMonitor {
    const runtime = this.runtime;
    const monitor = new Http1PoolMonitor(this.monitorOptions(config));
    monitor.onResume = () => runtime.hostScheduler.ensureTicking();
    return monitor;
  }

  private monitorOptions(config: ResolvedHandlerConfig | undefined): PoolMonitorOptions {
    return handlerMonitorOptions(config, PACKAGE_PREFIX, () => this.runtime.runtimeSettings?.logger);
  }
}

/** `new NodeHttpHandler()` outside the class body, so the build names the class `NodeHttpHandler`, not `_NodeHttpHandler` (see tsup.config.ts). */
function newNodeHttpHandler(
  options?: NodeHttpHandlerOptions | Provider<NodeHttpHandlerOptions | void>
): NodeHttpHandler {
  return new NodeHttpHandler(options);
}
