import type { Logger } from "@smithy/types";
import type { Agent } from "node:http";
import { guardedWarn, timing } from "@sockeye/pool-monitor/internal";
import { SOCKET_WARNING_LOCKOUT_MS } from "./constants";

/** The package name upstream's warning starts with. */
const UPSTREAM_PACKAGE = "@smithy/node-http-handler";

/**
 * Upstream's point-in-time socket check, same contract: unless the agent has no finite `maxSockets` or the last
 * warning is under 15 s old, warns once for the first agent key with sockets in use `>= maxSockets` and
 * `>= 2 × maxSockets` queued, and returns `Date.now()`. The message is upstream's byte for byte, so existing log
 * alerts still match. A throwing logger is ignored.
 * @param packageName - the package the message names. @defaultValue `"@smithy/node-http-handler"`
 * @param queue - the handler's own queue in front of the agent (`AgentGate`), counted as enqueued too.
 * @internal
 */
export function checkSocketUsage(
  agent: Agent,
  socketWarningTimestamp: number,
  logger: Logger | undefined = console,
  packageName: string = UPSTREAM_PACKAGE,
  queue?: { queuedUnder(name: string): number }
): number {
  const { sockets, requests, maxSockets } = agent;
  if (typeof maxSockets !== "number" || maxSockets === Infinity) return socketWarningTimestamp;
  if (timing.wallNow() - SOCKET_WARNING_LOCKOUT_MS < socketWarningTimestamp) return socketWarningTimestamp;
  if (sockets && requests) {
    for (const key in sockets) {
      if (!Object.hasOwn(sockets, key)) continue;
      const socketsInUse = sockets[key]?.length ?? 0;
      const requestsEnqueued = (requests[key]?.length ?? 0) + (queue?.queuedUnder(key) ?? 0);
      if (socketsInUse >= maxSockets && requestsEnqueued >= 2 * maxSockets) {
        guardedWarn(
          logger,
          `${packageName}:WARN - socket usage at capacity=${socketsInUse} and ${requestsEnqueued} additional requests are enqueued.
See https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/node-configuring-maxsockets.html
or increase socketAcquisitionWarningTimeout=(millis) in the NodeHttpHandler config.`
        );
        return timing.wallNow();
      }
    }
  }
  return socketWarningTimestamp;
}
