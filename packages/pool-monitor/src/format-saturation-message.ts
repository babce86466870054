import type { SaturationReport } from "./pool-stats";

/**
 * The human-readable line for a report (without the logger prefix). Always contains
 * `socket usage at capacity=<active> and <queued> additional requests are enqueued` for non-ok states,
 * the phrase users and log alerts know from `@smithy/node-http-handler`.
 * @public
 */
export function formatSaturationMessage(r: SaturationReport): string {
  if (r.state === "ok") {
    return `${r.origin} recovered from ${r.previousState}: ${r.queued} requests enqueued, ${r.active} sockets in use (maxSockets=${r.maxSockets ?? "Infinity"}).`;
  }
  const head =
    `socket usage at capacity=${r.active} and ${r.queued} additional requests are enqueued ` +
    `(origin=${r.origin}, maxSockets=${r.maxSockets ?? "Infinity"}, state=${r.state}, oldest queued ${Math.round(r.oldestQueuedMs)} ms).`;
  const windowS = (r.windowMs / 1000).toFixed(1);
  switch (r.cause) {
    case "unconsumed_bodies":
      return (
        `${head} Cause: ${r.unconsumed.count} responses handed to the caller have not been read or destroyed ` +
        `(oldest ${Math.round(r.unconsumed.oldestMs)} ms) and pin their sockets. Consume or destroy every response body ` +
        "(e.g. S3 GetObject Body); raising maxSockets would only delay the exhaustion."
      );
    case "no_progress":
      return (
        `${head} Cause: no request completed in the last ${windowS} s while every socket is busy; the server may not be ` +
        "answering. Configure requestTimeout/socketTimeout so hung requests fail and release their sockets."
      );
    default:
      return (
        `${head} Cause: ${r.trigger === "rising_troughs" ? "the backlog never drains between bursts" : "the queue keeps growing"} ` +
        `(arrivals ${r.arrivalRate.toFixed(1)}/s, throughput ${r.throughput.toFixed(1)}/s over ${windowS} s, mean socket hold ` +
        `${r.meanHoldMs === null ? "n/a" : `${Math.round(r.meanHoldMs)} ms`}).` +
        (r.recommendedMaxSockets === null
          ? ""
          : ` By Little's law about ${r.recommendedMaxSockets} sockets are needed: raise maxSockets to ${r.recommendedMaxSockets} or limit concurrency.`)
      );
  }
}
