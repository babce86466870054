import type { HttpHandler, HttpRequest, HttpResponse } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Logger, Provider } from "@smithy/types";
import type { GetStatsOptions, PoolStats, PoolTelemetry } from "@sockeye/pool-monitor";
import { Agent, buildConnector, Dispatcher, Pool } from "undici";
import {
  buildAbortError,
  buildQueryString as importedBuildQueryString,
  checkHandlerUpdate,
  DeadlineScheduler,
  emptyPoolStats,
  guardedWarn,
  handlerMonitorOptions,
  TICK_MS,
  validateRequest as importedValidateRequest,
  withUpdate,
} from "@sockeye/pool-monitor/internal";
import { ConnectingSockets } from "./connecting-sockets";
import { PACKAGE_PREFIX } from "./constants";
import type { DispatcherLike, DispatchOptionsLike } from "./dispatcher-like";
import { globalDispatcherSlot, isUserSetDispatcher } from "./global-dispatcher";
import { DESTROYED_BY_HANDLER, handlerDestroyedError } from "./handler-destroyed-error";
import { type OriginGate, OriginGates } from "./origin-gate";
import type { OriginPoolState } from "./origin-pool-state";
import {
  type ResolvedUndiciConfig,
  resolveUndiciConfig,
  UNDICI_OPTIONS,
  unboundedQueueError,
} from "./resolve-undici-config";
import { trackedConnector } from "./tracked-connector";
import type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";
import { RequestPlan } from "./request-plan";
import { type AbortSignalLike, LegacyUndiciRequest, UndiciRequest, type UndiciRequestCore } from "./undici-request";
import { UndiciPoolMonitor } from "./undici-pool-monitor";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const buildQueryString = importedBuildQueryString;
const validateRequest = importedValidateRequest;

const WARN_PREFIX = `${PACKAGE_PREFIX}:WARN - `;

/** `globalSeen` when the handler does not follow the global dispatcher (a `dispatcher` option is set). */
const NOT_FOLLOWED: unique symbol = Symbol("not followed");

type OnceWarning = "agent options" | "per-request" | "global ignores agents";

/**
 * A Smithy `HttpHandler` on undici with `NodeHttpHandler`'s options, error shapes, telemetry and saturation
 * detection. Deadlines run on one native timer per handler. `Expect: 100-continue` is removed and the body sent at
 * once (undici's HTTP/1.1 client cannot wait for `100 Continue`), as `@smithy/undici-http-handler` does. @public
 */
export class UndiciHttpHandler implements HttpHandler<UndiciHttpHandlerOptions> {
  public readonly metadata = { handlerProtocol: "http/1.1" };
  /** The latest resolved config, once known (at once for an options object, when a provider settled). */
  private config: ResolvedUndiciConfig | undefined;
  private configPromise: Promise<ResolvedUndiciConfig>;
  private rawOptions: UndiciHttpHandlerOptions | undefined;
  private plan: RequestPlan | undefined;
  /** `plan` for the latest call with its own `requestTimeout`: that deadline rejects unless `throwOnRequestTimeout: false`. */
  private callPlan: RequestPlan | undefined;
  private currentDispatcher: DispatcherLike | undefined;
  private ownsDispatcher = false;
  /** The dispatcher is this package's undici 7: `LegacyUndiciRequest` (native callbacks, no adapter per request). */
  private legacyHandlers = false;
  /** undici reports request-body progress (own `Agent`, no caller `factory`). */
  private uploadObserved = false;
  /** Sockets of the handler-owned dispatcher still connecting: `destroy()` ends them (undici would not). */
  private readonly pendingConnects = new ConnectingSockets();
  /** The FIFO per busy origin in front of the handler-owned dispatcher's pools (see origin-gate.ts). */
  private readonly gates = new OriginGates(this.pendingConnects);
  /** `maxSockets` per scheme of the handler-owned dispatcher (`undefined`: unknown, e.g. a caller's `factory`). */
  private gateLimits: { http: number | null; https: number | null } | undefined;
  /** The global dispatcher slot when the dispatcher was chosen (a change re-chooses), or `NOT_FOLLOWED`. */
  private globalSeen: unknown = NOT_FOLLOWED;
  /** The dispatcher is the user's global one: never closed or destroyed by the handler. */
  private viaGlobal = false;
  private telemetryMonitor: UndiciPoolMonitor | undefined;
  private readonly scheduler = new DeadlineScheduler(
    (now) => this.sampleTick(now),
    () => this.telemetryMonitor?.sampleIntervalMs ?? TICK_MS
  );
  private readonly warned = new Set<OnceWarning>();
  /** Incremented by `destroy()`: a `handle()` awaiting the config provider meanwhile rejects, sending nothing. */
  private destroyGeneration = 0;
  // One-entry origin cache: consecutive requests to one endpoint skip building the origin string and the lookup.
  private lastProtocol: string | undefined;
  private lastHostname: string | undefined;
  private lastPort: number | undefined;
  private lastOrigin = "";
  private lastState: OriginPoolState | undefined;
  private lastGate: OriginGate | undefined;

