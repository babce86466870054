/**
 * The one resolver of the options every Sockeye HTTP/1.1 handler shares (`NodeHttpHandler`, `UndiciHttpHandler`):
 * upstream's timeouts, `throwOnRequestTimeout`, `logger`, `httpAgent` / `httpsAgent` limits, and Sockeye's
 * `SharedHandlerOptions` (`socketMonitor`, `socketAcquisitionTimeout`, `idleSocketTimeout`, `connectionLifetime`,
 * `saturation.*`, `onSaturation`, `onRecovery`, `telemetry`). Each handler's resolver calls it first and then adds
 * only its own options (agents, dispatcher, …), so the same bad value fails the same way, in the same order, with
 * the same one-line message on each handler (only the package prefix differs).
 *
 * Cost: once per constructor / provider resolution; nothing per request.
 */
import { normalizeOptions } from "./normalize-options";
import type { SaturationOptions } from "./pool-monitor-options";
import type { SaturationReport } from "./pool-stats";
import { resolveSocketMonitorMode, type SocketMonitorMode } from "./socket-monitor-mode";

/**
 * Default `idleSocketTimeout`, ms: below Node.js servers' 5 s keep-alive timeout, and undici's own default (see the
 * option's docs).
 * @internal
 */
export const DEFAULT_IDLE_SOCKET_TIMEOUT_MS = 4000;

/**
 * The shared options, validated and normalised (`null` = unset, numeric strings converted). Millisecond values are
 * as given (`0` and `Infinity` kept): what they mean is each handler's decision.
 * @internal
 */
export interface ResolvedSharedOptions {
  connectionTimeout: number | undefined;
  requestTimeout: number | undefined;
  socketTimeout: number | undefined;
  socketAcquisitionWarningTimeout: number | undefined;
  socketAcquisitionTimeout: number | undefined;
  /** `DEFAULT_IDLE_SOCKET_TIMEOUT_MS` when unset. */
  idleSocketTimeout: number;
  connectionLifetime: number | undefined;
  /** The caller set a lifecycle limit (`idleSocketTimeout` / `connectionLifetime`) explicitly. */
  lifecycleExplicit: boolean;
  throwOnRequestTimeout: boolean | undefined;
  /** The caller's logger (an object; its `warn` is called guarded). */
  logger: object | undefined;
  /** The option, else `SOCKEYE_SOCKET_MONITOR`, else `"interval"`. */
  socketMonitor: SocketMonitorMode;
  saturation: SaturationOptions | undefined;
  /** `false` only when set to `false`. */
  telemetry: boolean;
  onSaturation: ((report: SaturationReport) => void) | undefined;
  onRecovery: ((report: SaturationReport) => void) | undefined;
  /** The service default idle timeout the SDK sets (`Symbol.for("@smithy/defaultSocketTimeout")`), see below. */
  defaultSocketTimeout: number | undefined;
}

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
 * Validates and resolves the shared options of `options` (an options object, `undefined` or `null`). Order of the
 * checks (the first bad value throws): the options themselves, the millisecond options, the booleans, the agents'
 * limits, `saturation` (its type, its keys, then each field by the rules `new PoolMonitor()` applies), the callbacks,
 * the logger (all by `normalizeOptions`), then `socketMonitor` (option, then environment). Every bad value throws a `TypeError`/`RangeError` naming the option and the value.
 * @param prefix - the package name starting every message, e.g. `@sockeye/node-http-handler`.
 * @returns `options`: a normalised copy of every option (the handler's own included, unchecked); `shared`: the shared
 * options resolved.
 * @internal
 */
export function resolveSharedOptions<T extends object>(
  options: T | null | undefined | void,
  prefix: string,
  env: NodeJS.ProcessEnv = process.env
): { options: T; shared: ResolvedSharedOptions } {
  const opts = normalizeOptions((options ?? {}) as T, prefix) as T & Record<string, unknown>;
  const socketMonitor = resolveSocketMonitorMode(opts.socketMonitor, env, prefix);
  const saturation = opts.saturation as SaturationOptions | undefined;
  const ms = opts as Record<string, number | undefined>;
  return {
    options: opts,
    shared: {
      connectionTimeout: ms.connectionTimeout,
      requestTimeout: ms.requestTimeout,
      socketTimeout: ms.socketTimeout,
      socketAcquisitionWarningTimeout: ms.socketAcquisitionWarningTimeout,
      socketAcquisitionTimeout: ms.socketAcquisitionTimeout,
      idleSocketTimeout: ms.idleSocketTimeout ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      connectionLifetime: ms.connectionLifetime,
      lifecycleExplicit: ms.idleSocketTimeout !== undefined || ms.connectionLifetime !== undefined,
      throwOnRequestTimeout: opts.throwOnRequestTimeout as boolean | undefined,
      logger: (opts.logger as object | undefined) ?? undefined,
      socketMonitor,
      saturation,
      telemetry: opts.telemetry !== false,
      onSaturation: opts.onSaturation as ResolvedSharedOptions["onSaturation"],
      onRecovery: opts.onRecovery as ResolvedSharedOptions["onRecovery"],
      defaultSocketTimeout: resolveDefaultSocketTimeout(opts),
    },
  };
}

/**
 * One option set at run time (`updateHttpClientConfig(name, value)`), checked and normalised by the rules
 * `resolveSharedOptions()` applies to the same option at construction (`socketMonitor` against the allowed modes,
 * the rest by `normalizeOptions`); a bad value throws the same one-line `TypeError`. Other names pass unchanged.
 * @returns the normalised value (`null` → `undefined`, a numeric string → its number).
 * @internal
 */
export function resolveSharedOption(name: string, value: unknown, prefix: string): unknown {
  if (name === "socketMonitor") resolveSocketMonitorMode(value, process.env, prefix);
  return (normalizeOptions({ [name]: value }, prefix) as Record<string, unknown>)[name];
}
