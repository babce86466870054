/**
 * Public data shapes: the `getStats()` snapshot, the saturation report and the event union.
 *
 * Everything here is plain data: JSON-serialisable (no `Infinity`, no `Map`, no class instances),
 * so a snapshot can be logged, sent over IPC or diffed in a test as is. Durations are milliseconds
 * (`...Ms`), rates are per second (`.../s`), timestamps are `performance.now()` milliseconds
 * (monotonic, process-relative; not epoch).
 */

/** How a finished request is counted. @public */
export type RequestOutcome = "completed" | "failed" | "aborted" | "timed_out";

/**
 * Saturation state of one origin.
 * - `ok`: no sustained queue growth, no long-held pool and no stall.
 * - `saturated`: every socket is busy and the queue keeps growing (or its troughs keep rising), or requests queue
 *   behind sockets held by long requests.
 * - `stalled`: every socket is busy, requests are queued, nothing completed for `windowSamples` samples and the
 *   oldest request holding a socket is older than the origin's stall deadline (see `SaturationReport.stallDeadlineMs`).
 * @public
 */
export type SaturationState = "ok" | "saturated" | "stalled";

/**
 * Why an origin is saturated or stalled.
 * - `pool_capacity`: more requests want a socket than `maxSockets` sockets can serve (arrivals exceed capacity, or
 *   long requests such as SQS long polls hold every socket); `recommendedMaxSockets` says how many would do.
 * - `unconsumed_bodies`: at least half of the busy sockets are pinned by responses handed to the caller whose body
 *   was neither read nor destroyed (the unread S3 `GetObject` body leak). More sockets would only delay exhaustion.
 * - `no_progress`: nothing completed for `windowSamples` samples while every socket is busy and requests queue, and
 *   the oldest request holding a socket is past the stall deadline (server not answering, no timeouts).
 * @public
 */
export type SaturationCause = "pool_capacity" | "unconsumed_bodies" | "no_progress";

/**
 * Which detector rule fired.
 * - `growth`: the queue was non-decreasing over the last `windowSamples` saturated samples and grew by at least
 *   max(1, ceil(maxSockets / 5)) to at least `maxSockets`.
 * - `rising_troughs`: the last 3 local minima of the per-interval queue floor were non-decreasing, grew by the same
 *   amount and never fell below `maxSockets` (sawtooth backlog from periodic bursts).
 * - `stall`: `windowSamples` consecutive samples with every socket busy, requests queued and zero completions, and the
 *   oldest request holding a socket older than the stall deadline.
 * - `long_holds`: the same samples, but the held requests are not (yet) older than the stall deadline: requests queue
 *   behind long-held sockets (long polls, streams).
 * On a change of cause, the rule supporting the new cause (`growth` when the pool is saturated and requests complete).
 * @public
 */
export type SaturationTrigger = "growth" | "rising_troughs" | "stall" | "long_holds";

/** How `recommendedMaxSockets` was computed. @public */
export interface SaturationSizing {
  /**
   * - `littles_law`: `ratePerSec` × `holdMs` (the window saw completions and spans at least twice the hold time);
   * - `concurrent_requests`: the requests in use or queued now (`active + queued`), each needing a socket for as long
   *   as the long-held ones (no completion in the window, or holds too long for the window to measure a rate).
   */
  method: "littles_law" | "concurrent_requests";
  /** Arrival rate (at least the throughput) over the window, requests/s; `null` for `concurrent_requests`. */
  ratePerSec: number | null;
  /**
   * Hold time used, ms: for `littles_law` the larger of the mean hold of the window's completions and the mean age of
   * the requests holding a socket now; for `concurrent_requests` the larger of that and the age of the oldest request
   * holding a socket.
   */
  holdMs: number;
  /** Sockets needed before headroom. */
  needed: number;
  /** max(maxSockets + 1, ceil(needed × 1.25)). */
  recommended: number;
}

/**
 * Reason a socket closed, as classified by the monitor (first match wins, in this order):
 * - `idle_timeout` / `max_lifetime`: closed by its owner (e.g. the handler's `idleSocketTimeout` /
 *   `connectionLifetime`), reported through `noteSocketClose()`.
 * - `connect_error`: errored before it connected (TCP) or finished the TLS handshake.
 * - `aborted` / `timed_out`: the request using it was reported through `noteOutcome()` as aborted / timed out.
 * - `error`: any other socket error (e.g. `ECONNRESET`).
 * - `timeout`: the socket emitted `'timeout'` (agent idle timeout or socket inactivity timeout) and was then closed.
 * - `server_closed`: the server ended the connection (FIN received).
 * - `local`: closed locally without error (keep-alive off, `maxFreeSockets` exceeded, `agent.destroy()`, body destroyed).
 * @public
 */
