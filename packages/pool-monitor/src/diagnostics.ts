/**
 * Every `diagnostics_channel` channel of the package, created once at load; publishers check `hasSubscribers`, so an
 * unobserved channel costs one property read per event. Payloads are the `PoolEvent` objects `PoolMonitor.subscribe()`
 * listeners get: origins only, never paths, queries, headers or bodies.
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
  bodyReclaimed: "sockeye:body:reclaimed",
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
  bodyReclaimedChannel,
] = Object.values(CHANNEL_NAMES).map((name) => diagnosticsChannel.channel(name));
