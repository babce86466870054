import type { Logger } from "@smithy/types";
import type { SaturationOptions, SaturationReport, SocketMonitorMode } from "@sockeye/pool-monitor";
import {
  applyOptionRules,
  BOOLEAN,
  COUNT,
  describeValue,
  MONITOR_OPTION_RULES,
  MS,
  type OptionRules,
  objectRule,
  resolveDefaultSocketTimeout,
  resolveSocketMonitorMode,
} from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";
import type { NodeHttp2HandlerOptions } from "./node-http2-handler-options";

/** Default `maxSessionsPerOrigin`. @internal */
export const DEFAULT_MAX_SESSIONS_PER_ORIGIN = 4;

/** Default `maxIsolatedSessionsPerOrigin` (the HTTP/1.1 handler's default `maxSockets`). @internal */
export const DEFAULT_MAX_ISOLATED_SESSIONS_PER_ORIGIN = 50;

/**
 * The validated, normalised HTTP/2 config. `options` keeps what the caller gave (plus `defaultSocketTimeout`), as
 * `httpHandlerConfigs()` returns it.
 * @internal
 */
export interface ResolvedHttp2Config {
  options: NodeHttp2HandlerOptions & { defaultSocketTimeout?: number };
  requestTimeout: number | undefined;
  sessionTimeout: number | undefined;
  connectionTimeout: number | undefined;
  /** Service default idle timeout (`Symbol.for("@smithy/defaultSocketTimeout")`), used when no timeout is set. */
  defaultSocketTimeout: number | undefined;
  disableConcurrentStreams: boolean;
  /** Client-side stream cap per session; `Infinity` = the peer's limit only. */
  maxConcurrentStreams: number;
  maxSessionsPerOrigin: number;
  /** Bound on isolated sessions of non-event-stream requests per origin. */
  maxIsolatedSessionsPerOrigin: number;
  telemetry: boolean;
  mode: SocketMonitorMode;
  logger: Logger | undefined;
  onSaturation: ((report: SaturationReport) => void) | undefined;
  onRecovery: ((report: SaturationReport) => void) | undefined;
  /** Saturation-detector options (validated by the monitor). */
  saturation: SaturationOptions | undefined;
}

/**
 * The handler's own options, in the order they are checked; then come the ones every handler shares with its monitor
 * (`MONITOR_OPTION_RULES` of `@sockeye/pool-monitor`, same messages), then `socketMonitor`.
 */
const HTTP2_OPTION_RULES: OptionRules = {
  requestTimeout: MS,
  sessionTimeout: MS,
  connectionTimeout: MS,
  disableConcurrentStreams: BOOLEAN,
  maxConcurrentStreams: COUNT,
  maxSessionsPerOrigin: COUNT,
  maxIsolatedSessionsPerOrigin: COUNT,
  nodeHttp2ConnectOptions: /* @__PURE__ */ objectRule("an object of http2.connect() options"),
};

/** A millisecond option as this handler reads it: `0` and `Infinity` mean off. */
const ms = (value: unknown): number | undefined =>
  value === 0 || value === Number.POSITIVE_INFINITY ? undefined : (value as number | undefined);

/**
 * Validates `options` (an options object, or `undefined`/`null`) and resolves every default. Throws a `TypeError`
 * naming the first bad option and its value.
 * @internal
 */
export function resolveHttp2Config(options: NodeHttp2HandlerOptions | undefined | null | void): ResolvedHttp2Config {
  if (options != null && typeof options !== "object") {
    throw new TypeError(
      `${PACKAGE_PREFIX} - invalid options: ${describeValue(options)}; expected an options object or a provider function.`
    );
  }
  const raw = (options ?? {}) as Record<string, unknown>;
  // Upstream treats 0 as "unset" for maxConcurrentStreams; keep that, and reject what it would reject later.
  const config = applyOptionRules(
    MONITOR_OPTION_RULES,
    applyOptionRules(
      HTTP2_OPTION_RULES,
      { ...raw, maxConcurrentStreams: raw.maxConcurrentStreams === 0 ? undefined : raw.maxConcurrentStreams },
      PACKAGE_PREFIX
    ),
    PACKAGE_PREFIX
  );
  // The SDK hands its logger over with `updateHttpClientConfig(Symbol.for("logger"), …)`; an explicit one wins.
  const sdkLogger = raw[Symbol.for("logger") as unknown as string] as Logger | undefined;
  const defaultSocketTimeout = resolveDefaultSocketTimeout(raw);
  return {
    ...(config as object),
    options: { ...(raw as NodeHttp2HandlerOptions), defaultSocketTimeout },
    requestTimeout: ms(config.requestTimeout),
    sessionTimeout: ms(config.sessionTimeout),
    connectionTimeout: ms(config.connectionTimeout),
    defaultSocketTimeout,
    disableConcurrentStreams: config.disableConcurrentStreams === true,
    maxConcurrentStreams: config.maxConcurrentStreams ?? Number.POSITIVE_INFINITY,
    maxSessionsPerOrigin: config.maxSessionsPerOrigin ?? DEFAULT_MAX_SESSIONS_PER_ORIGIN,
    maxIsolatedSessionsPerOrigin: config.maxIsolatedSessionsPerOrigin ?? DEFAULT_MAX_ISOLATED_SESSIONS_PER_ORIGIN,
    telemetry: config.telemetry !== false,
    mode: resolveSocketMonitorMode(raw.socketMonitor, process.env, PACKAGE_PREFIX),
    logger: (config.logger ?? (typeof sdkLogger?.warn === "function" ? sdkLogger : undefined)) as Logger | undefined,
  } as ResolvedHttp2Config;
}
