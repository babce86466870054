/**
 * UndiciPoolMonitor's request bookkeeping at the clock's edges: a clock reading of 0 (fake timers start there) is a
 * valid acquisition time, not "holds no connection".
 */
import { describe, expect, it } from "vitest";
import type { PoolRequestNode } from "./origin-pool-state";
import { UndiciPoolMonitor } from "./undici-pool-monitor";

function node(startedAt: number): PoolRequestNode {
  return { begunAt: startedAt, heldSince: -1, pausedAt: 0, listTag: 0, listPrev: undefined, listNext: undefined };
}

describe("UndiciPoolMonitor", () => {
  it("counts the completion of a request that got its connection at time 0", () => {
    const monitor = new UndiciPoolMonitor({});
    const o = monitor.originFor("http://127.0.0.1:1");
    const n = node(0);
    monitor.requestStarted(o, n, false);
    monitor.markAcquired(o, n, 0);
    expect(o.holders.nodeCount).toBe(1);
    monitor.requestReleased(o, n, 5);
    monitor.markClosed(o, n, "completed");
    expect(o).toMatchObject({ sampleCompletions: 1, sampleHolds: 1, holdSumMs: 5, holdMaxMs: 5, inFlightCount: 0 });
    expect(o.holders.nodeCount).toBe(0);
    expect(monitor.getStats().origins[0].requests).toMatchObject({ started: 1, completed: 1 });
  });

  it("a release without an acquisition counts nothing", () => {
    const monitor = new UndiciPoolMonitor({});
    const o = monitor.originFor("http://127.0.0.1:1");
    const n = node(0);
    monitor.requestStarted(o, n, false);
    monitor.requestReleased(o, n, 5);
    expect(o.sampleCompletions).toBe(0);
  });
});
