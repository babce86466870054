/**
 * `PoolMonitor` options, their defaults and validation.
 *
 * Validation runs in the constructor and in `PoolMonitor.configure()`; bad input throws a `TypeError`
 * or `RangeError` whose message names the option, the received value and the allowed range.
 */
import { describeValue, MAX_SHOWN_CHARS } from "./invalid-option";
import { applyOptionRules, FUNCTION, LOGGER, type OptionRule } from "./option-rules";
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

const MILLISECONDS = "milliseconds";
const DAY_MS = 86_400_000;

/** A number from `min` to `max` in `unit`; an integer unless the unit is milliseconds. */
function rangeRule(min: number, max: number, unit: string): OptionRule {
  const integer = unit !== MILLISECONDS;
  return [
    (value) => typeof value === "number" && value >= min && value <= max && (!integer || Number.isInteger(value)),
    `${integer ? "an integer" : "a number"} from ${min} to ${max} (${unit})`,
    true,
  ];
}

/** The saturation detector's numbers (`SaturationOptions`), in the order they are checked. */
const SATURATION_RULES = {
  sampleIntervalMs: rangeRule(100, 60_000, MILLISECONDS),
  windowSamples: rangeRule(3, 60, "samples"),
  warningLockoutMs: rangeRule(0, DAY_MS, MILLISECONDS),
  unconsumedBodyMs: rangeRule(1, DAY_MS, MILLISECONDS),
  stallAfterMs: rangeRule(1000, DAY_MS, MILLISECONDS),
  maxOrigins: rangeRule(1, 100_000, "origins"),
} satisfies { readonly [K in keyof PoolMonitorOptions]?: OptionRule };

/**
 * The keys of {@link SaturationOptions}, e.g. to replace all of them at once with `configure()`.
 * @public
 */
export const SATURATION_OPTION_KEYS = Object.keys(SATURATION_RULES) as unknown as readonly [
  "sampleIntervalMs",
  "windowSamples",
  "warningLockoutMs",
  "unconsumedBodyMs",
  "stallAfterMs",
  "maxOrigins",
];

/** Every option with its default; the logger and the callbacks may be unset. @internal */
export type ResolvedPoolMonitorOptions = {
  [K in keyof PoolMonitorOptions]-?: K extends keyof typeof POOL_MONITOR_DEFAULTS
    ? NonNullable<PoolMonitorOptions[K]>
    : PoolMonitorOptions[K];
};

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
/** The monitor's options, in the order they are checked. */
const MONITOR_RULES = {
  logger: LOGGER,
  messagePrefix: [(value) => typeof value === "string", "a string"],
  onSaturation: FUNCTION,
  onRecovery: FUNCTION,
  ...SATURATION_RULES,
} satisfies { readonly [K in keyof PoolMonitorOptions]-?: OptionRule };

/**
 * Validates `options` and fills in the defaults (`null` counts as unset). Every bad value throws the one-line error
 * of `invalidOption()` (a `RangeError` for a number out of its range, else a `TypeError`).
 * @param prefix - the package named by the message (a handler passes its own for its `saturation` block).
 * @param path - put before each option's name in the message (`"saturation."` for a handler's block).
 * @internal
 */
export function resolvePoolMonitorOptions(
  options: PoolMonitorOptions | undefined,
  prefix: string = PKG,
  path = ""
): ResolvedPoolMonitorOptions {
  if (options != null && (typeof options !== "object" || Array.isArray(options))) {
    throw new TypeError(`${prefix} - invalid options: ${describeValue(options)}; expected an object.`);
  }
  const resolved = applyOptionRules(MONITOR_RULES, options, prefix, path);
  for (const name in POOL_MONITOR_DEFAULTS) {
    resolved[name] ??= POOL_MONITOR_DEFAULTS[name as keyof typeof POOL_MONITOR_DEFAULTS];
  }
  return resolved as unknown as ResolvedPoolMonitorOptions;
}

/**
 * A handler's `saturation` block: an object whose keys are all {@link SATURATION_OPTION_KEYS} (a misspelt key would
 * otherwise be ignored in silence), each valid by the monitor's rules; the errors name `saturation.<key>` and the
 * handler's package.
 * @internal
 */
export const SATURATION: OptionRule = [
  (block: object, prefix) => {
    if (typeof block !== "object" || Array.isArray(block)) return false;
    for (const key in block) {
      if (!(SATURATION_OPTION_KEYS as readonly string[]).includes(key)) {
        throw new TypeError(
          `${prefix} - unknown option saturation.${key.slice(0, MAX_SHOWN_CHARS)}; saturation takes ${SATURATION_OPTION_KEYS.join(", ")}.`
        );
      }
    }
    return resolvePoolMonitorOptions(block, prefix, "saturation.");
  },
  "an object of saturation-detector options",
];
