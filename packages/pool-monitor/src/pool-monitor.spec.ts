/**
 * PoolMonitor under fake timers (clock and interval faked; socket I/O is real loopback traffic, which
 * Node drives through its internal timers and libuv, not the faked globals). The fake clock only
 * moves when the test advances it, so measured durations are exact.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import http from "node:http";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { CHANNEL_NAMES } from "./diagnostics";
import { PoolMonitor } from "./pool-monitor";
import type { PoolEvent, SaturationReport } from "./pool-stats";
import { fire, startTestServer } from "./test-server.mock";
import { timing } from "./timing";

const cleanups: (() => unknown)[] = [];
beforeEach(() => {
  vi.useFakeTimers({
    toFake: [
      "setTimeout",
      "clearTimeout",
      "setInterval",
      "clearInterval",
      "setImmediate",
      "clearImmediate",
      "Date",
      "performance",
    ],
  });
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.useRealTimers();
});

async function setup(maxSockets = 1, options: ConstructorParameters<typeof PoolMonitor>[0] = {}, autoRespond = false) {
  const server = await startTestServer({ autoRespond });
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const monitor = new PoolMonitor(options);
  cleanups.push(
    () => server.close(),
    () => agent.destroy(),
    () => monitor.destroy()
  );
  return { server, agent, monitor };
}

const stats = (monitor: PoolMonitor) => monitor.getStats().origins[0];
/** Only the embedder's own 'socket' listener: the monitor added none. */
const req0Listeners = (req: http.ClientRequest) => req.listenerCount("socket");