export type CloseReason =
  | "connect_error"
  | "aborted"
  | "timed_out"
  | "error"
  | "timeout"
  | "server_closed"
  | "idle_timeout"
  | "max_lifetime"
  | "local";

/**
 * Summary of a duration distribution, from a `perf_hooks` histogram recorded in microseconds.
 * All fields are milliseconds (3 decimals) except `count`. All zero when `count` is 0.
 * @public
 */
export interface DurationSummary {
  /** Number of recorded values. */
  count: number;
  /** Median, ms. */
  p50: number;
  /** 90th percentile, ms. */
  p90: number;
  /** 99th percentile, ms. */
  p99: number;
  /** Largest value, ms. */
  max: number;
}

/**
 * Structured saturation / recovery report, passed to `onSaturation` / `onRecovery`, published on
 * `sockeye:pool:saturated` / `sockeye:pool:recovered` and used to build the log line.
 * @public
 */
export interface SaturationReport {
  /** `scheme://host:port` (or `_OTHER`). Never a path, query or header. */
  origin: string;
  /** State after this transition (`ok` for a recovery). */
  state: SaturationState;
  /** State before this transition. */
  previousState: SaturationState;
  /** Attributed cause; `null` in a recovery report. */
  cause: SaturationCause | null;
  /**
   * Cause before this report: `null` when entering an episode, the episode's former cause on a change of cause, the
   * episode's cause in a recovery report.
   */
  previousCause: SaturationCause | null;
  /** Rule that fired; `null` in a recovery report. */
  trigger: SaturationTrigger | null;
  /** When the report was made, `performance.now()` ms. */
  detectedAt: number;
  /** When the previous state began, `performance.now()` ms (for a recovery: when saturation began). */
  since: number;
  /** Sockets in use in the pools this report is about (`agent.sockets` entries, connecting ones included). */
  active: number;
  /**
   * Socket limit of the pools this report is about: those full with a queue when there are any, else the origin's
   * live pools (see `OriginStats.maxSockets`); `null` = unlimited.
   */
  maxSockets: number | null;
  /** Requests waiting in the agent queue of those pools (`agent.requests`). */
  queued: number;
  /** Age of the oldest queued request, ms (0 when none). */
  oldestQueuedMs: number;
  /** Age of the oldest request holding a socket (since it acquired it), ms (0 when none). */
  oldestActiveMs: number;
  /**
   * How long this origin's requests normally hold a socket, ms: the longest completed hold time, decaying by 2 % per
   * sample; `null` until a request of this origin completed.
   */
  expectedHoldMs: number | null;
  /**
   * Age past which a held request counts as stalled, ms: max((windowSamples − 1) × sampleIntervalMs, `stallAfterMs`,
   * 4 × expectedHoldMs).
   */
  stallDeadlineMs: number;
  /** Time covered by the detector window, ms (the window restarts at every transition). */
  windowMs: number;
  /** Samples in the window. */
  windowSamples: number;
  /** Queue depth change across the window (last − first sample), requests. */
  queueGrowth: number;
  /** Completed requests (socket released) per second over the window. */
  throughput: number;
  /** Requests started per second over the window. */
  arrivalRate: number;
  /** Mean time a request held its socket (acquired → closed) over the window, ms; `null` if none finished. */
  meanHoldMs: number | null;
  /**
   * Sockets the pool needs now, at least maxSockets + 1 (see `sizing` for how it was computed). Only for cause
   * `pool_capacity`, else `null`.
   */
  recommendedMaxSockets: number | null;
  /** How `recommendedMaxSockets` was computed; `null` when it is `null`. */
  sizing: SaturationSizing | null;
  /** Responses handed out whose body has made no progress and was neither read nor destroyed for `unconsumedBodyMs`. */
  unconsumed: { count: number; oldestMs: number };
  /** The human-readable line (also what the logger receives, without the prefix). */
  message: string;
}

