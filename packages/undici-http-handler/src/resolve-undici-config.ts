import type { Logger } from "@smithy/types";
import {
  type AllSharedOptions,
  type OptionSchema,
  invalidOption,
  objectRule,
  type ResolvedSharedOptions,
  resolveOptions,
  SHARED_OPTIONS,
} from "@sockeye/pool-monitor/internal";
import type { Agent, Dispatcher } from "undici";
import { type AgentConnectOptions, agentConnectOptions } from "./agent-connect-options";
import { DEFAULT_MAX_SOCKETS, PACKAGE_PREFIX } from "./constants";
import type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";

/** The handler's resolved configuration (what `httpHandlerConfigs()` returns). @internal */
export type ResolvedUndiciConfig = Omit<ResolvedSharedOptions, "logger" | "socketMonitor" | "dispatcher"> & {
  defaultSocketTimeout?: number;
  logger?: Logger;
  socketMonitor: "interval" | "off";
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
};

/** True for an undici `Dispatcher` or anything shaped like one (`dispatch`, `close`, `destroy`). @internal */
export function isDispatcher(value: unknown): value is Dispatcher {
  if (typeof value !== "object" || value === null) return false;
  const d = value as Record<string, unknown>;
  return typeof d.dispatch === "function" && typeof d.close === "function" && typeof d.destroy === "function";
}

/**
 * The one-line error for a `maxQueuedRequests` bound on a dispatcher the handler does not own (a caller's instance,
 * or the global one the user set), which queues in undici where the bound cannot reach; `undefined` when unbounded.
 * @internal
 */
export function unboundedQueueError(max: number | undefined, owner: "caller" | "global"): Error | undefined {
  if (max === undefined || max === Number.POSITIVE_INFINITY) return undefined;
  return invalidOption(
    PACKAGE_PREFIX,
    "maxQueuedRequests",
    max,
    owner === "caller"
      ? "no bound with a caller's dispatcher (its queue is undici's): pass Agent options as `dispatcher` instead"
      : "no bound while requests go through the global dispatcher the user set (setGlobalDispatcher; its queue is undici's): bound that dispatcher, or pass Agent options as `dispatcher`"
  );
}

/** Connections per origin of `agent` (already validated): `null` = unlimited. */
function maxSocketsOf(agent: unknown): number | null {
  const value = (agent as { maxSockets?: unknown } | undefined)?.maxSockets;
  if (value === undefined || value === null) return DEFAULT_MAX_SOCKETS;
  return value === Number.POSITIVE_INFINITY ? null : (value as number);
}

/** Every option of the handler, in the order they are checked: the shared ones, then its own. @internal */
export const UNDICI_OPTIONS = {
  ...SHARED_OPTIONS,
  ...({
    dispatcher: [/* @__PURE__ */ objectRule("an undici Dispatcher or Agent options object"), "pool", undefined],
  } as const satisfies OptionSchema<Omit<UndiciHttpHandlerOptions, keyof AllSharedOptions>>),
};

/** Timeouts where 0 means off (left `undefined`: undici's timers take no 0). */
const OFF_WHEN_ZERO = [
  "connectionTimeout",
  "requestTimeout",
  "socketAcquisitionTimeout",
  "connectionLifetime",
] as const;

/** Resolves and validates options; a bad value throws a `TypeError`/`RangeError` naming it. @internal */
export function resolveUndiciConfig(options: UndiciHttpHandlerOptions | void | undefined): ResolvedUndiciConfig {
  const opts = resolveOptions(UNDICI_OPTIONS, options, PACKAGE_PREFIX) as unknown as ResolvedSharedOptions & {
    dispatcher: unknown;
  };
  const dispatcher = opts.dispatcher;
  const unbounded = isDispatcher(dispatcher) ? unboundedQueueError(opts.maxQueuedRequests, "caller") : undefined;
  if (unbounded !== undefined) throw unbounded;
  const dispatcherOptions = dispatcher && !isDispatcher(dispatcher) ? (dispatcher as Agent.Options) : undefined;
  let httpsConnect = agentConnectOptions("httpsAgent", opts.httpsAgent);
  if (dispatcherOptions?.allowH2 === true) {
    // The handler's pools connect through their own connector: ALPN offers h2 only when it is told to.
    httpsConnect = { ...httpsConnect, connect: { ...httpsConnect.connect, allowH2: true } };
  }
  const resolved: ResolvedUndiciConfig = {
    ...(opts as Omit<typeof opts, "logger"> & { logger?: Logger }),
    // "per-request" has no undici equivalent: it samples as "interval" (the handler warns once).
    socketMonitor: opts.socketMonitor === "off" ? "off" : "interval",
    httpMaxSockets: maxSocketsOf(opts.httpAgent),
    httpsMaxSockets: maxSocketsOf(opts.httpsAgent),
    httpConnect: agentConnectOptions("httpAgent", opts.httpAgent),
    httpsConnect,
    dispatcher: isDispatcher(dispatcher) ? dispatcher : undefined,
    dispatcherOptions,
  };
  for (const key of OFF_WHEN_ZERO) resolved[key] ||= undefined;
  return resolved;
}
