/** The steps every handler's `updateHttpClientConfig()` shares, and its monitor's options. Never per request. */
import { type AnySchema, checkOption, type OptionUpdate } from "./option-rules";
import type { PoolMonitorLogger, PoolMonitorOptions } from "./pool-monitor-options";
import type { SharedHandlerOptions } from "./shared-handler-options";
import { saturationFields } from "./telemetry-core";

/** `defaultSocketTimeout` counts only as a finite number > 0 (upstream's rule), else `undefined`. @internal */
export function resolveDefaultSocketTimeout(
  config: { defaultSocketTimeout?: unknown } | undefined | null
): number | undefined {
  const value = config?.defaultSocketTimeout;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * A copy of `options` with `updateHttpClientConfig(key, value)` applied: the SDK's `Symbol.for("logger")` and
 * `Symbol.for("@smithy/defaultSocketTimeout")` set `logger` / `defaultSocketTimeout` only while unset (as upstream);
 * any other key sets itself. The second step of every handler's update, after `checkHandlerUpdate()`. @internal
 */
export function withUpdate<T extends { logger?: unknown; defaultSocketTimeout?: unknown }>(
  options: T,
  key: string | symbol,
  value: unknown
): T {
  if (key === Symbol.for("logger")) {
    const logger = typeof (value as { warn?: unknown })?.warn === "function" ? value : undefined;
    return { ...options, logger: options.logger ?? logger };
  }
  if (key === Symbol.for("@smithy/defaultSocketTimeout")) {
    return { ...options, defaultSocketTimeout: resolveDefaultSocketTimeout(options) ?? value };
  }
  return { ...options, [key]: value };
}

/** The part of a handler's monitor an update reaches (`TelemetryCore.applyHandlerOption()`). */
interface UpdatableMonitor {
  applyHandlerOption(key: "saturation" | "onSaturation" | "onRecovery", value: unknown, prefix: string): void;
}

/**
 * The first step of every `updateHttpClientConfig(key, value)`: checks an option of `schema` (a bad value throws) and
 * applies a `"monitor"` option at once. Returns the value and its update kind (`undefined`: not in `schema`). @internal
 */
export function checkHandlerUpdate(
  schema: object,
  key: string | symbol,
  value: unknown,
  prefix: string,
  monitor: UpdatableMonitor | undefined
): { value: unknown; update: OptionUpdate | undefined } {
  const spec = typeof key === "string" && Object.hasOwn(schema, key) ? (schema as AnySchema)[key] : undefined;
  if (spec === undefined) return { value, update: undefined };
  const checked = checkOption(spec[0], value, prefix, key as string, spec[3] !== undefined);
  if (spec[1] === "monitor") monitor?.applyHandlerOption(key as "saturation", checked, prefix);
  return { value: checked, update: spec[1] };
}

/**
 * The options a handler gives its monitor; the logger is asked for at warning time (the SDK hands its own over late).
 * @param options - the handler's resolved options, or nothing (every default). @internal
 */
export function handlerMonitorOptions(
  options: Pick<SharedHandlerOptions, "saturation" | "onSaturation" | "onRecovery"> | null | undefined | void,
  prefix: string,
  logger: () => PoolMonitorLogger | undefined
): PoolMonitorOptions {
  return {
    ...saturationFields(options?.saturation as Record<string, unknown> | undefined),
    onSaturation: options?.onSaturation,
    onRecovery: options?.onRecovery,
    messagePrefix: `${prefix}:WARN - `,
    logger: { warn: (message: string) => (logger() ?? console).warn?.(message) },
  };
}
