/**
 * The one resolver of the options the handlers share (`SHARED_OPTIONS`): each handler's resolver calls it first and
 * then adds only what its own options mean, so the same bad value fails the same way, in the same order, with the
 * same one-line message on each handler (only the package prefix differs). With it, the steps every handler's
 * `updateHttpClientConfig()` shares: `checkHandlerUpdate()` (the option checked by the same rule, a monitor option
 * applied at once) and `configEntry()` (the SDK's symbol keys).
 *
 * Cost: once per constructor / provider resolution / update; nothing per request.
 */
import { type AnySchema, checkOption, type OptionUpdate, resolveOptions } from "./option-rules";
import type { PoolMonitorLogger, PoolMonitorOptions } from "./pool-monitor-options";
import { type ResolvedSharedOptions, SHARED_OPTIONS, type SharedHandlerOptions } from "./shared-handler-options";
import { saturationFields } from "./telemetry-core";

export type { ResolvedSharedOptions } from "./shared-handler-options";
export { DEFAULT_IDLE_SOCKET_TIMEOUT_MS } from "./shared-handler-options";

/**
 * `defaultSocketTimeout` counts only as a finite number > 0 (upstream's rule), else `undefined`.
 * @internal
 */
export function resolveDefaultSocketTimeout(
  config: { defaultSocketTimeout?: unknown } | undefined | null
): number | undefined {
  const value = config?.defaultSocketTimeout;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * The config entry an `updateHttpClientConfig(key, value)` sets, as upstream: `Symbol.for("logger")` (the client's
 * logger) sets `logger` unless `config` has one (and only to an object with a `warn` function);
 * `Symbol.for("@smithy/defaultSocketTimeout")` sets `defaultSocketTimeout` unless `config` has a valid one; any
 * other key sets itself to `value`.
 * @internal
 */
export function configEntry(
  config: { logger?: unknown; defaultSocketTimeout?: unknown },
  key: string | symbol,
  value: unknown
): [name: string | symbol, value: unknown] {
  if (key === Symbol.for("logger")) {
    return ["logger", config.logger ?? (typeof (value as { warn?: unknown })?.warn === "function" ? value : undefined)];
  }
  if (key === Symbol.for("@smithy/defaultSocketTimeout")) {
    return ["defaultSocketTimeout", resolveDefaultSocketTimeout(config) ?? value];
  }
  return [key, value];
}

/**
 * Validates and resolves the shared options of `options` (an options object, `undefined` or `null`), in the order
 * of `SHARED_OPTIONS`; `socketMonitor` falls back to `SOCKEYE_SOCKET_MONITOR` of `env`. Every bad value throws a
 * `TypeError`/`RangeError` naming the option (or the variable) and the value.
 * @param prefix - the package name starting every message, e.g. `@sockeye/node-http-handler`.
 * @returns a normalised copy of every option (the handler's own included, unchecked) with the shared options
 * resolved.
 * @internal
 */
export function resolveSharedOptions<T extends object>(
  options: T | null | undefined | void,
  prefix: string,
  env: NodeJS.ProcessEnv = process.env
): T & ResolvedSharedOptions {
  return resolveOptions(SHARED_OPTIONS, options, prefix, env) as unknown as T & ResolvedSharedOptions;
}

/** The part of a handler's monitor an update reaches (`TelemetryCore.applyHandlerOption()`). */
interface UpdatableMonitor {
  applyHandlerOption(key: "saturation" | "onSaturation" | "onRecovery", value: unknown, prefix: string): void;
}

/**
 * The first step of every handler's `updateHttpClientConfig(key, value)`: an option of `schema` is checked by its
 * rule (a bad value throws the constructor's one-line error, and nothing has changed), and one whose `update` is
 * `"monitor"` is applied to `monitor` at once.
 * @returns the normalised value and what the option's update does (`undefined` for a symbol or a name `schema`
 * does not have: the value passes unchanged).
 * @internal
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
 * The options a handler gives its monitor: its `saturation` block (fields it leaves out at their defaults), its
 * callbacks, its message prefix, and a logger that asks `logger()` at warning time (the SDK hands its logger over
 * after construction; `console` when there is none).
 * @param options - the handler's resolved options (`null` already unset), or nothing (every default).
 * @internal
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
