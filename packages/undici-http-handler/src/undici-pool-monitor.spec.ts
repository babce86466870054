/**
 * UndiciPoolMonitor's request bookkeeping at the clock's edges: a clock reading of 0 (fake timers start there) is a
 * valid acquisition time, not "holds no connection". The list methods are called with the core's counting methods,
 * as `RequestCore` calls them for a request.
 */
import { describe, expect, it } from "vitest";
import type { PoolRequestNode } from "./origin-pool-state";
import { UndiciPoolMonitor } from "./undici-pool-monitor";

function node(startedAt: number): PoolRequestNode {
  return {
    begunAt: startedAt,
    heldSince: -1,
    pausedAt: 0,
    listTag: 0,
    listPrev: undefined,
    listNext: undefined,
  };
}

describe("UndiciPoolMonitor", () => {
  it("counts the completion of a request that got its connection at time 0", () => {
    const monitor = new UndiciPoolMonitor({});
    const o = monitor.originFor("http://127.0.0.1:1");
    const n = node(0);
    monitor.started(o);
    monitor.requestStarted(o, n, false);
    monitor.acquired(o, 0, monitor.markAcquired(o, n, 0), false);
    expect(o.holders.nodeCount).toBe(1);
    monitor.requestReleased(o, n);
    monitor.released(o, 5 - n.heldSince);
    monitor.markClosed(o, n);
    monitor.finished(o, "completed");
    expect(o).toMatchObject({ sampleCompletions: 1, sampleHolds: 1, holdSumMs: 5, holdMaxMs: 5, inFlightCount: 0 });
    expect(o.holders.nodeCount).toBe(0);
    expect(monitor.getStats().origins[0].requests).toMatchObject({ started: 1, completed: 1 });
  });

  it("a request that waited only for its own new connection is not queued, however long the connect took", () => {
    const monitor = new UndiciPoolMonitor({});
    const o = monitor.originFor("http://127.0.0.1:1");
    o.gatedHere = true;
    o.connLimit = 1;
    const events: unknown[] = [];
    monitor.subscribe((e) => events.push(e));
    const opened = node(0);
    const waited = node(0);
    expect(monitor.requestStarted(o, opened, true)).toBe(false);
    expect(monitor.requestStarted(o, waited, true)).toBe(false);
    // Only the second one had to wait in its gate (the origin was at its limit).
    monitor.enqueued(o);
    o.freshConns = 1;
    monitor.acquired(o, 250, monitor.markAcquired(o, opened, 250), false);
    monitor.acquired(o, 400, monitor.markAcquired(o, waited, 400), true);
    expect(events).toEqual([
      { type: "request:enqueued", origin: o.origin },
      { type: "request:acquired", origin: o.origin, waitMs: 250, reused: false, queued: false },
      { type: "request:acquired", origin: o.origin, waitMs: 400, reused: true, queued: true },
    ]);
  });

  it("a release without an acquisition counts nothing", () => {
    const monitor = new UndiciPoolMonitor({});
    const o = monitor.originFor("http://127.0.0.1:1");
    const n = node(0);
    monitor.requestStarted(o, n, false);
    monitor.requestReleased(o, n);
    expect(o.heldCount).toBe(0);
    expect(o.sampleCompletions).toBe(0);
  });
});