describe("PoolMonitor (fake clock)", () => {
  it("gives the same telemetry when the embedder forwards request events (listen = false)", async () => {
    const { server, agent, monitor } = await setup(1);
    const fired = [fire(monitor, agent, server, true, false), fire(monitor, agent, server, true, false)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(300);
    expect(stats(monitor)).toMatchObject({ active: 1, queued: 1, oldestQueuedMs: 300, inFlight: 2 });
    server.release();
    await server.waitForPending(1);
    server.release();
    await Promise.all(fired.map((f) => f.closed));
    const s = stats(monitor);
    expect(s.requests).toMatchObject({ started: 2, completed: 2, failed: 0 });
    expect(s.sockets.reusedAcquisitions).toBe(1);
    expect(s.queueWaitMs.count).toBe(2);
    expect(s.queueWaitMs.max).toBeGreaterThanOrEqual(300);
    expect(req0Listeners(fired[0].req)).toBe(1);
  });

  it("measures queue wait and oldest queued age exactly on the fake clock", async () => {
    const { server, agent, monitor } = await setup(1);
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(300);
    expect(stats(monitor)).toMatchObject({ active: 1, queued: 1, oldestQueuedMs: 300, inFlight: 2 });
    vi.advanceTimersByTime(400);
    server.release(1);
    await server.waitForPending(1);
    const s = stats(monitor);
    expect(s.queued).toBe(0);
    expect(s.queueWaitMs.count).toBe(2);
    expect(s.queueWaitMs.max).toBe(700);
    expect(s.queueWaitMs.p50).toBe(0.001); // the first request got its socket at once (recorded as 1 µs)
    server.release();
    await Promise.all(fired.map((f) => f.closed));
    expect(stats(monitor).requests).toEqual({ started: 2, completed: 2, failed: 0, aborted: 0, timedOut: 0 });
    expect(stats(monitor).sockets).toMatchObject({ created: 1, acquisitions: 2, reusedAcquisitions: 1 });
  });

  it("standalone: creates one unref'd interval on the first request after start() and clears it when idle", async () => {
    const { server, agent, monitor } = await setup(2, { sampleIntervalMs: 1000 });
    const setSpy = vi.spyOn(timing, "setInterval");
    cleanups.push(() => setSpy.mockRestore());
    const f0 = fire(monitor, agent, server);
    expect(vi.getTimerCount()).toBe(0); // not started: no timer
    await server.waitForPending(1);
    server.release();
    await f0.closed;

    monitor.start();
    expect(vi.getTimerCount()).toBe(0); // lazy: nothing in flight yet
    const f1 = fire(monitor, agent, server);
    const f2 = fire(monitor, agent, server);
    expect(vi.getTimerCount()).toBe(1);
    expect(setSpy).toHaveBeenCalledTimes(1);
    expect(setSpy.mock.calls[0][1]).toBe(monitor.sampleIntervalMs);
    expect(monitor.sampleIntervalMs).toBe(1000);
    const ticker = setSpy.mock.results[0].value as NodeJS.Timeout;
    expect(ticker.hasRef()).toBe(false);
    await server.waitForPending(2);
    vi.advanceTimersByTime(1000);
    expect(vi.getTimerCount()).toBe(1); // busy: keeps ticking
    server.release();
    await Promise.all([f1.closed, f2.closed]);
    expect(monitor.busy).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(vi.getTimerCount()).toBe(0); // first idle tick stopped it
    expect(setSpy).toHaveBeenCalledTimes(1);

    monitor.stop();
    const f3 = fire(monitor, agent, server);
    expect(vi.getTimerCount()).toBe(0);
    await server.waitForPending(1);
    server.release();
    await f3.closed;
  });

  it("warns on a stall via its own interval, rate-limits the log per origin, survives a throwing callback, reports recovery", async () => {
    const warnings: string[] = [];
    const recoveries: SaturationReport[] = [];
    let saturationCalls = 0;
    const { server, agent, monitor } = await setup(1, {
      logger: { warn: (m) => warnings.push(m) },
      messagePrefix: "[pool] ",
      onSaturation: () => {
        saturationCalls++;
        throw new Error("callback bug");
      },
      onRecovery: (r) => recoveries.push(r),
    });
    monitor.start();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(4000);
    expect(saturationCalls).toBe(0);
    vi.advanceTimersByTime(1000); // 5th sample
    expect(saturationCalls).toBe(1);
    expect(warnings[0]).toMatch(/^\[pool\] socket usage at capacity=1 and 2 additional requests are enqueued/);
    expect(warnings[0]).toContain("state=stalled, oldest queued 5000 ms");
    expect(warnings[1]).toBe("[pool] onSaturation callback threw Error; the monitor continues.");
    expect(stats(monitor).saturation).toMatchObject({ state: "stalled", cause: "no_progress", episodes: 1 });

    vi.advanceTimersByTime(14_000);
    expect(warnings).toHaveLength(2); // within the 15 s lockout
    vi.advanceTimersByTime(1000);
    expect(warnings).toHaveLength(3); // reminder
    expect(warnings[2]).toContain("oldest queued 20000 ms");
    expect(saturationCalls).toBe(1); // callbacks only on transitions

    for (const f of fired) {
      monitor.noteOutcome(f.req, "aborted");
      f.req.destroy();
    }
    await Promise.all(fired.map((f) => f.closed));
    expect(monitor.busy).toBe(true);
    vi.advanceTimersByTime(5000);
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]).toMatchObject({ state: "ok", previousState: "stalled", origin: server.origin });
    expect(monitor.busy).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(stats(monitor).requests).toMatchObject({ started: 3, aborted: 3 });
    expect(stats(monitor).sockets.closed.aborted).toBe(1);
  });

  it("sends no reminder once the queue drained while recovery is still pending", async () => {
    const warnings: string[] = [];
    const { server, agent, monitor } = await setup(1, {
      logger: { warn: (m) => warnings.push(m) },
      warningLockoutMs: 1000,
    });
    monitor.start();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(5000);
    expect(warnings).toHaveLength(1);
    for (const f of fired) {
      monitor.noteOutcome(f.req, "aborted");
      f.req.destroy();
    }
    await Promise.all(fired.map((f) => f.closed));
    const before = warnings.length;
    vi.advanceTimersByTime(6000); // recovery streak, lockout long over
    expect(warnings.slice(before).filter((w) => w.includes("capacity=0"))).toEqual([]);
    expect(warnings).toHaveLength(before);
    expect(stats(monitor).saturation.state).toBe("ok");
  });

  it("noteOutcome after close moves the request from failed to the noted outcome", async () => {
    const { server, agent, monitor } = await setup(1);
    const f = fire(monitor, agent, server);
    f.response.catch(() => undefined);
    await server.waitForPending(1);
    f.req.destroy();
    await f.closed;
    expect(stats(monitor).requests).toMatchObject({ failed: 1, timedOut: 0 });
    monitor.noteOutcome(f.req, "timed_out");
    expect(stats(monitor).requests).toMatchObject({ failed: 0, timedOut: 1 });
    monitor.noteOutcome(f.req, "aborted"); // first note wins
    expect(stats(monitor).requests).toMatchObject({ failed: 0, timedOut: 1, aborted: 0 });
  });

  it("aggregates origins beyond maxOrigins under _OTHER", async () => {
    const { server, agent, monitor } = await setup(2, { maxOrigins: 1 }, true);
    const other = await startTestServer({ autoRespond: true });
    cleanups.push(() => other.close());
    const fired = [fire(monitor, agent, server), fire(monitor, agent, other), fire(monitor, agent, other)];
    await Promise.all(fired.map((f) => f.closed));
    const s = monitor.getStats();
    expect(s.origins.map((o) => [o.origin, o.requests.completed])).toEqual([
      [server.origin, 1],
      ["_OTHER", 2],
    ]);
    expect(s.totals).toMatchObject({ active: 0, idle: 3, queued: 0, inFlight: 0, saturatedOrigins: 0 });
  });

  it("delivers events to subscribers and diagnostics channels only while subscribed; a throwing listener is ignored", async () => {
    const { server, agent, monitor } = await setup(1, {}, true);
    const events: PoolEvent[] = [];
    const unsubscribe = monitor.subscribe((e) => events.push(e));
    monitor.subscribe(() => {
      throw new Error("listener bug");
    });
    const published: unknown[] = [];
    const onMessage = (m: unknown) => published.push(m);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.requestAcquired, onMessage);
    cleanups.push(() => diagnosticsChannel.unsubscribe(CHANNEL_NAMES.requestAcquired, onMessage));
    await fire(monitor, agent, server).closed;
    expect(events.map((e) => e.type)).toEqual(["request:acquired", "connection:created"]);
    expect(published).toEqual([
      { type: "request:acquired", origin: server.origin, waitMs: 0, reused: false, queued: false },
    ]);
    unsubscribe();
    await fire(monitor, agent, server).closed;
    expect(events).toHaveLength(2);
    expect(published).toHaveLength(2);
    expect(stats(monitor).sockets.reusedAcquisitions).toBe(1);
    expect(() => monitor.subscribe(42 as never)).toThrow(/subscribe\(listener\) expects a function; received number/);
  });

  it("destroy() clears the interval and the state; later calls are no-ops", async () => {
    const { server, agent, monitor } = await setup(1);
    monitor.start();
    const f = fire(monitor, agent, server);
    expect(vi.getTimerCount()).toBe(1);
    monitor.destroy();
    expect(vi.getTimerCount()).toBe(0);
    expect(monitor.busy).toBe(false);
    expect(monitor.getStats().origins).toEqual([]);
    fire(monitor, agent, server).req.destroy();
    monitor.sample(timing.now());
    monitor.start();
    expect(vi.getTimerCount()).toBe(0);
    expect(monitor.getStats().origins).toEqual([]);
    await server.waitForPending(1);
    server.release();
    await f.closed;
  });
});