/** Saturation block of an origin snapshot. @public */
export interface OriginSaturation {
  /** Current state. */
  state: SaturationState;
  /** When the current state began, `performance.now()` ms. */
  since: number;
  /** Cause of the current (non-ok) state, else `null`. */
  cause: SaturationCause | null;
  /** Rule that fired for the current (non-ok) state, else `null`. */
  trigger: SaturationTrigger | null;
  /** Sockets the pool needs now, refreshed every sample while the cause is `pool_capacity`; else `null`. */
  recommendedMaxSockets: number | null;
  /**
   * Consecutive samples on which the cause was gone; the origin recovers at `windowSamples` (0 when `ok`). Always
   * present in `PoolMonitor` snapshots.
   */
  clearSamples?: number;
  /** Number of transitions into `saturated` / `stalled` since the monitor was created. */
  episodes: number;
}

/** Snapshot of one origin. @public */
export interface OriginStats {
  /** `scheme://host:port`, or `_OTHER` for origins beyond `maxOrigins`. */
  origin: string;
  /**
   * Per-origin socket limit: the sum of `agent.maxSockets` over the pools (agent names) of this origin that hold a
   * busy socket or a queued request, or the latest request's agent's `maxSockets` when none does (a replaced agent
   * stops counting once its requests are done); `null` = unlimited.
   */
  maxSockets: number | null;
  /** Sockets assigned to requests, connecting ones included (`agent.sockets`). */
  active: number;
  /** Kept-alive sockets waiting for a request (`agent.freeSockets`). */
  idle: number;
  /**
   * Requests waiting for a connection: the agent's queue (`agent.requests`) for node:http, the handler's gate and
   * undici's pending requests for undici, streams waiting for a stream slot for HTTP/2.
   */
  queued: number;
  /** Age of the oldest tracked queued request, ms (0 when none). */
  oldestQueuedMs: number;
  /** Tracked requests not yet closed (queued + on a socket + body still open). */
  inFlight: number;
  /** Request counters since creation. Every started request ends in exactly one of the four outcomes. */
  requests: {
    /** Requests started: every `handle()` of a handler, or `trackRequest()` / `attachRequest()` call of a standalone monitor. */
    started: number;
    /** Closed after response headers arrived, without a request or body error. */
    completed: number;
    /** Closed with an error or without a response (and not reported as aborted / timed out). */
    failed: number;
    /** Ended by an abort signal or the handler's `destroy()` (standalone: `noteOutcome(req, "aborted")`). */
    aborted: number;
    /** Ended by one of the handler's deadlines (standalone: `noteOutcome(req, "timed_out")`). */
    timedOut: number;
  };
  /** Socket counters since creation. */
  sockets: {
    /** New sockets seen (connection attempts, successful or not). */
    created: number;
    /** Closed sockets by reason. */
    closed: Record<CloseReason, number>;
    /** Socket acquisitions (a request received a socket). */
    acquisitions: number;
    /** Acquisitions of a socket that had already served a request (correct for the `'free'` hand-off, unlike `req.reusedSocket`). */
    reusedAcquisitions: number;
    /** Socket `'error'` events. */
    errors: number;
  };
  /** Time from `startedAt` to the request's `'socket'` event, ms, every acquisition (≈0 when a socket was free). */
  queueWaitMs: DurationSummary;
  /** TCP connect time of new sockets (DNS lookup included), ms. */
  connectMs: DurationSummary;
  /** TLS handshake time of new sockets (`'connect'` → `'secureConnect'`), ms. */
  tlsMs: DurationSummary;
  /** Lifetime of closed sockets that connected, ms. */
  connectionAgeMs: DurationSummary;
  /** Open responses whose body was not consumed for `unconsumedBodyMs` (see `SaturationReport.unconsumed`). */
  unconsumed: { count: number; oldestMs: number };
  /** Saturation detector state. */
  saturation: OriginSaturation;
  /**
   * Requests tracked through `PoolMonitor.trackUnpooledRequest()`: sent on a one-off agent with no socket limit (the
   * handler's `Expect: 100-continue` requests), so outside the pool gauges above and the saturation detector.
   * Present once the origin had such a request (only `NodeHttpHandler` and standalone monitors send them).
   */
  unpooled?: UnpooledStats;
  /**
   * HTTP/2 origins only (Sockeye's `NodeHttp2Handler`): session-level detail. For such an origin the shared fields
   * count sessions as connections (`active` = sessions carrying at least one stream, `idle` = open sessions carrying
   * none, `maxSockets` = the sessions-per-origin bound) and streams as requests (`queued` = streams waiting for a
   * stream slot). Absent for HTTP/1.1 origins.
   */
  http2?: Http2OriginStats;
}