  /** `instanceOrOptions` if it has a `handle` function, else a new `UndiciHttpHandler` built from it. */
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
   * @param options - an options object (a bad value throws a `TypeError` now), a provider (called now; a rejection
   *   or bad value rejects every `handle()`), or nothing.
   */
  constructor(options?: UndiciHttpHandlerOptions | Provider<UndiciHttpHandlerOptions | void>) {
    // A connection attempt goes ahead only while a request of its origin waits for one (no gate: always).
    this.pendingConnects.demand = (origin) => this.gates.byOrigin.get(origin)?.needsConnection() ?? true;
    if (typeof options === "function") {
      this.configPromise = this.chain(options().then((o) => this.applyOptions(o ?? undefined)));
    } else {
      this.setConfig(this.applyOptions(options));
      this.configPromise = Promise.resolve(this.config as ResolvedUndiciConfig);
    }
  }

  /** Makes `p` the pending config, `config` once it settles unless a later one replaced it. */
  private chain(p: Promise<ResolvedUndiciConfig>): Promise<ResolvedUndiciConfig> {
    this.config = undefined;
    p.then((config) => {
      if (this.configPromise === p) this.setConfig(config);
    }, ignoreRejection);
    return p;
  }

  private setConfig(config: ResolvedUndiciConfig): void {
    this.config = config;
    this.plan = new RequestPlan(config, this.scheduler, this.telemetryMonitor, config.throwOnRequestTimeout === true);
    this.callPlan = undefined;
  }

