import type { Logger } from "@smithy/types";
import { invalidOption, normalizeOptions, resolveSocketMonitorMode } from "@sockeye/node-http-handler/internal";
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

/**
 * Validates one millisecond option as the constructor does (`null`/`undefined` = unset, a numeric string is
 * converted); a bad value throws a `TypeError` naming the option and the value.
 * @internal
 */
export function normalizeMs(name: string, value: unknown): number | undefined {
  return (normalizeOptions({ [name]: value }, PACKAGE_PREFIX) as Record<string, number | undefined>)[name];
}

/** True for an undici `Dispatcher` or anything shaped like one (`dispatch`, `close`, `destroy`). @internal */
export function isDispatcher(value: unknown): value is Dispatcher {
  if (typeof value !== "object" || value === null) return false;
  const d = value as Record<string, unknown>;
  return typeof d.dispatch === "function" && typeof d.close === "function" && typeof d.destroy === "function";
}

/** Connections per origin of `agent` (already validated by `normalizeOptions`): `null` = unlimited. */
function maxSocketsOf(agent: unknown): number | null {
  const value = (agent as { maxSockets?: unknown } | undefined)?.maxSockets;
  if (value === undefined || value === null) return DEFAULT_MAX_SOCKETS;
  return value === Number.POSITIVE_INFINITY ? null : (value as number);
}

/**
 * Resolves and validates options. Every bad value throws a `TypeError`/`RangeError` naming the option and the
 * value; `saturation.*` is validated by `@sockeye/pool-monitor`'s own rules.
 * @internal
 */
export function resolveUndiciConfig(options: UndiciHttpHandlerOptions | void | undefined): ResolvedUndiciConfig {
  // The rules NodeHttpHandler applies, from the same code, so a bad value fails the same way on both handlers.
  const opts = normalizeOptions((options ?? {}) as object, PACKAGE_PREFIX) as UndiciHttpHandlerOptions &
    Record<string, unknown>;
  const ms = opts as Record<string, number | undefined>;
  const mode = resolveSocketMonitorMode(opts.socketMonitor, process.env, PACKAGE_PREFIX);
  if (opts.saturation !== undefined) {
    // The monitor's constructor is the single source of the saturation rules; it throws naming the option.
    new PoolMonitor({ ...opts.saturation }).destroy();
  }
  const dispatcher = opts.dispatcher;
  if (
    dispatcher !== undefined &&
    dispatcher !== null &&
    (typeof dispatcher !== "object" || Array.isArray(dispatcher))
  ) {
    throw invalidOption(PACKAGE_PREFIX, "dispatcher", dispatcher, "an undici Dispatcher or Agent options object");
  }
  const dispatcherOptions = dispatcher && !isDispatcher(dispatcher) ? (dispatcher as Agent.Options) : undefined;
  let httpsConnect = agentConnectOptions("httpsAgent", opts.httpsAgent);
  if (dispatcherOptions?.allowH2 === true) {
    // The handler's pools connect through their own connector: ALPN offers h2 only when it is told to.
    httpsConnect = { ...httpsConnect, connect: { ...httpsConnect.connect, allowH2: true } };
  }
  return {
    ...opts,
    connectionTimeout: ms.connectionTimeout || undefined,
    requestTimeout: ms.requestTimeout || undefined,
    throwOnRequestTimeout: opts.throwOnRequestTimeout as boolean | undefined,
    socketTimeout: ms.socketTimeout,
    socketAcquisitionTimeout: ms.socketAcquisitionTimeout || undefined,
    idleSocketTimeout: ms.idleSocketTimeout ?? DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
    connectionLifetime: ms.connectionLifetime || undefined,
    logger: (opts.logger as Logger | undefined) ?? undefined,
    socketMonitor: mode === "off" ? "off" : "interval",
    telemetry: opts.telemetry !== false,
    httpMaxSockets: maxSocketsOf(opts.httpAgent),
    httpsMaxSockets: maxSocketsOf(opts.httpsAgent),
    httpConnect: agentConnectOptions("httpAgent", opts.httpAgent),
    httpsConnect,
    dispatcher: isDispatcher(dispatcher) ? dispatcher : undefined,
    dispatcherOptions,
    sampleIntervalMs:
      (opts.saturation as UndiciHttpHandlerOptions["saturation"])?.sampleIntervalMs ??
      POOL_MONITOR_DEFAULTS.sampleIntervalMs,
  };
}
