/**
 * The options every Sockeye handler shares, each declared once: its type and TSDoc in `SharedHandlerOptions` (or,
 * for an option of upstream's `NodeHttpHandlerOptions`, in `UpstreamSharedOptions`) and its row in `SHARED_OPTIONS`:
 * rule, default, what `updateHttpClientConfig()` does with it, and which handlers take it. The handlers' option
 * types, validation, resolved configs and the README tables are derived from these two declarations; a row without
 * its option, or an option without its row, fails to compile.
 */
import {
  applyOptionRules,
  BOOLEAN,
  COUNT,
  countRule,
  FUNCTION,
  LOGGER,
  MS,
  type OptionRule,
  type OptionRules,
  type OptionSpec,
  type ResolvedOptions,
} from "./option-rules";
import { SATURATION, type PoolMonitorLogger, type SaturationOptions } from "./pool-monitor-options";
import type { SaturationReport } from "./pool-stats";
import { SOCKET_MONITOR, SOCKET_MONITOR_ENV, type SocketMonitorMode } from "./socket-monitor-mode";

/**
 * The options Sockeye adds to upstream's `NodeHttpHandler` options. `NodeHttpHandler` and `UndiciHttpHandler` take
 * them all (their options interfaces extend upstream's and this one, so a property is documented once);
 * `NodeHttp2Handler` takes those whose row in `SHARED_OPTIONS` says `handlers: "all"`.
 * @public
 */
export interface SharedHandlerOptions {
  /**
   * How pool saturation is watched: `"interval"` (sampled on the handler's deadline scheduler; no timer per
   * request), `"per-request"` (`NodeHttpHandler`: upstream's one warning timer per request, exactly;
   * `UndiciHttpHandler`: as `"interval"`; `NodeHttp2Handler`: no detection), or `"off"` (no monitoring). When
   * absent, the `SOCKEYE_SOCKET_MONITOR` environment variable is used.
   * @defaultValue `"interval"`
   */
  socketMonitor?: SocketMonitorMode;
  /**
   * Milliseconds a request may wait for a free socket before it fails with a `TimeoutError`
   * (`code: "ETIMEDOUT"`) whose message names `maxSockets` and the queue length. It leaves the queue and nothing
   * leaks. `undefined`/`0` = no limit.
   * @defaultValue `undefined` (off)
   */
  socketAcquisitionTimeout?: number;
  /**
   * Milliseconds a pooled keep-alive socket may stay idle before the handler closes it, so that the server's own
   * keep-alive timeout cannot close it just as a new request is written on it (`ECONNRESET`). The default, 4000 ms,
   * is below the shortest common server keep-alive timeout (Node.js servers: 5 s; nginx 75 s, ALB 60 s, S3 and
   * DynamoDB front ends longer) and matches undici's and agentkeepalive's free-socket timeouts. While requests are in
   * flight, an expired socket is closed at its limit (a deadline on the handler's shared scheduler); an idle handler
   * holds no timer for its free sockets and closes expired ones right before the next request is dispatched. `0`
   * disables it.
   * @defaultValue 4000
   */
  idleSocketTimeout?: number;
  /**
   * Milliseconds after which a pooled socket is no longer reused: it is closed when it next becomes free (a busy
   * socket is never cut), so DNS changes are picked up (the .NET `PooledConnectionLifetime` idea).
   * `undefined`/`0` = sockets live as long as the server keeps them.
   * @defaultValue `undefined` (off)
   */
  connectionLifetime?: number;
  /**
   * Called when an origin's socket pool becomes saturated, and again when the cause of an ongoing episode changes,
   * with a structured report: origin, active/maxSockets/queued, oldest queued age, throughput, trigger and cause
   * (`pool_capacity` with a recommended `maxSockets` and how it was sized, `unconsumed_bodies` with their count and
   * oldest age, or `no_progress` when requests are held far longer than this origin's requests normally are). Only
   * in `socketMonitor: "interval"` mode. A throwing callback is ignored. Can be replaced at runtime with
   * `updateHttpClientConfig("onSaturation", fn)`.
   * @defaultValue `undefined`
   */
  onSaturation?: (report: SaturationReport) => void;
  /**
   * Called once when a saturated origin's episode ends: the queue drained to 0 and sockets complete again (and no
   * unread body is left when the cause was `unconsumed_bodies`) for `saturation.windowSamples` consecutive samples.
   * Only in `"interval"` mode. A throwing callback is ignored.
   * @defaultValue `undefined`
   */
  onRecovery?: (report: SaturationReport) => void;
  /**
   * Saturation-detector parameters (`"interval"` mode), each validated and documented on {@link SaturationOptions}.
   * A key the block does not take (a misspelling such as `sampleIntervallMs`) throws instead of being ignored.
   * @defaultValue `{}` (every field at its default)
   */
  saturation?: SaturationOptions;
  /**
   * Per-origin pool telemetry (`getPoolStats()`, `poolMonitor`, diagnostics_channel events, the OpenTelemetry
   * bridge). `false` tracks nothing per request; `NodeHttpHandler`'s saturation detection in `"interval"` mode then
   * falls back to upstream's criteria on the handler's shared scheduler.
   * @defaultValue `true`
   */
  telemetry?: boolean;
}

/**
 * Upstream's `NodeHttpHandlerOptions` that every HTTP/1.1 handler validates the same way, typed as this package sees
 * them (it imports no Smithy type; the handlers check that their options type has no other upstream option).
 * @internal
 */
