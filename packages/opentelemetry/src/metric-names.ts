/**
 * Instrument names: semantic-convention names verbatim where they exist (`http.client.request.time_in_queue` is
 * .NET's), everything else under a configurable namespace, never under an existing semconv one.
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
    reclaimedResponses: `${ns}.response.reclaimed`,
    connectionsCreated: `${ns}.connection.created`,
    connectionsClosed: `${ns}.connection.closed`,
    connectionErrors: `${ns}.connection.errors`,
    acquisitions: `${ns}.connection.acquisitions`,
    requests: `${ns}.requests`,
    queueFullRequests: `${ns}.request.queue_full`,
    refusedStreams: `${ns}.stream.refused`,
    connectDuration: `${ns}.connection.connect.duration`,
    // attribute keys
    closeReasonAttr: `${ns}.connection.close_reason`,
    reusedAttr: `${ns}.connection.reused`,
    phaseAttr: `${ns}.connect.phase`,
    causeAttr: `${ns}.saturation.cause`,
    outcomeAttr: `${ns}.request.outcome`,
  } as const;
}
