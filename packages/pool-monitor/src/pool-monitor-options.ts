/**
 * `PoolMonitor` options, their defaults and validation.
 *
 * Validation runs in the constructor and in `PoolMonitor.configure()`; bad input throws a `TypeError`
 * or `RangeError` whose message names the option, the received value and the allowed range.
 */
import { describeValue, invalidOption, MAX_SHOWN_CHARS } from "./invalid-option";
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

/** A numeric option's rule: the accepted range, whether it must be an integer, and its unit (for the message). */
interface NumberRule {
  min: number;
  max: number;
  integer: boolean;
  unit: string;
}

const NUMBER_RULES: Record<(typeof SATURATION_OPTION_KEYS)[number], NumberRule> = {
  sampleIntervalMs: { min: 100, max: 60_000, integer: false, unit: "milliseconds" },
  windowSamples: { min: 3, max: 60, integer: true, unit: "samples" },
  warningLockoutMs: { min: 0, max: 86_400_000, integer: false, unit: "milliseconds" },
  unconsumedBodyMs: { min: 1, max: 86_400_000, integer: false, unit: "milliseconds" },
  stallAfterMs: { min: 1000, max: 86_400_000, integer: false, unit: "milliseconds" },
  maxOrigins: { min: 1, max: 100_000, integer: true, unit: "origins" },
};

/**
 * Validates `options` and fills in the defaults. Every bad value throws the one-line error of `invalidOption()`
 * (a `RangeError` for a number out of its range, else a `TypeError`).
 * @param prefix - the package named by the message (a handler passes its own for its `saturation` block).
 * @param path - put before each option's name in the message (`"saturation."` for a handler's block).
 * @internal
 */
export function resolvePoolMonitorOptions(
  options: PoolMonitorOptions | undefined,
  prefix: string = PKG,
  path = ""
): ResolvedPoolMonitorOptions {
  if (options === undefined || options === null) options = {};
  else if (typeof options !== "object" || Array.isArray(options)) {
    if (path !== "") throw invalidOption(prefix, path.slice(0, -1), options, "an object");
    throw new TypeError(`${prefix} - invalid options: ${describeValue(options)}; expected an object.`);
  }
  const logger = loggerOption<PoolMonitorLogger>(prefix, `${path}logger`, options.logger);
  const messagePrefix = options.messagePrefix ?? POOL_MONITOR_DEFAULTS.messagePrefix;
  if (typeof messagePrefix !== "string") {
    throw invalidOption(prefix, `${path}messagePrefix`, messagePrefix, "a string");
  }
  const resolved = {
    logger,
    messagePrefix,
    onSaturation: functionOption(prefix, `${path}onSaturation`, options.onSaturation),
    onRecovery: functionOption(prefix, `${path}onRecovery`, options.onRecovery),
  } as ResolvedPoolMonitorOptions;
  // Each number by its rule, in the order of SATURATION_OPTION_KEYS (the first bad one throws).
  for (const name of SATURATION_OPTION_KEYS) {
    const value: unknown = options[name];
    if (value === undefined) {
      resolved[name] = POOL_MONITOR_DEFAULTS[name];
      continue;
    }
    const { min, max, integer, unit } = NUMBER_RULES[name];
    if (
      typeof value !== "number" ||
      Number.isNaN(value) ||
      value < min ||
      value > max ||
      (integer && !Number.isInteger(value))
    ) {
      const kind = integer ? "an integer" : "a number";
      const ErrorType = typeof value === "number" ? RangeError : TypeError;
      throw invalidOption(prefix, path + name, value, `${kind} from ${min} to ${max} (${unit})`, ErrorType);
    }
    resolved[name] = value;
  }
  return resolved;
}

/**
 * Checks a handler's `saturation` block: an object (or `null`/`undefined`: unset) whose keys are all
 * {@link SATURATION_OPTION_KEYS} (a misspelt key would otherwise be ignored in silence), each valid by the monitor's
 * rules. Throws the one-line error naming `saturation.<key>` and the handler's package.
 * @internal
 */
export function checkSaturationBlock(saturation: unknown, prefix: string): void {
  if (saturation === undefined || saturation === null) return;
  if (typeof saturation !== "object" || Array.isArray(saturation)) {
    throw invalidOption(prefix, "saturation", saturation, "an object of saturation-detector options");
  }
  for (const key of Object.keys(saturation)) {
    if (!(SATURATION_OPTION_KEYS as readonly string[]).includes(key)) {
      throw new TypeError(
        `${prefix} - unknown option saturation.${key.slice(0, MAX_SHOWN_CHARS)}; saturation takes ${SATURATION_OPTION_KEYS.join(", ")}.`
      );
    }
  }
  resolvePoolMonitorOptions(saturation as SaturationOptions, prefix, "saturation.");
}

/**
 * A logger option: `null`/`undefined` = unset; else an object whose `warn`, if it has one, is a function (the
 * Smithy `Logger`, `console`, pino…). The rule `new PoolMonitor()` applies too.
 * @internal
 */
export function loggerOption<L extends object>(prefix: string, name: string, raw: unknown): L | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidOption(prefix, name, raw, "an object with a warn(message) method");
  }
  const warn = (raw as { warn?: unknown }).warn;
  if (warn !== undefined && typeof warn !== "function") throw invalidOption(prefix, `${name}.warn`, warn, "a function");
  return raw as L;
}

/** A callback option: `null`/`undefined` = unset (`undefined`); anything but a function throws. @internal */
export function functionOption<F>(prefix: string, name: string, raw: unknown): F | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== "function") throw invalidOption(prefix, name, raw, "a function");
  return raw as F;
}
