import { describeValue, MAX_SHOWN_CHARS } from "./invalid-option";
import { applyOptionRules, FUNCTION, LOGGER, type OptionRule } from "./option-rules";
import type { SaturationReport } from "./pool-stats";

/** Minimal logger: any object with an optional `warn` (the Smithy `Logger`, `console`, pino...). @public */
export interface PoolMonitorLogger {
  warn?: (message: string) => void;
}

/** Options of `PoolMonitor`. @public */
export interface PoolMonitorOptions {
  /**
   * Receives one `warn` line per saturation episode and per change of its cause (and a reminder every
   * `warningLockoutMs` while it lasts). @defaultValue none (no log output)
   */
  logger?: PoolMonitorLogger;
  /** Prefix of every log line. @defaultValue `"@sockeye/pool-monitor:WARN - "` */
  messagePrefix?: string;
  /**
   * Called on every transition into `saturated` or `stalled` and on every change of cause during an episode (not
   * rate-limited). A throwing callback is caught. @defaultValue none
   */
  onSaturation?: (report: SaturationReport) => void;
  /**
   * Called when a saturated or stalled origin has recovered: queue empty and sockets completing (or all released)
   * for `windowSamples` samples. A throwing callback is caught. @defaultValue none
   */
  onRecovery?: (report: SaturationReport) => void;
  /**
   * Sampling period in milliseconds: the interval of the standalone ticker, and the period at which an embedding
   * handler is expected to call `sample()`. Range 100–60000. @defaultValue 1000
   */
  sampleIntervalMs?: number;
  /**
   * K, the number of consecutive samples the detector looks at; K × sampleIntervalMs is the detection horizon.
   * Integer, range 3–60. @defaultValue 5
   */
  windowSamples?: number;
  /**
   * Minimum milliseconds between two log lines of the same cause for one origin, across episodes; a change of cause
   * is logged at once. Callbacks are not rate-limited. Range 0–86400000. @defaultValue 15000
   */
  warningLockoutMs?: number;
  /**
   * Milliseconds after which a response body handed to the caller and neither read nor destroyed counts as
   * "unconsumed" (after 2 × `sampleIntervalMs` if shorter, while requests of its origin queue). Range 1–86400000.
   * @defaultValue 10000
   */
  unconsumedBodyMs?: number;
  /**
   * Shortest stall deadline, milliseconds: with every socket busy, requests queued and nothing completing for
   * `windowSamples` samples, a request held this long is a stall (`no_progress`); before that it is reported as
   * `pool_capacity` (trigger `long_holds`). An origin whose requests normally hold longer gets 4 × that hold time.
   * Raise it for long polls over 30 s (e.g. Step Functions `GetActivityTask`, 60 s). Range 1000–86400000.
   * @defaultValue 30000
   */
  stallAfterMs?: number;
  /**
   * Maximum number of distinct origins tracked separately; later origins are aggregated under `"_OTHER"`.
   * Integer, range 1–100000. @defaultValue 256
   */
  maxOrigins?: number;
}

/**
 * The saturation detector's parameters: the subset of {@link PoolMonitorOptions} a handler takes as `saturation`.
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

/** The keys of {@link SaturationOptions}, e.g. to replace all of them at once with `configure()`. @public */
export const SATURATION_OPTION_KEYS = Object.keys(SATURATION_RULES) as readonly (keyof typeof SATURATION_RULES)[];

/** Every option with its default; the logger and the callbacks may be unset. @internal */
export type ResolvedPoolMonitorOptions = {
  [K in keyof PoolMonitorOptions]-?: K extends keyof typeof POOL_MONITOR_DEFAULTS
    ? NonNullable<PoolMonitorOptions[K]>
    : PoolMonitorOptions[K];
};

/** Defaults of every option. @public */
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
 * Validates `options` and fills in the defaults (`null` counts as unset); a bad value throws (`invalidOption()`).
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
 * A handler's `saturation` block: only {@link SATURATION_OPTION_KEYS} (a misspelt key throws), each by the
 * monitor's rules; errors name `saturation.<key>`. @internal
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