/**
 * Why an HTTP/2 session closed (first match wins):
 * - `connect_timeout`: not established (TCP + TLS + the server's SETTINGS) within `connectionTimeout`.
 * - `connect_error`: failed before it was established (refused, TLS error, …).
 * - `goaway`: the server sent GOAWAY (its error code is counted in `goawayCodes`).
 * - `idle_timeout`: no byte moved for `sessionTimeout`.
 * - `error`: a session or frame error after establishment.
 * - `server_closed`: the connection ended without GOAWAY or error.
 * - `local`: closed by the client (isolated session done, `destroy()`).
 * @public
 */
export type Http2CloseReason =
  | "connect_timeout"
  | "connect_error"
  | "goaway"
  | "idle_timeout"
  | "error"
  | "server_closed"
  | "local";

/** One open HTTP/2 session. @public */
export interface Http2SessionStats {
  /** Handler-local session id. */
  id: number;
  /** `connecting` (TCP, TLS or SETTINGS pending), `ready`, or `closing` (GOAWAY received or sent, draining). */
  state: "connecting" | "ready" | "closing";
  /**
   * An isolated session (event stream or `disableConcurrentStreams`): one stream, destroyed when it closes; bounded by
   * `maxIsolatedSessionsPerOrigin` unless an event stream.
   */
  isolated: boolean;
  /** Streams open on it now. */
  activeStreams: number;
  /** Most streams open at once. */
  maxActiveStreams: number;
  /** Streams opened over its life. */
  streams: number;
  /** The peer's `maxConcurrentStreams` from its SETTINGS frame; `null` before it arrived or when unlimited. */
  peerMaxConcurrentStreams: number | null;
  /** Effective stream limit: min(peer limit, the handler's `maxConcurrentStreams`); `null` = unlimited. */
  streamLimit: number | null;
  /** Age, ms. */
  ageMs: number;
}

/** HTTP/2 block of an origin snapshot. @public */
export interface Http2OriginStats {
  /** Pooled sessions open (connecting, ready or closing). */
  sessionsOpen: number;
  /** Isolated sessions open. */
  isolatedSessionsOpen: number;
  /** Streams open on all sessions of the origin. */
  activeStreams: number;
  /**
   * Streams waiting for a stream slot (every pooled session at its limit and `maxSessionsPerOrigin` reached) or, with
   * `disableConcurrentStreams`, requests waiting for an isolated session (`maxIsolatedSessionsPerOrigin` reached).
   */
  streamsWaiting: number;
  /** The bound on pooled sessions; `null` = unbounded. */
  maxSessions: number | null;
  /** The handler's own cap on streams per session (`maxConcurrentStreams`); `null` = none. */
  maxConcurrentStreams: number | null;
  /** Smallest peer `maxConcurrentStreams` over the ready sessions; `null` when none is known. */
  peerMaxConcurrentStreams: number | null;
  /** Every open session. */
  sessions: Http2SessionStats[];
  /** Sessions created, successful or not. */
  sessionsCreated: number;
  /** Closed sessions by reason. */
  closed: Record<Http2CloseReason, number>;
  /** GOAWAY frames received, by HTTP/2 error code (decimal string, e.g. `"0"` = NO_ERROR). */
  goawayCodes: Record<string, number>;
}

/** Requests of one origin sent outside the pool (one-off agents, one new socket each). @public */
export interface UnpooledStats {
  /** Requests tracked as unpooled (`trackUnpooledRequest()` or `attachUnpooledRequest()`, as the handlers do). */
  started: number;
  /** Not yet closed. */
  inFlight: number;
  /** Closed after response headers arrived, without a request or body error. */
  completed: number;
  /** Closed with an error or without a response (and not reported as aborted / timed out). */
  failed: number;
  /** Reported through `noteOutcome(req, "aborted")`. */
  aborted: number;
  /** Reported through `noteOutcome(req, "timed_out")`. */
  timedOut: number;
  /** TCP connect time of their sockets (DNS lookup included), ms. */
  connectMs: DurationSummary;
}

