/**
 * All `diagnostics_channel` channels of the package, in one place.
 *
 * Channels are created once at module load (`channel()` is idempotent and cheap) and publishing is
 * always guarded by `channel.hasSubscribers`, so an unobserved channel costs one property read per
 * event. Payloads are the `PoolEvent` objects also given to `PoolMonitor.subscribe()` listeners; they
 * carry origins (`scheme://host:port`) only, never paths, query strings, headers or bodies.
 *
 * | channel | payload |
 * |---|---|
 * | `sockeye:request:enqueued` | `{ type, origin }` |
 * | `sockeye:request:acquired` | `{ type, origin, waitMs, reused, queued }` |
 * | `sockeye:connection:created` | `{ type, origin, connectMs, tlsMs }` |
 * | `sockeye:connection:closed` | `{ type, origin, ageMs, requests, reason }` |
 * | `sockeye:pool:saturated` | `{ type, origin, report }` |
 * | `sockeye:pool:recovered` | `{ type, origin, report }` |
 * | `sockeye:request:finished` | `RequestFinishedEvent` (`{ type, origin, scheme, method, statusCode, outcome, errorType, durationMs, protocolVersion, requestBodySize, responseBodySize, queuedMs }`) |
 */
import diagnosticsChannel from "node:diagnostics_channel";

/** Channel names, exported so subscribers need not hard-code them. @public */
export const CHANNEL_NAMES = {
  requestEnqueued: "sockeye:request:enqueued",
  requestAcquired: "sockeye:request:acquired",
  connectionCreated: "sockeye:connection:created",
  connectionClosed: "sockeye:connection:closed",
  poolSaturated: "sockeye:pool:saturated",
  poolRecovered: "sockeye:pool:recovered",
  requestFinished: "sockeye:request:finished",
} as const;

/** The channel of each name, in the order of `CHANNEL_NAMES` (created once, at load). @internal */
export const [
  requestEnqueuedChannel,
  requestAcquiredChannel,
  connectionCreatedChannel,
  connectionClosedChannel,
  poolSaturatedChannel,
  poolRecoveredChannel,
  requestFinishedChannel,
] = Object.values(CHANNEL_NAMES).map((name) => diagnosticsChannel.channel(name));