export interface UpstreamSharedOptions {
  connectionTimeout?: number;
  requestTimeout?: number;
  socketTimeout?: number;
  socketAcquisitionWarningTimeout?: number;
  throwOnRequestTimeout?: boolean;
  httpAgent?: object;
  httpsAgent?: object;
  logger?: PoolMonitorLogger;
}

/** Which handlers take a shared option: all three, or the HTTP/1.1 ones (`NodeHttpHandler`, `UndiciHttpHandler`). @internal */
export type SharedOptionHandlers = "all" | "http1.1";

/** A shared option's declaration: an `OptionSpec` and the handlers that take it. @internal */
export type SharedOptionSpec<T> = OptionSpec<T> & { readonly handlers: SharedOptionHandlers };

/** Every option the HTTP/1.1 handlers share. @internal */
export type AllSharedOptions = UpstreamSharedOptions & SharedHandlerOptions;

/** Default `idleSocketTimeout`, ms (see the option's TSDoc). @internal */
export const DEFAULT_IDLE_SOCKET_TIMEOUT_MS = 4000;

const AGENT_MS: OptionRule = [MS[0], "a number of milliseconds >= 0"];

/**
 * An `http.Agent`'s options object: its numeric limits must be sane (`maxSockets: -5` would queue every request
 * forever on `node:http`).
 */
const AGENT_OPTION_RULES: OptionRules = {
  maxSockets: COUNT,
  maxTotalSockets: COUNT,
  maxFreeSockets: /* @__PURE__ */ countRule(0),
  timeout: AGENT_MS,
  keepAliveMsecs: AGENT_MS,
  keepAlive: BOOLEAN,
  scheduling: [(value) => value === "fifo" || value === "lifo", '"fifo" or "lifo"'],
};

/**
 * `httpAgent` / `httpsAgent`: an Agent options object by the rules above, or an Agent instance (an object with a
 * `destroy` function: proxy agents too), which validated its own options; its `maxSockets` is still read (Node's
 * `Agent` accepts -5, and then never hands out a socket).
 */
const AGENT: OptionRule = [
  (agent, prefix, name) =>
    typeof agent === "object" &&
    applyOptionRules(
      typeof agent.destroy === "function" ? { maxSockets: COUNT } : AGENT_OPTION_RULES,
      agent,
      prefix,
      `${name}.`
    ),
  "an Agent instance or Agent options object",
];

/**
 * The shared options' declarations, in the order the checks run (the first bad value throws).
 * @internal
 */
export const SHARED_OPTIONS = {
  connectionTimeout: { rule: MS, default: undefined, update: "pool", handlers: "http1.1" },
  requestTimeout: { rule: MS, default: undefined, update: "request", handlers: "http1.1" },
  socketTimeout: { rule: MS, default: undefined, update: "request", handlers: "http1.1" },
  socketAcquisitionWarningTimeout: { rule: MS, default: undefined, update: "request", handlers: "http1.1" },
  socketAcquisitionTimeout: { rule: MS, default: undefined, update: "request", handlers: "http1.1" },
  idleSocketTimeout: { rule: MS, default: DEFAULT_IDLE_SOCKET_TIMEOUT_MS, update: "pool", handlers: "http1.1" },
  connectionLifetime: { rule: MS, default: undefined, update: "pool", handlers: "http1.1" },
  throwOnRequestTimeout: { rule: BOOLEAN, default: undefined, update: "request", handlers: "http1.1" },
  httpAgent: { rule: AGENT, default: undefined, update: "pool", handlers: "http1.1" },
  httpsAgent: { rule: AGENT, default: undefined, update: "pool", handlers: "http1.1" },
  telemetry: { rule: BOOLEAN, default: true, update: "request", handlers: "all" },
  saturation: { rule: SATURATION, default: undefined, update: "monitor", handlers: "all" },
  onSaturation: { rule: FUNCTION, default: undefined, update: "monitor", handlers: "all" },
  onRecovery: { rule: FUNCTION, default: undefined, update: "monitor", handlers: "all" },
  logger: { rule: LOGGER, default: undefined, update: "request", handlers: "http1.1" },
  socketMonitor: {
    rule: SOCKET_MONITOR,
    default: "interval",
    update: "request",
    handlers: "all",
    env: SOCKET_MONITOR_ENV,
  },
} as const satisfies {
  readonly [K in keyof AllSharedOptions]-?: SharedOptionSpec<Exclude<AllSharedOptions[K], undefined>>;
};

/** The shared options `NodeHttp2Handler` takes (`handlers: "all"`). @internal */
export type Http2SharedOption = {
  [K in keyof typeof SHARED_OPTIONS]: (typeof SHARED_OPTIONS)[K]["handlers"] extends "all" ? K : never;
}[keyof typeof SHARED_OPTIONS];

/** The declarations of the shared options `NodeHttp2Handler` takes, in their order. @internal */
export const HTTP2_SHARED_OPTIONS = /* @__PURE__ */ Object.fromEntries(
  Object.entries(SHARED_OPTIONS).filter(([, spec]) => spec.handlers === "all")
) as unknown as Pick<typeof SHARED_OPTIONS, Http2SharedOption>;

/**
 * The shared options, validated and normalised (`null` = unset, numeric strings converted), with their defaults.
 * Millisecond values are as given (`0` and `Infinity` kept): what they mean is each handler's decision.
 * @internal
 */
export type ResolvedSharedOptions = ResolvedOptions<AllSharedOptions, typeof SHARED_OPTIONS>;