  /** Sends `request`; resolves once its headers arrived, the body a `Readable`. Every failure is a rejection. */
  public handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    const config = this.config;
    if (
      config !== undefined &&
      this.currentDispatcher !== undefined &&
      (this.globalSeen === NOT_FOLLOWED || globalDispatcherSlot() === this.globalSeen)
    )
      return this.sendRequest(config, request, options);
    return this.handleAfterSetup(request, options);
  }

  private async handleAfterSetup(
    request: HttpRequest,
    options?: HttpHandlerOptions
  ): Promise<{ response: HttpResponse }> {
    // A config updated while this one was pending replaces it: wait for the latest.
    while (this.config === undefined) {
      const generation = this.destroyGeneration;
      await this.configPromise;
      if (generation !== this.destroyGeneration) {
        throw handlerDestroyedError("while handle() was still resolving the handler config");
      }
    }
    if (this.globalSeen !== NOT_FOLLOWED && globalDispatcherSlot() !== this.globalSeen) this.globalDispatcherChanged();
    if (this.currentDispatcher === undefined) {
      this.currentDispatcher = this.createDispatcher(this.config);
      // Requests a gate still holds go to the new dispatcher (the old one is closing), within its limits.
      const limits = this.gateLimits;
      for (const [origin, gate] of this.gates.byOrigin) {
        gate.dispatchTo = this.currentDispatcher;
        gate.originPool = undefined;
        gate.setLimit(limits === undefined ? null : origin.startsWith("https:") ? limits.https : limits.http);
        gate.drainQueue();
      }
      if (limits === undefined && this.gates.byOrigin.size > 0) {
        // The new dispatcher is not gated (limits unknown): its gates drained (limit null) and go.
        this.gates.clear();
        this.telemetryMonitor?.ungateAll();
      }
    }
    return this.sendRequest(this.config, request, options);
  }

  private sendRequest(
    config: ResolvedUndiciConfig,
    request: HttpRequest,
    options: HttpHandlerOptions | undefined
  ): Promise<{ response: HttpResponse }> {
    const abortSignal = options?.abortSignal as AbortSignalLike | undefined;
    if (abortSignal?.aborted) return Promise.reject(buildAbortError(abortSignal));
    try {
      const https = validateRequest(request, PACKAGE_PREFIX) === "https:";
      let headers = request.headers;
      if (
        headers !== undefined &&
        (headers.Expect !== undefined ||
          headers.expect !== undefined ||
          headers["transfer-encoding"] !== undefined ||
          headers["Transfer-Encoding"] !== undefined)
      )
        headers = withoutRefusedHeaders(headers);
      if ((request.username != null || request.password != null) && !hasHeader(headers, "authorization")) {
        // As Node's `http.request` with `auth`: only without an Authorization header.
        const credentials = Buffer.from(`${request.username ?? ""}:${request.password ?? ""}`).toString("base64");
        headers = { ...headers, authorization: `Basic ${credentials}` };
      }
      let path = request.path;
      if (request.query) {
        const qs = buildQueryString(request.query);
        if (qs) path += `?${qs}`;
      }
      // request.fragment never leaves the client (RFC 9110 §7.1).
      const plan = options?.requestTimeout != null ? this.callPlanFor(config, options.requestTimeout) : this.plan!;
      const origin = this.originOf(https, request);
      const observed = this.uploadObserved;
      const state = this.legacyHandlers
        ? new LegacyUndiciRequest(plan, this.lastState, this.lastGate, abortSignal, observed)
        : new UndiciRequest(plan, this.lastState, this.lastGate, abortSignal, observed);
      const dispatchOptions: DispatchOptionsLike = {
        origin,
        path,
        method: request.method,
        headers,
        body: request.body ?? null,
        // socketTimeout runs on the scheduler; undici's headersTimeout is only the backstop of a caller's dispatcher,
        // whose interceptors may not forward request-body progress.
        headersTimeout: observed ? 0 : plan.idleMs,
        bodyTimeout: 0,
      };
      const dispatcher = this.currentDispatcher as DispatcherLike;
      return new Promise((resolve, reject) => state.start(resolve, reject, dispatcher, dispatchOptions));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `scheme://host:port`, cached for consecutive requests to one endpoint; also selects telemetry state and gate. */
  private originOf(https: boolean, request: HttpRequest): string {
    const protocol = https ? "https:" : "http:";
    const hostname = request.hostname;
    const port = request.port;
    if (protocol === this.lastProtocol && hostname === this.lastHostname && port === this.lastPort)
      return this.lastOrigin;
    const origin = `${protocol}//${hostname}:${port ?? (https ? 443 : 80)}`;
    this.lastProtocol = protocol;
    this.lastHostname = hostname;
    this.lastPort = port;
    this.lastOrigin = origin;
    this.lastState = this.telemetryMonitor?.originFor(origin);
    if (this.lastState !== undefined && !this.ownsDispatcher) this.describeExternal(this.lastState, origin);
    this.lastGate = this.gateFor(origin, https, this.lastState);
    return origin;
  }

  /** The origin's `OriginGate`, pinned while cached, when the handler owns the dispatcher and knows its limit. */
  private gateFor(origin: string, https: boolean, o: OriginPoolState | undefined): OriginGate | undefined {
    const limits = this.gateLimits;
    if (!this.ownsDispatcher || limits === undefined) {
      this.gates.unpin();
      return undefined;
    }
    return this.gates.pinGate(origin, https ? limits.https : limits.http, o, this.currentDispatcher);
  }

  /** A caller's dispatcher: its `stats` feed the gauges (an Agent's keyed by origin; a Pool's or Client's its own). */
  private describeExternal(o: OriginPoolState, origin: string): void {
    const d = this.currentDispatcher as (Dispatcher & { stats?: unknown }) | undefined;
    if (d === undefined || o.statsReader !== undefined) return;
    const short = new URL(origin).origin;
    o.statsReader = () => {
      const stats = d.stats as Record<string, unknown> | undefined;
      if (stats === undefined || stats === null) return undefined;
      if (typeof (stats as { connected?: unknown }).connected === "number") return stats as any;
      return (stats[origin] ?? stats[short]) as any;
    };
  }

  private applyOptions(options: UndiciHttpHandlerOptions | undefined): ResolvedUndiciConfig {
    const config = resolveUndiciConfig(options);
    this.rawOptions = options;
    if (this.telemetryMonitor === undefined && config.telemetry) {
      this.telemetryMonitor = new UndiciPoolMonitor(
        handlerMonitorOptions(config, PACKAGE_PREFIX, () => this.config?.logger)
      );
      this.telemetryMonitor.onResume = () => {
        if (this.plan?.samplesOnTick === true) this.scheduler.ensureTicking();
      };
    }
    const ignored = [...config.httpConnect.ignored, ...config.httpsConnect.ignored];
    if (ignored.length > 0) {
      this.warnOnce(
        "agent options",
        config.logger,
        `${WARN_PREFIX}agent options without an undici equivalent are ignored: ${ignored.join("; ")}.`
      );
    }
    if (options?.socketMonitor === "per-request") {
      this.warnOnce(
        "per-request",
        config.logger,
        `${WARN_PREFIX}socketMonitor "per-request" has no undici equivalent; using "interval".`
      );
    }
    return config;
  }

  private warnOnce(which: OnceWarning, logger: Logger | undefined, message: string): void {
    if (this.warned.has(which)) return;
    this.warned.add(which);
    guardedWarn(logger ?? console, message);
  }

  /** The plan of a call with its own `requestTimeout` (kept for the next call with the same one). */
  private callPlanFor(config: ResolvedUndiciConfig, requestTimeout: number): RequestPlan {
    const plan = this.callPlan;
    if (plan !== undefined && plan.requestTimeoutMs === requestTimeout) return plan;
    const throws = config.throwOnRequestTimeout !== false;
    return (this.callPlan = new RequestPlan(config, this.scheduler, this.telemetryMonitor, throws, requestTimeout));
  }

  /**
   * Precedence: the `dispatcher` option > a global dispatcher the user set > a handler-owned `Agent`. Returns the
   * global dispatcher when it decides; records the global slot either way.
   */
  private followGlobal(config: ResolvedUndiciConfig): DispatcherLike | undefined {
    this.viaGlobal = false;
    if (config.dispatcher !== undefined || config.dispatcherOptions !== undefined) {
      this.globalSeen = NOT_FOLLOWED;
      return undefined;
    }
    const slot = globalDispatcherSlot();
    this.globalSeen = slot;
    if (!isUserSetDispatcher(slot)) return undefined;
    // Never bypassed, never silently unbounded: `handle()` rejects until the bound or the global dispatcher goes.
    const unbounded = unboundedQueueError(config.maxQueuedRequests, "global");
    if (unbounded !== undefined) throw unbounded;
    this.viaGlobal = true;
    if (this.rawOptions?.httpsAgent != null || this.rawOptions?.httpAgent != null) {
      this.warnOnce(
        "global ignores agents",
        config.logger,
        `${WARN_PREFIX}requests go through the global undici dispatcher (setGlobalDispatcher); httpAgent / httpsAgent options (maxSockets, TLS) do not apply to it.`
      );
    }
    return slot as DispatcherLike;
  }

  /** The global dispatcher slot changed since the dispatcher was chosen: re-choose, unless both are defaults. */
  private globalDispatcherChanged(): void {
    const slot = globalDispatcherSlot();
    if (!this.viaGlobal && !isUserSetDispatcher(slot)) {
      this.globalSeen = slot;
      return;
    }
    this.retireDispatcher();
  }

  /** The next `handle()` chooses a dispatcher again; one the handler owns is closed gracefully. */
  private retireDispatcher(): void {
    const old = this.currentDispatcher;
    this.currentDispatcher = undefined;
    if (old !== undefined && this.ownsDispatcher) void old.close().catch(ignoreRejection);
  }

  private createDispatcher(config: ResolvedUndiciConfig): DispatcherLike {
    this.lastProtocol = undefined;
    // A global dispatcher the user set, or the `dispatcher` option's instance: used as is (limit unknown, no gate).
    const external = this.followGlobal(config) ?? (config.dispatcher as unknown as DispatcherLike | undefined);
    this.ownsDispatcher = external === undefined;
    this.legacyHandlers = external === undefined || (external as unknown) instanceof Dispatcher;
    this.gateLimits = undefined;
    this.uploadObserved = false;
    if (external !== undefined) return external;
    const user = (config.dispatcherOptions ?? {}) as Agent.Options & Record<string, unknown>;
    // Connections per origin: the `dispatcher` option's `connections`, else the agents' `maxSockets`.
    const connections =
      user.connections !== undefined
        ? { http: user.connections ?? null, https: user.connections ?? null }
        : { http: config.httpMaxSockets, https: config.httpsMaxSockets };
    if (user.factory === undefined) {
      // A caller's `factory`: limits unknown, upload progress unobserved. Else the gate limit is connections ×
      // `pipelining` (which also caps HTTP/2 streams).
      this.uploadObserved = true;
      const perConnection = typeof user.pipelining === "number" && user.pipelining > 1 ? user.pipelining : 1;
      const times = (n: number | null): number | null => (n === null ? null : n * perConnection);
      this.gateLimits = { http: times(connections.http), https: times(connections.https) };
    }
    const idle = config.idleSocketTimeout > 0 ? config.idleSocketTimeout : 600_000;
    const monitor = this.telemetryMonitor;
    const lifetime = config.connectionLifetime;
    const connecting = this.pendingConnects;
    const gates = this.gates;
    const factory = (origin: string | URL, opts: object): Dispatcher => {
      const key = String(origin);
      const https = key.startsWith("https:");
      const o = opts as Pool.Options & Record<string, unknown>;
      const maxSockets = https ? connections.https : connections.http;
      const agent = https ? config.httpsConnect : config.httpConnect;
      let connector: buildConnector.connector;
      if (typeof o.connect === "function") connector = o.connect as buildConnector.connector;
      else {
        connector = buildConnector({
          ...agent.connect,
          ...o.connect,
          timeout: config.connectionTimeout ?? 0,
        } as buildConnector.BuildOptions);
        const servername = agent.connect.servername;
        if (https && typeof servername === "string" && servername !== "") {
          connector = pinServername(connector, servername);
        }
      }
      const state: OriginPoolState | undefined = monitor?.originFor(key);
      const pool = new Pool(origin, {
        ...(agent.localAddress !== undefined ? { localAddress: agent.localAddress } : {}),
        // keepAlive: false on the agent: a new connection per request, as with node:http.
        ...(agent.keepAlive ? {} : { pipelining: 0 }),
        ...o,
        connections: maxSockets,
        connect: connecting.connector(
          state === undefined || monitor === undefined
            ? connector
            : trackedConnector(connector, monitor, state, lifetime),
          key
        ),
        ...(lifetime !== undefined ? { clientTtl: lifetime } : {}),
      });
      if (state !== undefined) state.registerPool(key, pool, maxSockets);
      const gate = gates.byOrigin.get(key);
      if (gate !== undefined) gate.originPool = pool;
      return pool;
    };
    return new Agent({
      // The server's `Keep-Alive: timeout` hint may only shorten `idleSocketTimeout`.
      keepAliveTimeout: idle,
      keepAliveMaxTimeout: idle,
      ...user,
      factory: (user.factory as typeof factory | undefined) ?? factory,
    });
  }

  private sampleTick(now: number): boolean {
    const monitor = this.telemetryMonitor;
    if (monitor === undefined || this.plan?.samplesOnTick !== true) return false;
    return monitor.sampleOnTick(now);
  }

  /**
   * A JSON-serialisable snapshot per origin in `@sockeye/pool-monitor`'s `PoolStats` shape, fed from undici's own
   * pool stats and connection events. Empty before the first request and with `telemetry: false`.
   * @param options - `{ resetSummaries: true }` restarts the duration summaries after reading them.
   */
  public getPoolStats(options?: GetStatsOptions): PoolStats {
    return this.telemetryMonitor?.getStats(options) ?? emptyPoolStats(performance.now());
  }

  /**
   * The handler's monitor (`getStats()`, `subscribe()`, `sampleIntervalMs`): pass it to `registerPoolMetrics()` from
   * `@sockeye/opentelemetry`. `undefined` with `telemetry: false`. It outlives `destroy()`.
   */
  public get poolMonitor(): PoolTelemetry | undefined {
    return this.telemetryMonitor;
  }

  /**
   * Destroys the dispatcher (a caller's too, as upstream; never a global one) and stops the scheduler. Every queued
   * or in-flight request rejects (or its body fails) with a `HandlerDestroyedError` (`code: "ERR_HANDLER_DESTROYED"`);
   * so does a `handle()` still awaiting an options provider. A later `handle()` creates a new dispatcher.
   */
  public destroy(): void {
    this.destroyGeneration++;
    this.scheduler.stop();
    const dispatcher = this.currentDispatcher;
    this.currentDispatcher = undefined;
    this.lastProtocol = undefined;
    this.lastGate = undefined;
    // Requests held in the gates never reached undici: reject them first, so that no slot freed below dispatches
    // one into the dispatcher being destroyed.
    for (const gate of this.gates.byOrigin.values()) {
      for (let n = gate.fifoQueue.firstNode; n !== undefined; n = gate.fifoQueue.firstNode)
        (n as UndiciRequestCore).failQueuedOnDestroy();
      gate.setLimit(0);
    }
    this.gates.clear();
    const destroyed = dispatcher !== undefined && !this.viaGlobal ? dispatcher : this.config?.dispatcher;
    if (destroyed !== undefined) void destroyed.destroy(DESTROYED_BY_HANDLER).catch(ignoreRejection);
    this.pendingConnects.destroyAll(DESTROYED_BY_HANDLER);
    this.telemetryMonitor?.releasePools();
    if (this.config?.dispatcher !== undefined) {
      // Gone from the options too, so that no later update (which resolves them again) brings it back.
      this.rawOptions = { ...this.rawOptions, dispatcher: undefined };
      this.config = { ...this.config, dispatcher: undefined };
    }
  }

  /**
   * Updates one config key; the next `handle()` uses it. A bad value throws and changes nothing. `Symbol.for("logger")`
   * and `Symbol.for("@smithy/defaultSocketTimeout")` apply unless set by the handler's options, as `NodeHttpHandler`;
   * monitor options apply at once; a pool option (`dispatcher`, agents, `idleSocketTimeout`, `connectionTimeout`,
   * `connectionLifetime`) closes the dispatcher gracefully and builds a new one.
   */
  public updateHttpClientConfig(key: keyof UndiciHttpHandlerOptions | symbol, value: unknown): void {
    const update = checkHandlerUpdate(UNDICI_OPTIONS, key, value, PACKAGE_PREFIX, this.telemetryMonitor);
    value = update.value;
    // A bound on the global dispatcher it follows (a changed one is chosen again, and checked, at the next handle()).
    const following = key === "maxQueuedRequests" && this.viaGlobal && globalDispatcherSlot() === this.globalSeen;
    const unbounded = following ? unboundedQueueError(value as number, "global") : undefined;
    if (unbounded !== undefined) throw unbounded;
    const apply = (): ResolvedUndiciConfig => {
      const next = withUpdate<UndiciHttpHandlerOptions>(this.rawOptions ?? {}, key, value);
      const config = resolveUndiciConfig(next);
      this.rawOptions = next;
      return config;
    };
    if (this.config !== undefined) {
      // Applied now (as upstream's httpHandlerConfigs() shows it at once); a bad value throws here.
      this.setConfig(apply());
      this.configPromise = Promise.resolve(this.config);
    } else this.configPromise = this.chain(this.configPromise.then(apply));
    if (update.update === "pool") this.retireDispatcher();
  }

  /**
   * The resolved config: at once for an options object (as upstream), once resolved for a provider, `{}` before;
   * an update shows at once.
   */
  public httpHandlerConfigs(): UndiciHttpHandlerOptions {
    return (this.config ?? {}) as UndiciHttpHandlerOptions;
  }
}

/** `catch` handler of a close or destroy nobody awaits. */
function ignoreRejection(): void {}

/** A copy of the headers without `Expect` and `Transfer-Encoding`, which undici refuses. */
function withoutRefusedHeaders(headers: HttpRequest["headers"]): HttpRequest["headers"] {
  const copy = { ...headers };
  delete copy.Expect;
  delete copy.expect;
  delete copy["transfer-encoding"];
  delete copy["Transfer-Encoding"];
  return copy;
}

/** Whether `headers` has `lowerName` in any letter case (header names are case-insensitive). */
function hasHeader(headers: HttpRequest["headers"] | undefined, lowerName: string): boolean {
  if (headers === undefined || headers === null) return false;
  for (const name in headers) {
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) return true;
  }
  return false;
}

/**
 * A connector that opens every TLS connection with `servername` (SNI and certificate check), as
 * `httpsAgent.servername` does on `NodeHttpHandler`: undici's own applies only to requests to an IP address.
 */
function pinServername(connector: buildConnector.connector, servername: string): buildConnector.connector {
  return function connect(options, callback) {
    return connector({ ...options, servername }, callback);
  } as buildConnector.connector;
}

/** Outside the class body, so the build names the class `UndiciHttpHandler` (see tsup.config.ts). */
function newUndiciHttpHandler(
  options?: UndiciHttpHandlerOptions | Provider<UndiciHttpHandlerOptions | void>
): UndiciHttpHandler {
  return new UndiciHttpHandler(options);
}
