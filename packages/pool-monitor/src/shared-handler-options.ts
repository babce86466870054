/**
 * The options every handler shares, each declared once: type and TSDoc in `SharedHandlerOptions` (upstream's in
 * `UpstreamSharedOptions`), and a row in `SHARED_OPTIONS` (rule, update kind, default). Option types, validation,
 * resolved configs and README tables derive from these; a row without its option, or the reverse, fails to compile.
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
 * them all; `NodeHttp2Handler` takes those of `ALL_HANDLERS_OPTIONS`.
 * @public
 */
export interface SharedHandlerOptions {
  /**
   * How pool saturation is watched: `"interval"` (sampled on the handler's deadline scheduler; no timer per
   * request), `"per-request"` (`NodeHttpHandler`: upstream's one warning timer per request, exactly;
   * `UndiciHttpHandler`: as `"interval"`; `NodeHttp2Handler`: no detection), or `"off"` (no monitoring). When
   * absent, the `SOCKEYE_SOCKET_MONITOR` environment variable is used. @defaultValue `"interval"`
   */
  socketMonitor?: SocketMonitorMode;
  /**
   * Milliseconds a request may wait for a free socket before it fails with a `TimeoutError`
   * (`code: "ETIMEDOUT"`) whose message names `maxSockets` and the queue length. It leaves the queue and nothing
   * leaks. `undefined`/`0` = no limit. @defaultValue `undefined` (off)
   */
  socketAcquisitionTimeout?: number;
  /**
   * Milliseconds a pooled keep-alive socket may stay idle before the handler closes it, so that the server's own
   * keep-alive timeout cannot close it just as a request is written on it (`ECONNRESET`). The default is below the
   * shortest common server keep-alive timeout (Node.js servers: 5 s). An idle handler holds no timer: it closes
   * expired sockets right before the next request is dispatched. `0` disables it. @defaultValue 4000
   */
  idleSocketTimeout?: number;
  /**
   * Milliseconds after which a pooled socket is no longer reused: it is closed when it next becomes free (a busy
   * socket is never cut), so DNS changes are picked up (the .NET `PooledConnectionLifetime` idea).
   * `undefined`/`0` = sockets live as long as the server keeps them. @defaultValue `undefined` (off)
   */
  connectionLifetime?: number;
  /**
   * Called when an origin's socket pool becomes saturated, and again when an episode's cause changes, with a
   * `SaturationReport` (origin, gauges, trigger, and cause: `pool_capacity` with a recommended `maxSockets`,
   * `unconsumed_bodies`, or `no_progress`). Only in `"interval"` mode. A throwing callback is ignored.
   * @defaultValue `undefined`
   */
  onSaturation?: (report: SaturationReport) => void;
  /**
   * Called once when a saturated origin's episode ends (queue empty and sockets completing for
   * `saturation.windowSamples` samples). Only in `"interval"` mode. A throwing callback is ignored.
   * @defaultValue `undefined`
   */
  onRecovery?: (report: SaturationReport) => void;
  /**
   * Saturation-detector parameters (`"interval"` mode), documented on {@link SaturationOptions}. An unknown key
   * throws. @defaultValue `{}` (every field at its default)
   */
  saturation?: SaturationOptions;
  /**
   * Per-origin pool telemetry (`getPoolStats()`, `poolMonitor`, diagnostics_channel events). `false` tracks nothing
   * per request; `NodeHttpHandler`'s `"interval"` detection then uses upstream's criteria. @defaultValue `true`
   */
  telemetry?: boolean;
  /**
   * Requests that may wait per origin for a free connection in the handler's own queue (HTTP/2: for a stream slot).
   * A request that would wait beyond it is rejected at once (a rejection of `handle()`, never a throw) with a
   * `QueueFullError` (`code: "ERR_SOCKEYE_QUEUE_FULL"`) naming the option and the queue length, which the SDK's
   * retry strategy does not retry; `getPoolStats()` counts them in `requests.queueFull`. `0`: never wait.
   * `UndiciHttpHandler` bounds its own `Agent`'s queue; with a caller's `dispatcher` instance or a global dispatcher
   * the user set (which queue in undici) it is an error. @defaultValue `undefined` (unlimited)
   */
  maxQueuedRequests?: number;
  /**
   * Milliseconds a response body handed to the caller may stay unread (not one read, pipe, `for await` or
   * `transformTo*()` started) before the handler destroys it and frees its connection (HTTP/2: resets its stream); a
   * later read fails with a one-line `TimeoutError` naming the option. For programs that keep a response they never
   * read. Runs on the handler's deadline scheduler (no timer per request). `undefined`/`0` = off.
   * @defaultValue `undefined` (off)
   */
  unreadBodyTimeout?: number;
}

/**
 * Upstream's `NodeHttpHandlerOptions` every HTTP/1.1 handler validates alike, typed without Smithy imports.
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

/** Default `idleSocketTimeout`, ms. @internal */
export const DEFAULT_IDLE_SOCKET_TIMEOUT_MS = 4000;

const AGENT_MS: OptionRule = [MS[0], "a number of milliseconds >= 0"];

/** An `http.Agent`'s options object (`maxSockets: -5` would queue every request forever on `node:http`). */
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
 * `httpAgent` / `httpsAgent`: Agent options, or an instance (has `destroy`, proxy agents too) whose `maxSockets` is
 * still checked: Node's `Agent` accepts -5.
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

/** Every shared option's row, typed as its option. */
type SharedRows = { readonly [K in keyof AllSharedOptions]?: OptionSpec<Exclude<AllSharedOptions[K], undefined>> };

/** The shared options every handler takes, `NodeHttp2Handler` included, in check order. @internal */
export const ALL_HANDLERS_OPTIONS = {
  telemetry: [BOOLEAN, "request", true],
  saturation: [SATURATION, "monitor", undefined],
  onSaturation: MONITOR_CALLBACK,
  onRecovery: MONITOR_CALLBACK,
  socketMonitor: [SOCKET_MONITOR, "request", "interval", SOCKET_MONITOR_ENV],
  maxQueuedRequests: [/* @__PURE__ */ countRule(0), "request", undefined],
  unreadBodyTimeout: MS_REQUEST,
} as const satisfies SharedRows;

/** Every shared option's row, in check order (the first bad value throws). @internal */
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
 * The shared options, validated, normalised (`null` = unset) and defaulted; `0` and `Infinity` kept as given.
 * @internal
 */
export type ResolvedSharedOptions = ResolvedOptions<AllSharedOptions, typeof SHARED_OPTIONS>;
