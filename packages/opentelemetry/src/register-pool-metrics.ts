/**
 * Bridges a `PoolMonitor` (or anything with `getStats()`) to OpenTelemetry metrics. Costs: ONE batch callback calls
 * `getStats()` once per collection; histograms subscribe only on a real SDK meter (a subscription makes the handler
 * build a `request:finished` event per request), then cost one cached attribute lookup and a `record()` per event.
 */
import {
  type Attributes,
  type BatchObservableResult,
  createNoopMeter,
  type Meter,
  type MeterProvider,
  metrics,
  type Observable,
} from "@opentelemetry/api";
import type { CloseReason, PoolEvent, PoolStats } from "@sockeye/pool-monitor";
import { applyOptionRules, BOOLEAN, describeValue, type OptionRules } from "@sockeye/pool-monitor/internal";
import { autoRequestDuration } from "./auto-request-duration";
import { namespacedMetrics, SEMCONV_METRICS } from "./metric-names";
import { OriginAttributeCache } from "./origin-attributes";

/** A `PoolMonitor`, or any object returning a `PoolStats` snapshot; histograms require `subscribe`. @public */
export interface PoolMetricsSource {
  getStats(): PoolStats;
  subscribe?(listener: (event: PoolEvent) => void): () => void;
}

/** Options of {@link registerPoolMetrics}. @public */
export interface PoolMetricsOptions {
  /** Meter provider to use. @defaultValue the global provider (`metrics.getMeterProvider()`) */
  meterProvider?: MeterProvider;
  /** Prefix of the non-semconv instruments and attributes, e.g. `sockeye.pool.queued_requests`. @defaultValue `"sockeye"` */
  namespace?: string;
  /**
   * Record `http.client.request.duration` (Histogram, `s`; Stable in the semantic conventions), one value per finished
   * request, from `handle()` to the end of its response body or its failure. `"auto"`: only for requests that no
   * OpenTelemetry HTTP instrumentation (`@opentelemetry/instrumentation-http`, `-undici`) records on the same
   * `meterProvider`; `true`: every request; `false`: none. @defaultValue `"auto"`
   */
  requestDuration?: boolean | "auto";
  /**
   * Record `http.client.request.body.size` and `http.client.response.body.size` (Histograms, `By`; opt-in and
   * Development in the semantic conventions), from `Content-Length` when the request / response had one.
   * @defaultValue `false`
   */
  bodySize?: boolean;
  /**
   * Record `http.client.request.time_in_queue` (Histogram, `s`) for every request that waited for a connection,
   * including those that left the queue without one (timed out, aborted). @defaultValue `true`
   */
  timeInQueue?: boolean;
  /**
   * Origins with attributes of their own (1..100000); data of further origins carries `server.address="_OTHER"`. The
   * monitors' own `maxOrigins` applies first. @defaultValue `256`
   */
  maxOrigins?: number;
}

/** Handle returned by {@link registerPoolMetrics}. @public */
export interface PoolMetricsRegistration {
  /** Stops observing and unsubscribes from the monitor. Idempotent. */
  unregister(): void;
}

