import type { Logger } from "@smithy/types";
import { POOL_MONITOR_DEFAULTS, PoolMonitor } from "@sockeye/pool-monitor";
import type { Agent, Dispatcher } from "undici";
import { type AgentConnectOptions, agentConnectOptions } from "./agent-connect-options";
import { DEFAULT_IDLE_SOCKET_TIMEOUT_MS, DEFAULT_MAX_SOCKETS, PACKAGE_PREFIX } from "./constants";
import type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";

/**
 * The handler's resolved configuration (what `httpHandlerConfigs()` returns after the first `handle()`).
 * @internal
 */
export interface ResolvedUndiciConfig {
  connectionTimeout?: number;
  requestTimeout?: number;
  throwOnRequestTimeout?: boolean;
  socketTimeout?: number;
  defaultSocketTimeout?: number;
  socketAcquisitionTimeout?: number;
  idleSocketTimeout: number;
  connectionLifetime?: number;
  logger?: Logger;
  socketMonitor: "interval" | "off";
  telemetry: boolean;
  /** Connections per origin for http: / https: origins; `null` = unlimited. */
  httpMaxSockets: number | null;
  httpsMaxSockets: number | null;
  /** `httpAgent` / `httpsAgent` TLS and connection options mapped to undici (see `agent-connect-options.ts`). */
  httpConnect: AgentConnectOptions;
  httpsConnect: AgentConnectOptions;
  /** A caller-supplied dispatcher instance. */
  dispatcher?: Dispatcher;
  /** Caller `Agent` options merged over the handler's. */
  dispatcherOptions?: Agent.Options;
  sampleIntervalMs: number;
  [key: string]: unknown;
}

const MS_OPTIONS = [
  "connectionTimeout",
  "requestTimeout",
  "socketTimeout",
  "socketAcquisitionWarningTimeout",
  "socketAcquisitionTimeout",
  "idleSocketTimeout",
  "connectionLifetime",
] as const;

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "object" && value !== null) return "an object";
  return String(value);
}

function invalid(name: string, value: unknown, expected: string): TypeError {
  return new TypeError(`${PACKAGE_PREFIX} - invalid option ${name}: ${show(value)}; expected ${expected}.`);
}

/**
 * Validates one millisecond option: `null`/`undefined` = unset, a numeric string is converted (environment
 * variables), anything else that is not a number `>= 0` throws a `TypeError` naming the option and the value.
 * @internal
 */
export function normalizeMs(name: string, value: unknown): number | undefined {
  if (value === null || value === undefined) return undefined;
  let n = value;
  if (typeof n === "string" && n.trim() !== "" && Number.isFinite(Number(n))) n = Number(n);
  if (typeof n !== "number" || !(n >= 0)) {
    throw invalid(name, value, "a number of milliseconds >= 0 (0 or undefined disables it)");
  }
  return n;
}

/** True for an undici `Dispatcher` or anything shaped like one (`dispatch`, `close`, `destroy`). @internal */
export function isDispatcher(value: unknown): value is Dispatcher {
  if (typeof value !== "object" || value === null) return false;
  const d = value as Record<string, unknown>;
  return typeof d.dispatch === "function" && typeof d.close === "function" && typeof d.destroy === "function";
}

function maxSocketsOf(name: string, agent: unknown): number | null {
  if (agent === undefined || agent === null) return DEFAULT_MAX_SOCKETS;
  if (typeof agent !== "object") throw invalid(name, agent, "an Agent instance or Agent options object");
  const value = (agent as { maxSockets?: unknown }).maxSockets;
  if (value === undefined) return DEFAULT_MAX_SOCKETS;
  if (value === Number.POSITIVE_INFINITY) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalid(`${name}.maxSockets`, value, "an integer >= 1 or Infinity");
  }
  return value;
}

/**
 * Resolves and validates options. Every bad value throws a `TypeError`/`RangeError` naming the option and the
 * value; `saturation.*` is validated by `@sockeye/pool-monitor`'s own rules.
 * @internal
 */
export function resolveUndiciConfig(options: UndiciHttpHandlerOptions | void | undefined): ResolvedUndiciConfig {
  if (options !== undefined && options !== null && typeof options !== "object") {
    throw new TypeError(`${PACKAGE_PREFIX} - invalid options: ${show(options)}; expected an options object.`);
  }
  const opts = (options ?? {}) as UndiciHttpHandlerOptions & Record<string, unknown>;
  const ms: Record<string, number | undefined> = {};
  for (const name of MS_OPTIONS) ms[name] = normalizeMs(name, opts[name]);

  const mode = opts.socketMonitor ?? process.env.SOCKEYE_SOCKET_MONITOR ?? "interval";
  if (mode !== "interval" && mode !== "off" && mode !== "per-request") {
    throw invalid("socketMonitor", mode, '"interval", "per-request" or "off"');
  }
  if (opts.telemetry !== undefined && typeof opts.telemetry !== "boolean") {
    throw invalid("telemetry", opts.telemetry, "a boolean");
  }
  if (opts.throwOnRequestTimeout !== undefined && typeof opts.throwOnRequestTimeout !== "boolean") {
    throw invalid("throwOnRequestTimeout", opts.throwOnRequestTimeout, "a boolean");
  }
  for (const name of ["onSaturation", "onRecovery"] as const) {
    if (opts[name] !== undefined && typeof opts[name] !== "function") throw invalid(name, opts[name], "a function");
  }
  if (opts.logger !== undefined && opts.logger !== null && typeof opts.logger !== "object") {
    throw invalid("logger", opts.logger, "an object with a warn() method");
  }
  if (opts.saturation !== undefined) {
    if (typeof opts.saturation !== "object" || opts.saturation === null) {
      throw invalid("saturation", opts.saturation, "an object");
    }
    // The monitor's constructor is the single source of the saturation rules; it throws naming the option.
    new PoolMonitor({ ...opts.saturation }).destroy();
  }
  const dispatcher = opts.dispatcher;
  if (dispatcher !== undefined && dispatcher !== null && typeof dispatcher !== "object") {
    throw invalid("dispatcher", dispatcher, "an undici Dispatcher or Agent options object");
  }
  return {
    ...opts,
    connectionTimeout: ms.connectionTimeout || undefined,
    requestTimeout: ms.requestTimeout || undefined,
    throwOnRequestTimeout: opts.throwOnRequestTimeout,
    socketTimeout: ms.socketTimeout,
    socketAcquisitionTimeout: ms.socketAcquisitionTimeout || undefined,
    idleSocketTimeout: ms.idleSocketTimeout ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
    connectionLifetime: ms.connectionLifetime || undefined,
    logger: opts.logger ?? undefined,
    socketMonitor: mode === "off" ? "off" : "interval",
    telemetry: opts.telemetry !== false,
    httpMaxSockets: maxSocketsOf("httpAgent", opts.httpAgent),
    httpsMaxSockets: maxSocketsOf("httpsAgent", opts.httpsAgent),
    httpConnect: agentConnectOptions("httpAgent", opts.httpAgent),
    httpsConnect: agentConnectOptions("httpsAgent", opts.httpsAgent),
    dispatcher: isDispatcher(dispatcher) ? dispatcher : undefined,
    dispatcherOptions: dispatcher && !isDispatcher(dispatcher) ? (dispatcher as Agent.Options) : undefined,
    sampleIntervalMs: opts.saturation?.sampleIntervalMs ?? POOL_MONITOR_DEFAULTS.sampleIntervalMs,
  };
}
