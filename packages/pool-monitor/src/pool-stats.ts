/**
 * Public data shapes: the `getStats()` snapshot, the saturation report and the events, all plain JSON-serialisable
 * data. Durations are ms, rates per second, timestamps `performance.now()` ms.
 */

/** How a finished request is counted. @public */
export type RequestOutcome = "completed" | "failed" | "aborted" | "timed_out";

/** Saturation state of one origin; `stalled` when the `stall` trigger fired. @public */
export type SaturationState = "ok" | "saturated" | "stalled";

/**
 * Why an origin is saturated or stalled: `pool_capacity` (more requests want a socket than `maxSockets` serves),
 * `unconsumed_bodies` (at least half of the busy sockets pinned by response bodies neither read nor destroyed), or
 * `no_progress` (the `stall` rule without pinned bodies: the server is not answering). @public
 */
export type SaturationCause = "pool_capacity" | "unconsumed_bodies" | "no_progress";

/**
 * Which detector rule fired (on a change of cause: the rule supporting the new cause). `growth`: over the last
 * `windowSamples` saturated samples the queue never shrank and grew by at least max(1, ceil(maxSockets / 5)) to at
 * least `maxSockets`; `rising_troughs`: the last 3 local minima of the queue grew the same way, never below
 * `maxSockets`; `stall`: `windowSamples` samples with every socket busy, requests queued and no completion, the oldest
 * held request past the stall deadline; `long_holds`: the same before the stall deadline. @public
 */
export type SaturationTrigger = "growth" | "rising_troughs" | "stall" | "long_holds";

/** How `recommendedMaxSockets` was computed. @public */
export interface SaturationSizing {
  /** `littles_law`: `ratePerSec` × `holdMs` (a window of completions spanning ≥ 2 holds); else `active + queued`. */
  method: "littles_law" | "concurrent_requests";
  /** Arrival rate (at least the throughput) over the window, requests/s; `null` for `concurrent_requests`. */
  ratePerSec: number | null;
  /** Hold time used, ms: max(window's mean hold, mean age of held requests; `concurrent_requests`: oldest's age). */
  holdMs: number;
  /** Sockets needed before headroom. */
  needed: number;
  /** max(maxSockets + 1, ceil(needed × 1.25)). */
  recommended: number;
}

/**
 * Every close reason with the transports that produce it (`http2` through `HTTP2_CLOSE_REASONS`), in the order of
 * `sockets.closed`. `CloseReason`, the empty counters and each transport's classifier type derive from it. @internal
 */
export const CLOSE_REASONS = {
  connect_error: ["http1", "http2", "undici"],
  aborted: ["http1", "undici"],
  timed_out: ["http1"],
  error: ["http1", "http2", "undici"],
  timeout: ["http1"],
  server_closed: ["http1", "http2", "undici"],
  idle_timeout: ["http1", "http2", "undici"],
  max_lifetime: ["http1", "undici"],
  local: ["http1", "http2", "undici"],
} as const satisfies Record<string, readonly ("http1" | "http2" | "undici")[]>;

/**
 * Reason a socket closed, first match wins: `idle_timeout` / `max_lifetime` (closed by its owner), `connect_error`
 * (before connect or TLS finished), `aborted` / `timed_out` (its request's noted outcome), `error`, `timeout` (after a
 * `'timeout'` event), `server_closed` (FIN received), `local`. @public
 */
export type CloseReason = keyof typeof CLOSE_REASONS;

/** The close reasons transport `T` produces: its classifier's result type. @internal */
export type CloseReasonOf<T extends "http1" | "http2" | "undici"> = {
  [R in CloseReason]: T extends (typeof CLOSE_REASONS)[R][number] ? R : never;
}[CloseReason];

