/**
 * `PoolMonitor` options, their defaults and validation.
 *
 * Validation runs in the constructor and in `PoolMonitor.configure()`; bad input throws a `TypeError`
 * or `RangeError` whose message names the option, the received value and the allowed range.
 */
import type { SaturationReport } from "./pool-stats";

/**
 * Minimal logger: any object with an optional `warn` (the Smithy `Logger`, `console`, pino...).
 * @public
 */
export interface PoolMonitorLogger {
  warn?: (message: string) => void;
}

/**
 * Options of `PoolMonitor`.
 * @public
 */
export interface PoolMonitorOptions {
  /**
   * Receives one `warn` line per saturation episode and per change of its cause (and a reminder every
   * `warningLockoutMs` while it lasts).
   * @defaultValue none (no log output)
   */
  logger?: PoolMonitorLogger;
  /**
   * Prefix of every log line.
   * @defaultValue `"@sockeye/pool-monitor:WARN - "`
   */
  messagePrefix?: string;
  /**
   * Called on every transition into `saturated` or `stalled` and on every change of cause during an episode (not
   * rate-limited). A throwing callback is caught.
   * @defaultValue none
   */
  onSaturation?: (report: SaturationReport) => void;
  /**
   * Called when a saturated or stalled origin has recovered: for `windowSamples` consecutive samples the queue was
   * empty, sockets were completing (or all released) and, for `unconsumed_bodies`, no unread body was left. A
   * throwing callback is caught.
   * @defaultValue none
   */
  onRecovery?: (report: SaturationReport) => void;
  /**
   * Sampling period in milliseconds: the interval of the standalone ticker, and the period at which an embedding
   * handler is expected to call `sample()`. Range 100–60000.
   * @defaultValue 1000
   */
  sampleIntervalMs?: number;
  /**
   * K, the number of consecutive samples the detector looks at; K × sampleIntervalMs is the detection horizon.
   * Integer, range 3–60.
   * @defaultValue 5
   */
  windowSamples?: number;
  /**
   * Minimum time between two log lines of the same cause for the same origin, milliseconds, across episodes (a
   * pool that flaps logs once per lockout); a change of cause is logged at once. Callbacks and channels are not
   * rate-limited. Range 0–86400000.
   * @defaultValue 15000
   */
  warningLockoutMs?: number;
  /**
   * A response whose body was handed to the caller and has neither been read nor destroyed, and made no progress,
   * for this many milliseconds counts as "unconsumed". While requests of the same origin are queued, such a body counts
   * after 2 × `sampleIntervalMs` already, when that is shorter (it holds a socket others wait for). Range 1–86400000.
   * @defaultValue 10000
   */
  unconsumedBodyMs?: number;
  /**
   * Shortest stall deadline, milliseconds: with every socket busy, requests queued and nothing completing for
   * `windowSamples` samples, a request held this long is a stall (`no_progress`); before that the pool is reported
   * once as `pool_capacity` with trigger `long_holds` (a long poll looks exactly like a server that does not answer
   * until it completes). An origin whose requests normally hold a socket longer gets 4 × that hold time instead. The
   * default exceeds SQS's longest long poll (20 s); raise it for longer polls (e.g. Step Functions `GetActivityTask`,
   * 60 s). Range 1000–86400000.
   * @defaultValue 30000
   */
  stallAfterMs?: number;
  /**
   * Maximum number of distinct origins tracked separately; later origins are aggregated under `"_OTHER"`.
   * Integer, range 1–100000.
   * @defaultValue 256
   */
  maxOrigins?: number;
}

/**
 * The saturation detector's parameters: the subset of {@link PoolMonitorOptions} an embedding handler exposes as its
 * `saturation` option (each field documented there, with its range and default).
 * @public
 */
export type SaturationOptions = Pick<PoolMonitorOptions, (typeof SATURATION_OPTION_KEYS)[number]>;

/**
 * The keys of {@link SaturationOptions}, e.g. to replace all of them at once with `configure()`.
 * @public
 */
export const SATURATION_OPTION_KEYS = [
  "sampleIntervalMs",
  "windowSamples",
  "warningLockoutMs",
  "unconsumedBodyMs",
  "stallAfterMs",
  "maxOrigins",
] as const;

