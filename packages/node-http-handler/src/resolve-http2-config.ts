import {
  ALL_HANDLERS_OPTIONS,
  BOOLEAN,
  COUNT,
  type Http2SharedOption,
  LOGGER,
  MS,
  type OptionSchema,
  objectRule,
  type ResolvedOptions,
  resolveDefaultSocketTimeout,
  resolveOptions,
} from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";
import type { NodeHttp2HandlerOptions } from "./node-http2-handler-options";

/** The options only this handler has, in the order they are checked (before the shared ones). */
const HTTP2_OWN_OPTIONS = {
  requestTimeout: [MS, "request", undefined],
  sessionTimeout: [MS, "pool", undefined],
  connectionTimeout: [MS, "pool", undefined],
  disableConcurrentStreams: [BOOLEAN, "request", false],
  // `Infinity`: the peer's limit only.
  maxConcurrentStreams: [COUNT, "pool", Number.POSITIVE_INFINITY],
  maxSessionsPerOrigin: [COUNT, "pool", 4],
  // The HTTP/1.1 handler's default `maxSockets`.
  maxIsolatedSessionsPerOrigin: [COUNT, "pool", 50],
  nodeHttp2ConnectOptions: [/* @__PURE__ */ objectRule("an object of http2.connect() options"), "pool", undefined],
  logger: [LOGGER, "request", undefined],
} as const satisfies OptionSchema<Omit<NodeHttp2HandlerOptions, Http2SharedOption>>;

/** Every option of the handler, in the order they are checked. @internal */
export const HTTP2_OPTIONS = { ...HTTP2_OWN_OPTIONS, ...ALL_HANDLERS_OPTIONS };

/** The validated HTTP/2 config with defaults; `options` keeps what the caller gave. @internal */
export type ResolvedHttp2Config = ResolvedOptions<NodeHttp2HandlerOptions, typeof HTTP2_OPTIONS> & {
  options: NodeHttp2HandlerOptions & { defaultSocketTimeout?: number };
  /** Service default idle timeout (`Symbol.for("@smithy/defaultSocketTimeout")`), used when no timeout is set. */
  defaultSocketTimeout: number | undefined;
};

/** A millisecond option as this handler reads it: `0` and `Infinity` mean off. */
const ms = (value: number | undefined): number | undefined =>
  value === 0 || value === Number.POSITIVE_INFINITY ? undefined : value;

/** Validates `options` and resolves every default; the first bad option throws a `TypeError`. @internal */
export function resolveHttp2Config(options: NodeHttp2HandlerOptions | undefined | null | void): ResolvedHttp2Config {
  const raw = (options ?? {}) as Record<string, unknown>;
  // Upstream treats 0 as "unset" for maxConcurrentStreams; keep that, and reject what it would reject later.
  const given =
    options != null && raw.maxConcurrentStreams === 0 ? { ...raw, maxConcurrentStreams: undefined } : options;
  const config = resolveOptions(HTTP2_OPTIONS, given, PACKAGE_PREFIX) as unknown as ResolvedHttp2Config;
  const defaultSocketTimeout = resolveDefaultSocketTimeout(raw);
  return {
    ...config,
    options: { ...(raw as NodeHttp2HandlerOptions), defaultSocketTimeout },
    sessionTimeout: ms(config.sessionTimeout),
    connectionTimeout: ms(config.connectionTimeout),
    defaultSocketTimeout,
  };
}
