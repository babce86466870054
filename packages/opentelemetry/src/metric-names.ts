/**
 * Instrument names. Semantic-convention names are used verbatim where they exist (`http.client.*`:
 * `http.client.request.duration` is Stable, the others Development; `http.client.request.time_in_queue` is .NET's
 * name, outside the conventions); everything else lives under a configurable namespace (default `sockeye`), never
 * under an existing semconv namespace.
 */

/** Semantic-convention instrument names used by `registerPoolMetrics`. @public */
export const SEMCONV_METRICS = {
  openConnections: "http.client.open_connections",
  activeRequests: "http.client.active_requests",
  connectionDuration: "http.client.connection.duration",
  timeInQueue: "http.client.request.time_in_queue",
  requestDuration: "http.client.request.duration",
  requestBodySize: "http.client.request.body.size",
  responseBodySize: "http.client.response.body.size",
} as const;

/** Names under the namespace `ns` (default `sockeye`). @public */
export function namespacedMetrics(ns: string) {
  return {
    queuedRequests: `${ns}.pool.queued_requests`,
    oldestQueuedAge: `${ns}.pool.oldest_queued_age`,
    limit: `${ns}.pool.limit`,
    saturationState: `${ns}.pool.saturation.state`,
    unconsumedResponses: `${ns}.response.unconsumed`,
    connectionsCreated: `${ns}.connection.created`,
    connectionsClosed: `${ns}.connection.closed`,
    connectionErrors: `${ns}.connection.errors`,
    acquisitions: `${ns}.connection.acquisitions`,
    requests: `${ns}.requests`,
    connectDuration: `${ns}.connection.connect.duration`,
    // attribute keys
    closeReasonAttr: `${ns}.connection.close_reason`,
    reusedAttr: `${ns}.connection.reused`,
    phaseAttr: `${ns}.connect.phase`,
    causeAttr: `${ns}.saturation.cause`,
    outcomeAttr: `${ns}.request.outcome`,
  } as const;
}
