/**
 * The one resolver of the options every Sockeye HTTP/1.1 handler shares (`NodeHttpHandler`, `UndiciHttpHandler`):
 * upstream's timeouts, `throwOnRequestTimeout`, `logger`, `httpAgent` / `httpsAgent` limits, and Sockeye's
 * `SharedHandlerOptions` (`socketMonitor`, `socketAcquisitionTimeout`, `idleSocketTimeout`, `connectionLifetime`,
 * `saturation.*`, `onSaturation`, `onRecovery`, `telemetry`), as one table of option rules (option-rules.ts). Each
 * handler's resolver calls it first and then adds only its own options (agents, dispatcher, …), so the same bad value
 * fails the same way, in the same order, with the same one-line message on each handler (only the package prefix
 * differs); `NodeHttp2Handler` applies the rows it shares (`MONITOR_OPTION_RULES`, `MS`) in its own table.
 *
 * Cost: once per constructor / provider resolution; nothing per request.
 */
import { describeValue } from "./invalid-option";
import { applyOptionRules, BOOLEAN, COUNT, countRule, MS, type OptionRule, type OptionRules } from "./option-rules";
import { MONITOR_OPTION_RULES, type SaturationOptions } from "./pool-monitor-options";
import type { SaturationReport } from "./pool-stats";
import { resolveSocketMonitorMode, type SocketMonitorMode } from "./socket-monitor-mode";

/**
 * Default `idleSocketTimeout`, ms: below Node.js servers' 5 s keep-alive timeout, and undici's own default (see the
 * option's docs).
 * @internal
 */
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
 * An Agent instance was built by its class, which validated its own options; its `maxSockets` is still read (Node's
 * `Agent` accepts -5, and then never hands out a socket). An object counts as an instance when it has a `destroy`
 * function (proxy agents).
 */
const AGENT_INSTANCE_RULES: OptionRules = { maxSockets: COUNT };

/** `httpAgent` / `httpsAgent`: an Agent instance or an Agent options object, by the rules above. */
const AGENT: OptionRule = [
  (agent, prefix, name) =>
    typeof agent === "object" &&
    applyOptionRules(
      typeof agent.destroy === "function" ? AGENT_INSTANCE_RULES : AGENT_OPTION_RULES,
      agent,
      prefix,
      `${name}.`
    ),
  "an Agent instance or Agent options object",
];

/**
 * The options the HTTP/1.1 handlers share besides `MONITOR_OPTION_RULES`, in the order they are checked (the
 * monitor's next, then `socketMonitor`).
 */
const SHARED_OPTION_RULES: OptionRules = {
  connectionTimeout: MS,
  requestTimeout: MS,
  socketTimeout: MS,
  socketAcquisitionWarningTimeout: MS,
  socketAcquisitionTimeout: MS,
  idleSocketTimeout: MS,
  connectionLifetime: MS,
  throwOnRequestTimeout: BOOLEAN,
  httpAgent: AGENT,
  httpsAgent: AGENT,
};

/** `options` checked by the shared rules: the HTTP/1.1 handlers' (`SHARED_OPTION_RULES`), then the monitor's. */
function applySharedRules(options: object | null | undefined | void, prefix: string): Record<string, unknown> {
  return applyOptionRules(MONITOR_OPTION_RULES, applyOptionRules(SHARED_OPTION_RULES, options, prefix), prefix);
}

/**
 * The shared options, validated and normalised (`null` = unset, numeric strings converted), over a copy of every
 * option given (the handler's own included, unchecked). Millisecond values are as given (`0` and `Infinity` kept):
 * what they mean is each handler's decision.
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
 * checks (the first bad value throws): the options themselves, then the table's rows: the millisecond options,
 * `throwOnRequestTimeout`, the agents' limits, `telemetry`, `saturation` (its type, its keys, then each field by the
 * rules `new PoolMonitor()` applies), the callbacks, the logger; then `socketMonitor` (option, then environment).
 * Every bad value throws a `TypeError`/`RangeError` naming the option and the value.
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
  if (options != null && typeof options !== "object") {
    throw new TypeError(
      `${prefix} - invalid options: ${describeValue(options)}; expected an options object or a provider function.`
    );
  }
  const opts = applySharedRules(options, prefix);
  opts.socketMonitor = resolveSocketMonitorMode(opts.socketMonitor, env, prefix);
  opts.idleSocketTimeout ??= DEFAULT_IDLE_SOCKET_TIMEOUT_MS;
  opts.telemetry = opts.telemetry !== false;
  return opts as T & ResolvedSharedOptions;
}

/**
 * One option set at run time (`updateHttpClientConfig(name, value)`), checked and normalised by the rules
 * `resolveSharedOptions()` applies to the same option at construction (`socketMonitor` against the allowed modes,
 * the rest by the table); a bad value throws the same one-line error. Other names pass unchanged.
 * @returns the normalised value (`null` → `undefined`, a numeric string → its number).
 * @internal
 */
export function resolveSharedOption(name: string, value: unknown, prefix: string): unknown {
  if (name === "socketMonitor") resolveSocketMonitorMode(value, process.env, prefix);
  return applySharedRules({ [name]: value }, prefix)[name];
}