/** A duration distribution: fields in ms (3 decimals) except `count`; all zero when `count` is 0. @public */
export interface DurationSummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Saturation / recovery report: for `onSaturation` / `onRecovery`, the `pool:*` events and the log line. @public */
export interface SaturationReport {
  /** `scheme://host:port` (or `_OTHER`). */
  origin: string;
  /** State after this transition (`ok` for a recovery). */
  state: SaturationState;
  previousState: SaturationState;
  /** Attributed cause; `null` in a recovery report. */
  cause: SaturationCause | null;
  /** Cause before this report: `null` when entering an episode. */
  previousCause: SaturationCause | null;
  /** Rule that fired; `null` in a recovery report. */
  trigger: SaturationTrigger | null;
  detectedAt: number;
  /** When the previous state began (for a recovery: when saturation began). */
  since: number;
  /** Sockets in use, connecting ones included. */
  active: number;
  /** Socket limit of the pools this report is about; `null` = unlimited. */
  maxSockets: number | null;
  /** Requests waiting for a socket. */
  queued: number;
  /** Age of the oldest queued request, ms (0 when none). */
  oldestQueuedMs: number;
  /** Age of the oldest request holding a socket, since it acquired it, ms (0 when none). */
  oldestActiveMs: number;
  /** Normal socket hold of this origin, ms: the longest completed hold, decaying 2 % per sample; `null` before one. */
  expectedHoldMs: number | null;
  /** Age past which a held request is stalled: max((windowSamples − 1) × period, stallAfterMs, 4 × expectedHoldMs). */
  stallDeadlineMs: number;
  /** Time covered by the detector window (restarted at every transition); `windowSamples`: its samples. */
  windowMs: number;
  windowSamples: number;
  /** Queue depth change across the window (last − first sample), requests. */
  queueGrowth: number;
  /** Completed requests (socket released) per second over the window. */
  throughput: number;
  /** Requests started per second over the window. */
  arrivalRate: number;
  /** Mean socket hold (acquired → released) over the window, ms; `null` if none finished. */
  meanHoldMs: number | null;
  /** Sockets the pool needs now, at least maxSockets + 1; `null` unless the cause is `pool_capacity`. */
  recommendedMaxSockets: number | null;
  /** How `recommendedMaxSockets` was computed; `null` when it is `null`. */
  sizing: SaturationSizing | null;
  /** Responses whose body made no progress, unread and not destroyed, for `unconsumedBodyMs`. */
  unconsumed: { count: number; oldestMs: number };
  /** Responses dropped unread whose connections were reclaimed during this episode so far. */
  reclaimed: number;
  /** The human-readable line (also what the logger receives, without the prefix). */
  message: string;
}

/** Saturation block of an origin snapshot: fields as in `SaturationReport`, for the current state. @public */
export interface OriginSaturation {
  state: SaturationState;
  since: number;
  cause: SaturationCause | null;
  trigger: SaturationTrigger | null;
  recommendedMaxSockets: number | null;
  /** Consecutive samples without the cause; recovery at `windowSamples`. Always present from `PoolMonitor`. */
  clearSamples?: number;
  /** Number of transitions into `saturated` / `stalled` since the monitor was created. */
  episodes: number;
}

/** The gauges of an origin, read from its transport's own pool when sampled and in each snapshot. @public */
export interface PoolGauges {
  /** Socket limit (sum over the origin's busy pools, else the latest request's); `null` = unlimited. */
  maxSockets: number | null;
  /** Sockets assigned to requests, connecting ones included (`agent.sockets`). */
  active: number;
  /** Kept-alive sockets waiting for a request (`agent.freeSockets`). */
  idle: number;
  /** Requests waiting for a connection (HTTP/2: for a stream slot). */
  queued: number;
  /** Age of the oldest tracked queued request, ms (0 when none). */
  oldestQueuedMs: number;
}

