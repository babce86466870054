/**
 * The `request:finished` event: one per request, built only when someone listens, with what goes in reduced to
 * bounded, secret-free values in one place for all handlers: the method to the known methods (else `_OTHER`), an
 * error to its `code` or class `name` (never its message), `Content-Length` values to byte counts (a response to
 * `HEAD`, 204 or 304 has size 0). Cost when built: one object, two regular-expression tests on a failure.
 */
import type { RequestOutcome } from "./origin-telemetry";
import type { RequestFinishedEvent } from "./pool-stats";
import { timing } from "./timing";
import { type CountedRequest, type OriginState, outcomeOf } from "./tracking-state";

/** What `request:finished` reads of a finished node:http request (the handler's, or the standalone monitor's). @internal */
export interface FinishedHttp1Request extends CountedRequest {
  readonly originState: OriginState | undefined;
  readonly isUnpooled: boolean;
  /** Its agent (its `protocol` names the scheme; not read for an unpooled request). */
  readonly agent: unknown;
  readonly beganAt: number;
  readonly trackedMethod: string | undefined;
  readonly trackedError: unknown;
  readonly requestBodySize: unknown;
  readonly isQueued: boolean;
  readonly acquiredAt: number;
}

/** OpenTelemetry's default known HTTP methods (RFC 9110, PATCH, QUERY); case-sensitive. */
const DEFAULT_KNOWN_METHODS: readonly string[] = [
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "QUERY",
  "TRACE",
];
/** An HTTP method token (RFC 9110 `token`). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Known methods: `OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS` (comma-separated) if set, else the defaults. @internal */
export function knownMethodsFrom(env: string | undefined): ReadonlySet<string> {
  if (env === undefined) return new Set(DEFAULT_KNOWN_METHODS);
  return new Set(
    env
      .split(",")
      .map((m) => m.trim())
      .filter((m) => TOKEN.test(m))
  );
}

/** Read once, at load. */
const KNOWN_METHODS = knownMethodsFrom(process.env.OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS);

/** An error code worth reporting: `ECONNRESET`, `UND_ERR_SOCKET`, `ERR_HANDLER_DESTROYED` (bounded length). */
const CODE = /^[A-Z][A-Z0-9_]{1,63}$/;
/** A class-like error name: `TimeoutError`, `AbortError` (bounded length, no spaces). */
const CLASS_NAME = /^[A-Za-z_$][\w$.]{0,63}$/;

/** `method` when it is a known HTTP method (exact case; see `knownMethodsFrom`), else `_OTHER`. @internal */
export function knownMethod(method: unknown): string {
  return typeof method === "string" && KNOWN_METHODS.has(method) ? method : "_OTHER";
}

/** OpenTelemetry `error.type` of a finished request (see `RequestFinishedEvent.errorType`). @internal */
export function errorTypeOf(outcome: RequestOutcome, error: unknown, statusCode: number | null): string | null {
  if (outcome === "completed") return statusCode !== null && statusCode >= 400 ? String(statusCode) : null;
  if (error !== null && typeof error === "object") {
    const { code, name } = error as { code?: unknown; name?: unknown };
    if (typeof code === "string" && CODE.test(code)) return code;
    if (typeof name === "string" && name !== "Error" && CLASS_NAME.test(name)) return name;
  }
  if (outcome === "timed_out") return "TimeoutError";
  if (outcome === "aborted") return "AbortError";
  return "_OTHER";
}

/** A `Content-Length` header value (string, number or a one-element list) as bytes; `null` otherwise. @internal */
export function contentLengthOf(value: unknown): number | null {
  if (Array.isArray(value)) value = value.length === 1 ? value[0] : undefined;
  const n = typeof value === "number" ? value : typeof value === "string" && value !== "" ? Number(value) : Number.NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** `"http"` / `"https"` from `http:` / `https:` or a `scheme://…` origin; `null` otherwise. @internal */
export function schemeOf(protocolOrOrigin: string | undefined): "http" | "https" | null {
  if (protocolOrOrigin === undefined) return null;
  if (protocolOrOrigin.startsWith("https:")) return "https";
  if (protocolOrOrigin.startsWith("http:")) return "http";
  return null;
}

/** What only the transport knows of a finished request, for `request:finished` (raw, reduced by the builder). @internal */
export interface WireFacts {
  /** `http` / `https`, or `null` when unknown. */
  scheme: "http" | "https" | null;
  method: unknown;
  /** The response status; `null` (or anything outside 100..599) when none arrived. */
  statusCode: unknown;
  /** Negotiated HTTP version, `null` when unknown. */
  protocolVersion: "1.1" | "2" | null;
  /** Request `Content-Length` header value, as found. */
  requestBodySize: unknown;
  /** Response `Content-Length` header value, as found. */
  responseBodySize: unknown;
  /** An error the wire saw, used when the caller saw none (e.g. the stream's own). */
  error?: unknown;
}

/** Everything a `request:finished` event is built from. @internal */
export interface RequestFacts extends WireFacts {
  /** The monitor's origin key (`scheme://host:port` or `_OTHER`). */
  origin: string;
  outcome: RequestOutcome;
  /** The error it ended with (the one its caller saw), if any. */
  error: unknown;
  /** `handle()` to the end of the response body or the failure, ms. */
  durationMs: number;
  /** For a request that left the queue without a connection, how long it waited; else `null`. */
  queuedMs: number | null;
}

/** Builds a `request:finished` event from raw facts (see the header); only when someone listens. @internal */
export function requestFinishedEvent(f: RequestFacts): RequestFinishedEvent {
  const { statusCode, method, outcome } = f;
  const status =
    typeof statusCode === "number" && Number.isInteger(statusCode) && statusCode >= 100 && statusCode <= 599
      ? statusCode
      : null;
  return {
    type: "request:finished",
    origin: f.origin,
    scheme: f.scheme,
    method: knownMethod(method),
    statusCode: status,
    outcome,
    errorType: errorTypeOf(outcome, f.error, status),
    durationMs: Math.max(f.durationMs, 0),
    protocolVersion: f.protocolVersion,
    requestBodySize: contentLengthOf(f.requestBodySize),
    responseBodySize:
      status === null
        ? null
        : method === "HEAD" || status === 204 || status === 304
          ? 0
          : contentLengthOf(f.responseBodySize),
    queuedMs: f.queuedMs,
  };
}

/** The event of a Node `http` request (the handler's, or one `PoolMonitor` tracks), built at its `'close'`. @internal */
export function httpRequestFinishedEvent(st: FinishedHttp1Request): RequestFinishedEvent {
  const res = st.res;
  const outcome = outcomeOf(st);
  const now = timing.now();
  const durationMs = now - st.beganAt;
  return requestFinishedEvent({
    origin: st.originState!.origin,
    scheme: schemeOf(st.isUnpooled ? st.originState!.origin : (st.agent as { protocol?: string }).protocol),
    method: st.trackedMethod,
    statusCode: res?.statusCode,
    outcome,
    // After a noted outcome, Node's errors ("socket hang up") follow from the caller's destroy: only a named one counts.
    error: st.notedOutcome === undefined ? (st.trackedError ?? res?.errored) : st.trackedError,
    durationMs,
    protocolVersion: "1.1",
    requestBodySize: st.requestBodySize,
    responseBodySize: res?.headers["content-length"],
    queuedMs: st.isQueued && st.acquiredAt < 0 ? durationMs : null,
  });
}