/** Semconv (and .NET) bucket boundaries of `http.client.request.duration` and the time in queue, seconds. */
const REQUEST_DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Body sizes, bytes: powers of 4 up to 1 GiB (the SDK's default boundaries stop at 10000). */
const BODY_SIZE_BUCKETS_BY = [
  0, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456, 1073741824,
];
const CONNECTION_DURATION_BUCKETS_S = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const CONNECT_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const STATE_VALUE = { ok: 0, saturated: 1, stalled: 2 } as const;
const OUTCOMES = [
  ["completed", "completed"],
  ["failed", "failed"],
  ["aborted", "aborted"],
  ["timedOut", "timed_out"],
] as const;

const PKG = "@sockeye/opentelemetry";

/** The checks of {@link PoolMetricsOptions}, in order; `null` counts as unset. */
const OPTION_RULES: OptionRules = {
  namespace: [
    (value) => typeof value === "string" && /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/.test(value),
    'a dot-separated lowercase name such as "sockeye" or "com.example.http"',
  ],
  requestDuration: [(value) => value === "auto" || typeof value === "boolean", '"auto", true or false'],
  bodySize: BOOLEAN,
  timeInQueue: BOOLEAN,
  maxOrigins: [(value) => Number.isInteger(value) && value >= 1 && value <= 100_000, "an integer from 1 to 100000"],
};
/** package.json's version, defined at build time (tsup `define`); undeclared when the source runs unbuilt. */
declare const __SOCKEYE_OPENTELEMETRY_VERSION__: string | undefined;
const VERSION =
  typeof __SOCKEYE_OPENTELEMETRY_VERSION__ === "string" ? __SOCKEYE_OPENTELEMETRY_VERSION__ : "0.0.0-source";

/**
 * Registers OpenTelemetry instruments for the socket pools seen by `source`: semantic-convention `http.client.*` and
 * namespaced `<ns>.pool.*`, `<ns>.connection.*`, `<ns>.requests` (the README's table lists them). Histograms need
 * `source.subscribe()`; `unregister()` on the returned handle stops the reporting. @public
 */
export function registerPoolMetrics(
  source: PoolMetricsSource,
  options: PoolMetricsOptions = {}
): PoolMetricsRegistration {
  if (source === null || typeof source !== "object" || typeof source.getStats !== "function") {
    throw new TypeError(
      `${PKG} - registerPoolMetrics(source) expects an object with getStats(); received ${source !== null && typeof source === "object" ? "an object without getStats()" : describeValue(source)}.`
    );
  }
  const checked = applyOptionRules(OPTION_RULES, options, PKG);
  const ns = checked.namespace ?? "sockeye";
  const durationMode = checked.requestDuration ?? "auto";
  const recordBodySize = checked.bodySize ?? false;
  const recordTimeInQueue = checked.timeInQueue ?? true;
  const maxOrigins = checked.maxOrigins ?? 256;
  const provider = checked.meterProvider ?? metrics.getMeterProvider();
  const meter: Meter = provider.getMeter(PKG, VERSION);
  const names = namespacedMetrics(ns);
  const attrs = new OriginAttributeCache(maxOrigins);

  // Every observable instrument, for the one batch callback.
  const observables: Observable[] = [];
  const added = <T extends Observable>(instrument: T): T => {
    observables.push(instrument);
    return instrument;
  };
  const upDown = (name: string, description: string, unit: string) =>
    added(meter.createObservableUpDownCounter(name, { description, unit }));
  const counter = (name: string, description: string, unit: string) =>
    added(meter.createObservableCounter(name, { description, unit }));
  const gauge = (name: string, description: string, unit: string) =>
    added(meter.createObservableGauge(name, { description, unit }));
  const openConnections = upDown(
    SEMCONV_METRICS.openConnections,
    "Number of outbound HTTP connections that are currently active or idle on the client.",
    "{connection}"
  );
  const activeRequests = upDown(
    SEMCONV_METRICS.activeRequests,
    "Number of active HTTP requests (queued for a connection or in progress).",
    "{request}"
  );
  const queuedRequests = upDown(names.queuedRequests, "Requests waiting in the agent queue for a socket.", "{request}");
  const oldestQueuedAge = gauge(
    names.oldestQueuedAge,
    "Age of the oldest request waiting for a socket (0 when none).",
    "s"
  );
  const limit = upDown(
    names.limit,
    "Socket limit per origin (agent maxSockets); not reported when unlimited.",
    "{connection}"
  );
  const saturationState = gauge(names.saturationState, "Saturation detector state: 0 ok, 1 saturated, 2 stalled.", "1");
  const unconsumed = upDown(
    names.unconsumedResponses,
    "Responses handed to the caller whose body was neither read nor destroyed for unconsumedBodyMs.",
    "{response}"
  );
  const reclaimed = counter(
    names.reclaimedResponses,
    "Responses whose body was dropped unread and garbage-collected while still open; their connections were freed.",
    "{response}"
  );
  const created = counter(
    names.connectionsCreated,
    "Connections opened (attempts, successful or not).",
    "{connection}"
  );
  const closed = counter(names.connectionsClosed, "Connections closed, by reason.", "{connection}");
  const errors = counter(names.connectionErrors, "Socket error events.", "{error}");
  const acquisitions = counter(
    names.acquisitions,
    "Socket acquisitions by requests; reused=true when the socket had served a request before.",
    "{request}"
  );
  const requests = counter(names.requests, "Finished requests by outcome.", "{request}");
  const queueFull = counter(
    names.queueFullRequests,
    "Requests rejected at once because the origin's queue already held maxQueuedRequests (also counted as failed).",
    "{request}"
  );
  const refusedStreams = counter(
    names.refusedStreams,
    "HTTP/2 streams the peer refused before answering (REFUSED_STREAM, ENHANCE_YOUR_CALM), sent again or not.",
    "{stream}"
  );

  // HTTP/2 origins' open connections are sessions, tagged `network.protocol.version = "2"`.
  const h2StateAttrs = new Map<string, Attributes>();
  const connectionAttrs = (origin: string, state: "active" | "idle", http2: boolean): Attributes => {
    const plain = attrs.with(origin, "http.connection.state", state);
    if (!http2) return plain;
    const id = `${origin}\n${state}`;
    let tagged = h2StateAttrs.get(id);
    if (tagged === undefined) {
      tagged = Object.freeze({ ...plain, "network.protocol.version": "2" });
      h2StateAttrs.set(id, tagged);
    }
    return tagged;
  };

  const observe = (result: BatchObservableResult): void => {
    const stats = source.getStats();
    for (const o of stats.origins) {
      const origin = o.origin;
      const base = attrs.get(origin).base;
      const http2 = o.http2 !== undefined;
      result.observe(openConnections, o.active, connectionAttrs(origin, "active", http2));
      result.observe(openConnections, o.idle, connectionAttrs(origin, "idle", http2));
      result.observe(activeRequests, o.inFlight, base);
      result.observe(queuedRequests, o.queued, base);
      result.observe(oldestQueuedAge, o.oldestQueuedMs / 1000, base);
      if (o.maxSockets !== null) result.observe(limit, o.maxSockets, base);
      const sat = o.saturation;
      result.observe(
        saturationState,
        STATE_VALUE[sat.state],
        sat.cause === null ? base : attrs.with(origin, names.causeAttr, sat.cause)
      );
      result.observe(unconsumed, o.unconsumed.count, base);
      result.observe(reclaimed, o.bodiesReclaimed, base);
      result.observe(created, o.sockets.created, base);
      for (const reason of Object.keys(o.sockets.closed) as CloseReason[]) {
        const n = o.sockets.closed[reason];
        if (n !== 0) result.observe(closed, n, attrs.with(origin, names.closeReasonAttr, reason));
      }
      result.observe(errors, o.sockets.errors, base);
      result.observe(acquisitions, o.sockets.reusedAcquisitions, attrs.with(origin, names.reusedAttr, true));
      result.observe(
        acquisitions,
        o.sockets.acquisitions - o.sockets.reusedAcquisitions,
        attrs.with(origin, names.reusedAttr, false)
      );
      for (const [field, value] of OUTCOMES) {
        result.observe(requests, o.requests[field], attrs.with(origin, names.outcomeAttr, value));
      }
      result.observe(queueFull, o.requests.queueFull, base);
      if (o.http2 !== undefined) result.observe(refusedStreams, o.http2.streamsRefused, base);
    }
  };
  meter.addBatchObservableCallback(observe, observables);

  let unsubscribe: (() => void) | undefined;
  const isNoop = meter.constructor === createNoopMeter().constructor;
  if (typeof source.subscribe === "function" && !isNoop) {
    const histogram = (name: string, description: string, unit: string, buckets: number[]) =>
      meter.createHistogram(name, { description, unit, advice: { explicitBucketBoundaries: buckets } });
    const timeInQueue = recordTimeInQueue
      ? histogram(
          SEMCONV_METRICS.timeInQueue,
          "Time requests spent waiting for a connection (only requests that queued, whether they got one or not).",
          "s",
          REQUEST_DURATION_BUCKETS_S
        )
      : undefined;
    const requestDuration = durationMode
      ? histogram(SEMCONV_METRICS.requestDuration, "Duration of HTTP client requests.", "s", REQUEST_DURATION_BUCKETS_S)
      : undefined;
    const requestBodySize = recordBodySize
      ? histogram(SEMCONV_METRICS.requestBodySize, "Size of HTTP client request bodies.", "By", BODY_SIZE_BUCKETS_BY)
      : undefined;
    const responseBodySize = recordBodySize
      ? histogram(SEMCONV_METRICS.responseBodySize, "Size of HTTP client response bodies.", "By", BODY_SIZE_BUCKETS_BY)
      : undefined;
    const connectionDuration = histogram(
      SEMCONV_METRICS.connectionDuration,
      "The duration of the successfully established outbound HTTP connections.",
      "s",
      CONNECTION_DURATION_BUCKETS_S
    );
    const connectDuration = histogram(
      names.connectDuration,
      "Connection setup time by phase: tcp (DNS lookup + TCP connect) and tls (handshake).",
      "s",
      CONNECT_BUCKETS_S
    );
    const recordsDuration =
      requestDuration !== undefined && durationMode === "auto" ? autoRequestDuration(provider) : undefined;
    const onEvent = (e: PoolEvent): void => {
      switch (e.type) {
        case "request:acquired":
          if (e.queued) timeInQueue?.record(e.waitMs / 1000, attrs.get(e.origin).base);
          break;
        case "request:finished": {
          if (e.queuedMs !== null) timeInQueue?.record(e.queuedMs / 1000, attrs.get(e.origin).base);
          if (requestDuration === undefined && requestBodySize === undefined) break;
          const requestAttrs = attrs.request(e);
          if (recordsDuration?.(e) ?? true) requestDuration?.record(e.durationMs / 1000, requestAttrs);
          if (e.requestBodySize !== null) requestBodySize?.record(e.requestBodySize, requestAttrs);
          if (e.responseBodySize !== null) responseBodySize?.record(e.responseBodySize, requestAttrs);
          break;
        }
        case "connection:created":
          connectDuration.record(e.connectMs / 1000, attrs.with(e.origin, names.phaseAttr, "tcp"));
          if (e.tlsMs !== null) connectDuration.record(e.tlsMs / 1000, attrs.with(e.origin, names.phaseAttr, "tls"));
          break;
        case "connection:closed":
          if (e.reason !== "connect_error") {
            connectionDuration.record(e.ageMs / 1000, attrs.with(e.origin, names.closeReasonAttr, e.reason));
          }
          break;
      }
    };
    unsubscribe = source.subscribe(onEvent);
  }

  let active = true;
  return {
    unregister() {
      if (!active) return;
      active = false;
      meter.removeBatchObservableCallback(observe, observables);
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}
