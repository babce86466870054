/**
 * The option rules every Sockeye handler applies (`NodeHttpHandler`, `UndiciHttpHandler`; `NodeHttp2Handler` for the
 * options it shares), in one place so that the same bad value fails the same way with the same one-line message on
 * each (only the package prefix differs). `null` counts as unset for every option (JSON-built configs) except
 * `socketMonitor` (see socket-monitor-mode.ts). `resolveSharedOptions()` (resolve-shared-options.ts) applies them.
 *
 * Cost: once per constructor / provider resolution / `updateHttpClientConfig()`; nothing per request.
 */

import { describeValue, invalidOption } from "./invalid-option";
import { checkSaturationBlock, functionOption, loggerOption } from "./pool-monitor-options";

const MS_OPTIONS = [
  "connectionTimeout",
  "requestTimeout",
  "socketTimeout",
  "socketAcquisitionWarningTimeout",
  "socketAcquisitionTimeout",
  "idleSocketTimeout",
  "connectionLifetime",
] as const;

const SOCKET_COUNT = "an integer >= 1 or Infinity";
const AGENT_MS = "a number of milliseconds >= 0";

/** Numeric `http.Agent` options: the rule each must satisfy (an options object's, or an instance's). */
const AGENT_NUMBERS: Record<string, { integer: boolean; min: number; expected: string }> = {
  maxSockets: { integer: true, min: 1, expected: SOCKET_COUNT },
  maxTotalSockets: { integer: true, min: 1, expected: SOCKET_COUNT },
  maxFreeSockets: { integer: true, min: 0, expected: "an integer >= 0 or Infinity" },
  timeout: { integer: false, min: 0, expected: AGENT_MS },
  keepAliveMsecs: { integer: false, min: 0, expected: AGENT_MS },
};

/** The expectation every millisecond option's message states. @internal */
export const MS_EXPECTED = "a number of milliseconds >= 0 (0 or undefined disables it)";

/**
 * One millisecond option: `null`/`undefined` = unset (`undefined`); a numeric string (e.g. from an environment
 * variable) is converted; anything else that is not a number >= 0 (NaN, negative, `"5s"`) throws a `TypeError` naming
 * the option and the value. `0` and `Infinity` are returned as given (each handler decides what they mean).
 * @internal
 */
export function msOption(prefix: string, name: string, raw: unknown): number | undefined {
  let value = raw;
  if (value === null) value = undefined;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) value = Number(value);
  if (value !== undefined && (typeof value !== "number" || !(value >= 0))) {
    throw invalidOption(prefix, name, raw, MS_EXPECTED);
  }
  return value as number | undefined;
}

/**
 * A boolean option: `null`/`undefined` = unset (`undefined`); anything but `true`/`false` throws (upstream treats any
 * truthy value as true, so `"false"` would mean true: a clear error is safer than guessing).
 * @internal
 */
export function booleanOption(prefix: string, name: string, raw: unknown): boolean | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw !== "boolean") throw invalidOption(prefix, name, raw, "a boolean (true or false)");
  return raw;
}

function checkAgent(prefix: string, name: string, agent: object): void {
  // An instance was built by its class, which validated its own options; its `maxSockets` is still read (Node's
  // `Agent` accepts -5, and then never hands out a socket).
  const instance = typeof (agent as { destroy?: unknown }).destroy === "function";
  for (const [key, rule] of Object.entries(AGENT_NUMBERS)) {
    if (instance && key !== "maxSockets") continue;
    const value = (agent as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (value === Number.POSITIVE_INFINITY && rule.integer) continue;
    const ok =
      typeof value === "number" &&
      value >= rule.min &&
      (rule.integer ? Number.isInteger(value) : Number.isFinite(value) || value === Number.POSITIVE_INFINITY);
    if (!ok) throw invalidOption(prefix, `${name}.${key}`, value, rule.expected);
  }
  if (instance) return;
  booleanOption(prefix, `${name}.keepAlive`, (agent as { keepAlive?: unknown }).keepAlive);
  const scheduling = (agent as { scheduling?: unknown }).scheduling;
  if (scheduling !== undefined && scheduling !== null && scheduling !== "fifo" && scheduling !== "lifo") {
    throw invalidOption(prefix, `${name}.scheduling`, scheduling, '"fifo" or "lifo"');
  }
}

/**
 * Normalises and checks the options shared by the HTTP/1.1 handlers, returning a copy: `null` counts as unset; a
 * numeric string (e.g. from an environment variable) is converted for the millisecond options, as upstream's timers
 * would coerce it; anything else that is not a number >= 0 (NaN, negative, `"5s"`) throws. `throwOnRequestTimeout`
 * and `telemetry` must be booleans (upstream's truthiness would make `"false"` true); `httpAgent` / `httpsAgent` an
 * Agent instance or options object whose numeric limits are sane (`maxSockets: -5` would queue every request
 * forever on `node:http`); `saturation` an object of known keys, each field by the monitor's rules
 * (`checkSaturationBlock()`); `onSaturation` / `onRecovery` functions; `logger` an object whose `warn`, if any, is a
 * function; the options themselves an object. Every bad value throws the one-line error of `invalidOption()`
 * (`RangeError` for a `saturation` number out of range, else `TypeError`) naming the option and the value.
 * @param prefix - the package name starting every message.
 * @internal
 */
export function normalizeOptions<T extends object>(options: T, prefix: string): T {
  if (options !== undefined && options !== null && typeof options !== "object") {
    throw new TypeError(
      `${prefix} - invalid options: ${describeValue(options)}; expected an options object or a provider function.`
    );
  }
  const out: Record<string, unknown> = { ...(options as Record<string, unknown>) };
  for (const name of MS_OPTIONS) {
    const value = msOption(prefix, name, out[name]);
    if (name in out) out[name] = value;
  }
  for (const name of ["throwOnRequestTimeout", "telemetry"]) {
    const value = booleanOption(prefix, name, out[name]);
    if (name in out) out[name] = value;
  }
  for (const name of ["httpAgent", "httpsAgent"]) {
    const value = out[name];
    if (value === null) out[name] = undefined;
    else if (value !== undefined) {
      if (typeof value !== "object") {
        throw invalidOption(prefix, name, value, "an Agent instance or Agent options object");
      }
      checkAgent(prefix, name, value);
    }
  }
  if (out.saturation === null) out.saturation = undefined;
  else checkSaturationBlock(out.saturation, prefix);
  for (const name of ["onSaturation", "onRecovery"]) {
    const value = functionOption(prefix, name, out[name]);
    if (name in out) out[name] = value;
  }
  if ("logger" in out) out.logger = loggerOption(prefix, "logger", out.logger);
  return out as T;
}