/** @internal */
export interface ResolvedPoolMonitorOptions {
  logger: PoolMonitorLogger | undefined;
  messagePrefix: string;
  onSaturation: ((report: SaturationReport) => void) | undefined;
  onRecovery: ((report: SaturationReport) => void) | undefined;
  sampleIntervalMs: number;
  windowSamples: number;
  warningLockoutMs: number;
  unconsumedBodyMs: number;
  stallAfterMs: number;
  maxOrigins: number;
}

/**
 * Defaults of every option.
 * @public
 */
export const POOL_MONITOR_DEFAULTS = {
  messagePrefix: "@sockeye/pool-monitor:WARN - ",
  sampleIntervalMs: 1000,
  windowSamples: 5,
  warningLockoutMs: 15_000,
  unconsumedBodyMs: 10_000,
  stallAfterMs: 30_000,
  maxOrigins: 256,
} as const;

const PKG = "@sockeye/pool-monitor";

/** @internal */
export function resolvePoolMonitorOptions(options: PoolMonitorOptions | undefined): ResolvedPoolMonitorOptions {
  if (options === undefined || options === null) options = {};
  else if (typeof options !== "object") {
    throw new TypeError(`${PKG}: options must be an object; received ${describe(options)}.`);
  }
  const logger = options.logger;
  if (logger !== undefined && (logger === null || typeof logger !== "object")) {
    throw new TypeError(
      `${PKG}: option "logger" must be an object with a warn(message) method; received ${describe(logger)}.`
    );
  }
  if (logger !== undefined && logger.warn !== undefined && typeof logger.warn !== "function") {
    throw new TypeError(`${PKG}: option "logger.warn" must be a function; received ${describe(logger.warn)}.`);
  }
  const messagePrefix = options.messagePrefix ?? POOL_MONITOR_DEFAULTS.messagePrefix;
  if (typeof messagePrefix !== "string") {
    throw new TypeError(`${PKG}: option "messagePrefix" must be a string; received ${describe(messagePrefix)}.`);
  }
  return {
    logger,
    messagePrefix,
    onSaturation: fn("onSaturation", options.onSaturation),
    onRecovery: fn("onRecovery", options.onRecovery),
    sampleIntervalMs: num(
      "sampleIntervalMs",
      options.sampleIntervalMs,
      POOL_MONITOR_DEFAULTS.sampleIntervalMs,
      100,
      60_000,
      false,
      "milliseconds"
    ),
    windowSamples: num(
      "windowSamples",
      options.windowSamples,
      POOL_MONITOR_DEFAULTS.windowSamples,
      3,
      60,
      true,
      "samples"
    ),
    warningLockoutMs: num(
      "warningLockoutMs",
      options.warningLockoutMs,
      POOL_MONITOR_DEFAULTS.warningLockoutMs,
      0,
      86_400_000,
      false,
      "milliseconds"
    ),
    unconsumedBodyMs: num(
      "unconsumedBodyMs",
      options.unconsumedBodyMs,
      POOL_MONITOR_DEFAULTS.unconsumedBodyMs,
      1,
      86_400_000,
      false,
      "milliseconds"
    ),
    stallAfterMs: num(
      "stallAfterMs",
      options.stallAfterMs,
      POOL_MONITOR_DEFAULTS.stallAfterMs,
      1000,
      86_400_000,
      false,
      "milliseconds"
    ),
    maxOrigins: num("maxOrigins", options.maxOrigins, POOL_MONITOR_DEFAULTS.maxOrigins, 1, 100_000, true, "origins"),
  };
}

function fn<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== "function") {
    throw new TypeError(`${PKG}: option "${name}" must be a function; received ${describe(value)}.`);
  }
  return value;
}

function num(
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max: number,
  integer: boolean,
  unit: string
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== "number" ||
    Number.isNaN(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    const kind = integer ? "an integer" : "a number";
    const Err = typeof value === "number" ? RangeError : TypeError;
    throw new Err(
      `${PKG}: option "${name}" must be ${kind} between ${min} and ${max} (${unit}); received ${describe(value)}.`
    );
  }
  return value;
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (value === null) return "null";
  if (typeof value === "object") return Array.isArray(value) ? "an array" : "an object";
  return String(value);
}
