import type { Logger } from "@smithy/types";
import type { SaturationOptions, SaturationReport, SocketMonitorMode } from "@sockeye/pool-monitor";
import {
  booleanOption,
  checkSaturationBlock,
  describeValue,
  functionOption,
  invalidOption,
  loggerOption,
  msOption,
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

type Callback = (report: SaturationReport) => void;

function invalid(name: string, value: unknown, expected: string): TypeError {
  return invalidOption(PACKAGE_PREFIX, name, value, expected);
}

/**
 * A millisecond option by the rule every Sockeye handler applies (`msOption`: `null` = unset, a numeric string is
 * converted, else a number >= 0 or it throws); `0` and `Infinity` mean off here.
 */
function ms(options: Record<string, unknown>, name: string): number | undefined {
  const value = msOption(PACKAGE_PREFIX, name, options[name]);
  return value === 0 || value === Infinity ? undefined : value;
}

function count(options: Record<string, unknown>, name: string, fallback: number): number {
  const value = options[name];
  if (value === null || value === undefined) return fallback;
  if (typeof value !== "number" || !(value >= 1) || (value !== Infinity && !Number.isInteger(value))) {
    throw invalid(name, value, "an integer >= 1 (or Infinity)");
  }
  return value;
}

/**
 * Validates `options` (an options object, or `undefined`/`null`) and resolves every default. Throws a `TypeError`
 * naming the first bad option and its value.
 * @internal
 */
export function resolveHttp2Config(options: NodeHttp2HandlerOptions | undefined | null | void): ResolvedHttp2Config {
  if (options !== undefined && options !== null && typeof options !== "object") {
    throw new TypeError(
      `${PACKAGE_PREFIX} - invalid NodeHttp2Handler options: ${describeValue(options)}; expected an object.`
    );
  }
  const raw = (options ?? {}) as Record<string, unknown>;
  const requestTimeout = ms(raw, "requestTimeout");
  const sessionTimeout = ms(raw, "sessionTimeout");
  const connectionTimeout = ms(raw, "connectionTimeout");
  const disable = booleanOption(PACKAGE_PREFIX, "disableConcurrentStreams", raw.disableConcurrentStreams);
  // Upstream treats 0 as "unset" for maxConcurrentStreams; keep that, and reject what it would reject later.
  const maxStreamsRaw = raw.maxConcurrentStreams === 0 ? undefined : raw.maxConcurrentStreams;
  const maxConcurrentStreams = count({ maxConcurrentStreams: maxStreamsRaw }, "maxConcurrentStreams", Infinity);
  const maxSessionsPerOrigin = count(raw, "maxSessionsPerOrigin", DEFAULT_MAX_SESSIONS_PER_ORIGIN);
  const maxIsolatedSessionsPerOrigin = count(
    raw,
    "maxIsolatedSessionsPerOrigin",
    DEFAULT_MAX_ISOLATED_SESSIONS_PER_ORIGIN
  );
  const connect = raw.nodeHttp2ConnectOptions;
  if (connect !== undefined && connect !== null && typeof connect !== "object") {
    throw invalid("nodeHttp2ConnectOptions", connect, "an object of http2.connect() options");
  }
  // The rules every Sockeye handler applies to these options (same messages).
  const telemetry = booleanOption(PACKAGE_PREFIX, "telemetry", raw.telemetry);
  const onSaturation = functionOption<Callback>(PACKAGE_PREFIX, "onSaturation", raw.onSaturation);
  const onRecovery = functionOption<Callback>(PACKAGE_PREFIX, "onRecovery", raw.onRecovery);
  const saturation = raw.saturation;
  checkSaturationBlock(saturation, PACKAGE_PREFIX);
  let logger = loggerOption<Logger>(PACKAGE_PREFIX, "logger", raw.logger);
  // The SDK hands its logger over with `updateHttpClientConfig(Symbol.for("logger"), …)`; an explicit one wins.
  const sdkLogger = (raw as Record<symbol, unknown>)[Symbol.for("logger")] as Logger | undefined;
  if (logger === undefined && typeof sdkLogger?.warn === "function") logger = sdkLogger;
  const mode = resolveSocketMonitorMode(raw.socketMonitor, process.env, PACKAGE_PREFIX);
  const defaultSocketTimeout = resolveDefaultSocketTimeout(raw);
  return {
    options: { ...(raw as NodeHttp2HandlerOptions), defaultSocketTimeout },
    requestTimeout,
    sessionTimeout,
    connectionTimeout,
    defaultSocketTimeout,
    disableConcurrentStreams: disable === true,
    maxConcurrentStreams,
    maxSessionsPerOrigin,
    maxIsolatedSessionsPerOrigin,
    telemetry: telemetry !== false,
    mode,
    logger: logger ?? undefined,
    onSaturation,
    onRecovery,
    saturation: (saturation as SaturationOptions | null | undefined) ?? undefined,
  };
}