/** `PoolMonitor.getStats()` result. @public */
export interface PoolStats {
  /** When the snapshot was taken, `performance.now()` ms. */
  takenAt: number;
  /** One entry per origin, in first-seen order. */
  origins: OriginStats[];
  /** Sums over all origins. */
  totals: { active: number; idle: number; queued: number; inFlight: number; saturatedOrigins: number };
}

/**
 * Events delivered to `PoolMonitor.subscribe()` listeners. The same objects are published on the
 * `sockeye:*` diagnostics channels (channel name = `"sockeye:" + type`). Origins only, never paths or headers.
 * @public
 */
export type PoolEvent =
  | { type: "request:enqueued"; origin: string }
  | { type: "request:acquired"; origin: string; waitMs: number; reused: boolean; queued: boolean }
  | { type: "connection:created"; origin: string; connectMs: number; tlsMs: number | null }
  | { type: "connection:closed"; origin: string; ageMs: number; requests: number; reason: CloseReason }
  | { type: "pool:saturated"; origin: string; report: SaturationReport }
  | { type: "pool:recovered"; origin: string; report: SaturationReport }
  | RequestFinishedEvent;

/**
 * One request's end (`request:finished`, channel `sockeye:request:finished`): published once per `handle()` call, at
 * the place its outcome is counted, only when someone listens. Every field is bounded and secret-free: the origin
 * (never a path, query, header value or body), the method reduced to the known HTTP methods, an error class, sizes.
 * The fields map onto OpenTelemetry's `http.client.request.duration` and its attributes (see `@sockeye/opentelemetry`).
 * @public
 */
export interface RequestFinishedEvent {
  type: "request:finished";
  /** `scheme://host:port`, or `_OTHER` for origins beyond `maxOrigins`. */
  origin: string;
  /** `http:` / `https:` origin scheme without the colon; `null` when unknown. Also known for an `_OTHER` origin. */
  scheme: "http" | "https" | null;
  /**
   * The request method when it is one of `CONNECT`, `DELETE`, `GET`, `HEAD`, `OPTIONS`, `PATCH`, `POST`, `PUT`,
   * `QUERY`, `TRACE` (exact, case-sensitive, as OpenTelemetry's semantic conventions define), else `_OTHER`. The
   * environment variable `OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS` (comma-separated, read once at load) replaces the
   * list.
   */
  method: string;
  /** The response status code, `null` when no response arrived. */
  statusCode: number | null;
  /** How the request ended (as counted in `OriginStats.requests`). */
  outcome: RequestOutcome;
  /**
   * Class of the error the request ended with (OpenTelemetry `error.type`), `null` when it completed with a status
   * below 400. For a failure: the error's `code` when it is an identifier such as `ECONNREFUSED`, `ECONNRESET`,
   * `ETIMEDOUT`, `UND_ERR_SOCKET`, `ERR_HANDLER_DESTROYED`; else its `name` when it is a class name other than
   * `Error` (`TimeoutError`, `AbortError`); else `_OTHER`. A completed request with status >= 400: the status code as
   * a string (`"404"`, `"500"`).
   */
  errorType: string | null;
  /**
   * From `handle()` (the request's `startedAt`) to the end of the response body (read to its end, destroyed, or
   * failed), or to the failure of a request that got no response, ms. A response whose body is never read nor
   * destroyed never finishes (it is counted in `unconsumed`).
   */
  durationMs: number;
  /** Negotiated HTTP version: `"1.1"` or `"2"`; `null` when the handler cannot know it (undici may negotiate h2). */
  protocolVersion: "1.1" | "2" | null;
  /** The request's `Content-Length`, bytes; `null` when it had none (no body, or a stream of unknown length). */
  requestBodySize: number | null;
  /** The response's `Content-Length`, bytes; `null` when there was no response or it had none (chunked). */
  responseBodySize: number | null;
  /**
   * For a request that waited for a connection (or stream slot) and left the queue without ever getting one (timed
   * out, aborted, handler destroyed): how long it waited, ms. `null` otherwise; a request that got a connection
   * reported its wait in `request:acquired`.
   */
  queuedMs: number | null;
}

/**
 * Listener for `PoolMonitor.subscribe()`. Called synchronously on the hot path: keep it cheap. A throwing
 * listener is ignored.
 * @public
 */
export type PoolEventListener = (event: PoolEvent) => void;
