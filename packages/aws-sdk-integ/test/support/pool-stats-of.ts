/**
 * Access to Sockeye's `getPoolStats()` from code written for both handlers: `undefined` for a handler without it
 * (upstream), so Sockeye-only assertions run exactly when the handler under test has the feature.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { NodeHttpHandler as SockeyeNodeHttpHandler } from "@sockeye/node-http-handler";
import type { HandlerInstance } from "./handlers-under-test.js";

/** Sockeye's pool snapshot type. @internal */
export type PoolStats = ReturnType<SockeyeNodeHttpHandler["getPoolStats"]>;

/** Per-origin request counters summed over every origin of `stats`. @internal */
export interface RequestTotals {
  started: number;
  completed: number;
  failed: number;
  aborted: number;
  timedOut: number;
}

/** The handler's `getPoolStats` bound to it, or `undefined` when the handler has none. @internal */
export function poolStatsOf(handler: HandlerInstance): (() => PoolStats) | undefined {
  const candidate = (handler as Partial<Pick<SockeyeNodeHttpHandler, "getPoolStats">>).getPoolStats;
  return typeof candidate === "function" ? () => candidate.call(handler) : undefined;
}

/** Sums the request counters of all origins. @internal */
export function requestTotals(stats: PoolStats): RequestTotals {
  const totals: RequestTotals = { started: 0, completed: 0, failed: 0, aborted: 0, timedOut: 0 };
  for (const origin of stats.origins) {
    totals.started += origin.requests.started;
    totals.completed += origin.requests.completed;
    totals.failed += origin.requests.failed;
    totals.aborted += origin.requests.aborted;
    totals.timedOut += origin.requests.timedOut;
  }
  return totals;
}

/**
 * Waits until the summed request counters equal `expected` (each request is counted when its request and
 * response have closed, which can be a tick after the SDK resolved), then asserts it; fails with the last
 * counters after `withinMs`.
 * @internal
 */
export async function expectRequestTotals(
  stats: () => PoolStats,
  expected: Partial<RequestTotals>,
  withinMs = 2_000
): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const totals = requestTotals(stats());
    const keys = Object.keys(expected) as (keyof RequestTotals)[];
    if (keys.every((key) => totals[key] === expected[key])) return;
    if (Date.now() > deadline) {
      throw new Error(
        `getPoolStats() request counters ${JSON.stringify(totals)} did not reach ${JSON.stringify(expected)} within ${withinMs} ms`
      );
    }
    await sleep(10);
  }
}
