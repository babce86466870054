/**
 * The options every Sockeye handler shares, each declared once: its type and TSDoc in `SharedHandlerOptions` (or,
 * for an option of upstream's `NodeHttpHandlerOptions`, in `UpstreamSharedOptions`) and its row in `SHARED_OPTIONS`:
 * rule, what `updateHttpClientConfig()` does with it, default; the group it is in says which handlers take it. The handlers' option
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
 * `NodeHttp2Handler` takes those of `ALL_HANDLERS_OPTIONS`.
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

/** A millisecond option without a default, read by requests started after an update. */
const MS_REQUEST = [MS, "request", undefined] as const;
/** A millisecond option without a default that the connection pool is built with. */
const MS_POOL = [MS, "pool", undefined] as const;
/** An agent, or the options the handler builds one with. */
const AGENT_POOL = [AGENT, "pool", undefined] as const;
/** A callback the monitor calls. */
const MONITOR_CALLBACK = [FUNCTION, "monitor", undefined] as const;

/** Every shared option, typed as declared (a row of the wrong type fails to compile). */
type SharedRows = { readonly [K in keyof AllSharedOptions]?: OptionSpec<Exclude<AllSharedOptions[K], undefined>> };

/**
 * The shared options every handler takes, `NodeHttp2Handler` included, in the order their checks run.
 * @internal
 */
export const ALL_HANDLERS_OPTIONS = {
  telemetry: [BOOLEAN, "request", true],
  saturation: [SATURATION, "monitor", undefined],
  onSaturation: MONITOR_CALLBACK,
  onRecovery: MONITOR_CALLBACK,
  socketMonitor: [SOCKET_MONITOR, "request", "interval", SOCKET_MONITOR_ENV],
} as const satisfies SharedRows;

/**
 * Every shared option's declaration, in the order the checks run (the first bad value throws): the HTTP/1.1
 * handlers' own first, then `ALL_HANDLERS_OPTIONS`. An option of `AllSharedOptions` without its row fails to
 * compile.
 * @internal
 */
export const SHARED_OPTIONS = {
  ...({
    connectionTimeout: MS_POOL,
    requestTimeout: MS_REQUEST,
    socketTimeout: MS_REQUEST,
    socketAcquisitionWarningTimeout: MS_REQUEST,
    socketAcquisitionTimeout: MS_REQUEST,
    idleSocketTimeout: [MS, "pool", DEFAULT_IDLE_SOCKET_TIMEOUT_MS],
    connectionLifetime: MS_POOL,
    throwOnRequestTimeout: [BOOLEAN, "request", undefined],
    httpAgent: AGENT_POOL,
    httpsAgent: AGENT_POOL,
    logger: [LOGGER, "request", undefined],
  } as const satisfies SharedRows),
  ...ALL_HANDLERS_OPTIONS,
} satisfies Required<SharedRows>;

/** The shared options `NodeHttp2Handler` takes. @internal */
export type Http2SharedOption = keyof typeof ALL_HANDLERS_OPTIONS;

/**
 * The shared options, validated and normalised (`null` = unset, numeric strings converted), with their defaults.
 * Millisecond values are as given (`0` and `Infinity` kept): what they mean is each handler's decision.
 * @internal
 */
export type ResolvedSharedOptions = ResolvedOptions<AllSharedOptions, typeof SHARED_OPTIONS>;