/** Snapshot of one origin: its gauges (`PoolGauges`), then its counters and summaries. @public */
export interface OriginStats extends PoolGauges {
  /** `scheme://host:port`, or `_OTHER` for origins beyond `maxOrigins`. */
  origin: string;
  /** Tracked requests not yet closed (queued + on a socket + body still open). */
  inFlight: number;
  /** Request counters since creation; every started request ends in exactly one of the four outcomes. */
  requests: {
    /** `handle()` calls (standalone monitor: `trackRequest()` calls). */
    started: number;
    /** Closed after response headers arrived, without a request or body error. */
    completed: number;
    /** Closed with an error or without a response (and not aborted / timed out). */
    failed: number;
    /** Ended by an abort signal or `destroy()` (standalone: `noteOutcome(req, "aborted")`). */
    aborted: number;
    /** Ended by one of the handler's deadlines (standalone: `noteOutcome(req, "timed_out")`). */
    timedOut: number;
    /** Of `failed`: rejected at once, the origin's queue holding `maxQueuedRequests` already. */
    queueFull: number;
  };
  /** Socket counters since creation. */
  sockets: {
    /** New sockets seen (connection attempts, successful or not). */
    created: number;
    closed: Record<CloseReason, number>;
    acquisitions: number;
    /** Acquisitions of a socket that had already served a request (unlike `req.reusedSocket`, right on `'free'`). */
    reusedAcquisitions: number;
    errors: number;
  };
  /** From `startedAt` to the request's socket, every acquisition. */
  queueWaitMs: DurationSummary;
  /** TCP connect time of new sockets (DNS lookup included), ms. */
  connectMs: DurationSummary;
  /** TLS handshake time of new sockets (`'connect'` → `'secureConnect'`), ms. */
  tlsMs: DurationSummary;
  /** Lifetime of closed sockets that connected, ms. */
  connectionAgeMs: DurationSummary;
  /** Open responses whose body was not consumed for `unconsumedBodyMs` (see `SaturationReport.unconsumed`). */
  unconsumed: { count: number; oldestMs: number };
  /** Response bodies garbage-collected unread while their response was open; each one's connection was freed. */
  bodiesReclaimed: number;
  saturation: OriginSaturation;
  /** Requests sent outside the pool on one-off agents (e.g. `Expect: 100-continue`); present once there was one. */
  unpooled?: UnpooledStats;
  /** `NodeHttp2Handler` origins only; the shared fields then count sessions as connections, streams as requests. */
  http2?: Http2OriginStats;
}

/** Every HTTP/2 close reason with the `CloseReason` it counts as, in the order of `http2.closed`. @internal */
export const HTTP2_CLOSE_REASONS = {
  connect_timeout: "connect_error",
  connect_error: "connect_error",
  goaway: "server_closed",
  idle_timeout: "idle_timeout",
  error: "error",
  server_closed: "server_closed",
  local: "local",
} as const satisfies Record<string, CloseReasonOf<"http2">>;

/**
 * Why an HTTP/2 session closed (first match wins): `connect_timeout` (not ready within `connectionTimeout`),
 * `connect_error`, `goaway`, `idle_timeout` (`sessionTimeout`), `error`, `server_closed`, `local`. @public
 */
export type Http2CloseReason = keyof typeof HTTP2_CLOSE_REASONS;

/** One open HTTP/2 session. @public */
export interface Http2SessionStats {
  /** Handler-local session id. */
  id: number;
  /** `connecting` (TCP, TLS or SETTINGS pending), `ready`, or `closing` (GOAWAY received or sent, draining). */
  state: "connecting" | "ready" | "closing";
  /** One stream, destroyed when it closes (event stream or `disableConcurrentStreams`). */
  isolated: boolean;
  activeStreams: number;
  maxActiveStreams: number;
  streams: number;
  /** The peer's `maxConcurrentStreams` from its SETTINGS frame; `null` before it arrived or when unlimited. */
  peerMaxConcurrentStreams: number | null;
  /** Effective stream limit: min(peer limit, the handler's `maxConcurrentStreams`); `null` = unlimited. */
  streamLimit: number | null;
  ageMs: number;
}

