/**
 * Samples a socket pool while requests are in flight, every millisecond: the requests waiting in `agent.requests`
 * (queued for a socket) and the sockets in use (`agent.sockets`), summed over origins; and, when given, the same two
 * numbers as Sockeye's `getPoolStats()` reports them. The test then asserts on the maxima (counts, never timing).
 * Sockeye's `NodeHttpHandler` keeps the requests beyond `maxSockets` in its own queue, not in `agent.requests`
 * (docs/upstream-parity.md): with `getPoolStats` given, "queued" is the larger of `agent.requests` and the stats'
 * `totals.queued` (which counts both).
 * One interval, cleared by `stop()`.
 */
import type http from "node:http";
import type { PoolStats } from "./pool-stats-of.js";

/** Maxima seen between `start` and `stop`. @internal */
export interface AgentQueueSample {
  /** Largest total of queued requests seen in `agent.requests` (or, with stats, in the stats' `totals.queued`). */
  maxQueued: number;
  /** Largest total of sockets in use seen in `agent.sockets`. */
  maxInUse: number;
  /** Largest number of sockets in use seen while some request was queued. */
  maxInUseWhileQueued: number;
  /** Largest `totals.queued` reported by `getPoolStats()` (0 when not sampled). */
  maxStatsQueued: number;
  /** Largest `totals.active` reported by `getPoolStats()` (0 when not sampled). */
  maxStatsActive: number;
  samples: number;
}

function total(map: NodeJS.ReadOnlyDict<readonly unknown[]>): number {
  let n = 0;
  for (const key in map) n += map[key]?.length ?? 0;
  return n;
}

/** Starts sampling `agent` (and `getPoolStats` if given); `stop()` clears the interval and returns the maxima. @internal */
export function sampleAgentQueue(agent: http.Agent, getPoolStats?: () => PoolStats): { stop(): AgentQueueSample } {
  const result: AgentQueueSample = {
    maxQueued: 0,
    maxInUse: 0,
    maxInUseWhileQueued: 0,
    maxStatsQueued: 0,
    maxStatsActive: 0,
    samples: 0,
  };
  const take = (): void => {
    const inAgent = total(agent.requests);
    const inUse = total(agent.sockets);
    const totals = getPoolStats?.().totals;
    const queued = totals !== undefined ? Math.max(inAgent, totals.queued) : inAgent;
    result.samples++;
    if (queued > result.maxQueued) result.maxQueued = queued;
    if (inUse > result.maxInUse) result.maxInUse = inUse;
    if (queued > 0 && inUse > result.maxInUseWhileQueued) result.maxInUseWhileQueued = inUse;
    if (totals !== undefined) {
      if (totals.queued > result.maxStatsQueued) result.maxStatsQueued = totals.queued;
      if (totals.active > result.maxStatsActive) result.maxStatsActive = totals.active;
    }
  };
  const timer = setInterval(take, 1);
  return {
    stop() {
      clearInterval(timer);
      take();
      return result;
    },
  };
}