/** HTTP/2 block of an origin snapshot. @public */
export interface Http2OriginStats {
  sessionsOpen: number;
  isolatedSessionsOpen: number;
  activeStreams: number;
  /** Streams waiting for a stream slot (or for an isolated session, with `disableConcurrentStreams`). */
  streamsWaiting: number;
  /** The bound on pooled sessions; `null` = unbounded. */
  maxSessions: number | null;
  /** The handler's own cap on streams per session (`maxConcurrentStreams`); `null` = none. */
  maxConcurrentStreams: number | null;
  /** Smallest peer `maxConcurrentStreams` over the ready sessions; `null` when none is known. */
  peerMaxConcurrentStreams: number | null;
  sessions: Http2SessionStats[];
  sessionsCreated: number;
  closed: Record<Http2CloseReason, number>;
  /** GOAWAY frames received, by HTTP/2 error code (decimal string, e.g. `"0"` = NO_ERROR). */
  goawayCodes: Record<string, number>;
  /**
   * Streams the peer refused before answering (RST_STREAM with REFUSED_STREAM or ENHANCE_YOUR_CALM), whether their
   * request was sent again on another stream or failed; a request refused 3 times counts 3.
   */
  streamsRefused: number;
}

/** Requests of one origin sent outside the pool; outcomes counted as in `OriginStats.requests`. @public */
export interface UnpooledStats extends Omit<OriginStats["requests"], "queueFull"> {
  inFlight: number;
  /** TCP connect time of their sockets (DNS lookup included), ms. */
  connectMs: DurationSummary;
}

/** `PoolMonitor.getStats()` result. @public */
export interface PoolStats {
  takenAt: number;
  /** One entry per origin, in first-seen order. */
  origins: OriginStats[];
  totals: { active: number; idle: number; queued: number; inFlight: number; saturatedOrigins: number };
}

/** Events of `subscribe()` listeners, also published on the channel `"sockeye:" + type`. @public */
export type PoolEvent =
  | { type: "request:enqueued"; origin: string }
  | { type: "request:acquired"; origin: string; waitMs: number; reused: boolean; queued: boolean }
  | { type: "connection:created"; origin: string; connectMs: number; tlsMs: number | null }
  | { type: "connection:closed"; origin: string; ageMs: number; requests: number; reason: CloseReason }
  | { type: "pool:saturated"; origin: string; report: SaturationReport }
  | { type: "pool:recovered"; origin: string; report: SaturationReport }
  | { type: "body:reclaimed"; origin: string }
  | RequestFinishedEvent;

/** One request's end, once per `handle()` call, when someone listens; bounded, secret-free fields. @public */
export interface RequestFinishedEvent {
  type: "request:finished";
  /** `scheme://host:port`, or `_OTHER` for origins beyond `maxOrigins`. */
  origin: string;
  /** `http:` / `https:` origin scheme without the colon; `null` when unknown. Also known for an `_OTHER` origin. */
  scheme: "http" | "https" | null;
  /** The method if known (OpenTelemetry's list or `OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS`), else `_OTHER`. */
  method: string;
  statusCode: number | null;
  /** How the request ended (as counted in `OriginStats.requests`). */
  outcome: RequestOutcome;
  /** OpenTelemetry `error.type`: the error's `code`, else its `name`, else `_OTHER`; a status >= 400 as a string. */
  errorType: string | null;
  /** From `handle()` to the end of the response body (received, destroyed, reclaimed or failed) or the failure, ms. */
  durationMs: number;
  /** Negotiated HTTP version: `"1.1"` or `"2"`; `null` when the handler cannot know it (undici may negotiate h2). */
  protocolVersion: "1.1" | "2" | null;
  /** The request's `Content-Length`, bytes; `null` when it had none. */
  requestBodySize: number | null;
  /** The response's `Content-Length`, bytes; `null` when there was no response or it had none. */
  responseBodySize: number | null;
  /** How long a request that left the queue without a connection waited, ms; else `null` (see `request:acquired`). */
  queuedMs: number | null;
}

/** Listener for `PoolMonitor.subscribe()`, called synchronously on the hot path; a throw is ignored. @public */
export type PoolEventListener = (event: PoolEvent) => void;
