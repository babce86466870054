/**
 * PoolMonitor under fake timers (clock and interval faked; socket I/O is real loopback traffic, which
 * Node drives through its internal timers and libuv, not the faked globals). The fake clock only
 * moves when the test advances it, so measured durations are exact.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import { errorMonitor } from "node:events";
import http from "node:http";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { CHANNEL_NAMES } from "./diagnostics";
import { PoolMonitor } from "./pool-monitor";
import type { PoolEvent, SaturationReport } from "./pool-stats";
import { FAKE_TIMERS } from "./fake-timers.mock";
import { fire, startTestServer } from "./test-server.mock";
import { timing } from "./timing";

const cleanups: (() => unknown)[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
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

describe("PoolMonitor (fake clock)", () => {
  it("a request queued in agent.requests counts in the gauges, events, detector and wait; one aborted while queued counts as aborted", async () => {
    const warnings: string[] = [];
    const saturations: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(1, {
      logger: { warn: (m) => warnings.push(m) },
      messagePrefix: "[pool] ",
      stallAfterMs: 10_000,
      onSaturation: (r) => saturations.push(r),
    });
    const events: PoolEvent[] = [];
    monitor.subscribe((e) => events.push(e));
    monitor.start();
    const held = fire(monitor, agent, server);
    await server.waitForPending(1);
    const queued = [fire(monitor, agent, server), fire(monitor, agent, server)];
    queued[1].response.catch(() => undefined);
    expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(2);
    vi.advanceTimersByTime(300);
    expect(stats(monitor)).toMatchObject({ active: 1, queued: 2, oldestQueuedMs: 300, inFlight: 3 });
    vi.advanceTimersByTime(4700); // 5th sample: a long-hold report
    expect(saturations.map((r) => [r.state, r.cause, r.trigger])).toEqual([
      ["saturated", "pool_capacity", "long_holds"],
    ]);
    expect(warnings[0]).toMatch(/^\[pool\] socket usage at capacity=1 and 2 additional requests are enqueued/);
    // One is aborted while queued: Node keeps it in agent.requests until a socket frees up, then it closes.
    monitor.noteOutcome(queued[1].req, "aborted");
    queued[1].req.destroy();
    vi.advanceTimersByTime(200);
    server.release();
    await held.closed;
    await server.waitForPending(1);
    server.release();
    await Promise.all([queued[0].closed, queued[1].closed]);
    const s = stats(monitor);
    expect(s).toMatchObject({ queued: 0, inFlight: 0 });
    expect(s.requests).toMatchObject({ started: 3, completed: 2, aborted: 1 });
    // Its wait ran from trackRequest(): 5,200 ms on the fake clock.
    expect(s.queueWaitMs.max).toBe(5200);
    const acquired = events.filter((e) => e.type === "request:acquired") as Extract<
      PoolEvent,
      { type: "request:acquired" }
    >[];
    expect(acquired.map((e) => e.queued)).toEqual([false, true]);
    expect(s.sockets).toMatchObject({ created: 1, reusedAcquisitions: 1 });
  });

  it("trackRequest() adds one listener per event and observes errors through errorMonitor (an unhandled 'error' still throws)", async () => {
    const { server, agent, monitor } = await setup(1);
    const req = http.request({ host: "127.0.0.1", port: server.port, agent });
    monitor.trackRequest(req, agent, server.origin, timing.now());
    expect(["socket", "response", "close", "error"].map((e) => req.listenerCount(e))).toEqual([1, 1, 1, 0]);
    expect(req.listenerCount(errorMonitor)).toBe(1);
    expect(() => req.emit("error", new Error("boom"))).toThrow("boom");
    req.on("error", () => undefined);
    req.destroy();
    await new Promise((resolve) => req.on("close", resolve));
    expect(stats(monitor).requests).toMatchObject({ started: 1, failed: 1 });
  });

  it("the oldest queued age is this monitor's oldest request still queued: an untracked one ahead of it is skipped, a destroyed one counts until Node hands it a socket", async () => {
    const { server, agent, monitor } = await setup(1);
    const held = fire(monitor, agent, server);
    await server.waitForPending(1);
    const untracked = http.request({ host: "127.0.0.1", port: server.port, agent });
    untracked.on("response", (res) => res.resume());
    untracked.end(); // queued at 0 ms
    vi.advanceTimersByTime(100);
    const queued = [fire(monitor, agent, server)]; // at 100 ms
    queued[0].response.catch(() => undefined);
    vi.advanceTimersByTime(100);
    queued.push(fire(monitor, agent, server)); // at 200 ms
    vi.advanceTimersByTime(100);
    expect(stats(monitor)).toMatchObject({ queued: 3, oldestQueuedMs: 200, inFlight: 3 });
    monitor.noteOutcome(queued[0].req, "aborted");
    queued[0].req.destroy(); // still in agent.requests until a socket frees up
    expect(stats(monitor)).toMatchObject({ queued: 3, oldestQueuedMs: 200 });
    server.release();
    await held.closed;
    await server.waitForPending(1); // the untracked request has the socket
    expect(stats(monitor)).toMatchObject({ queued: 2, oldestQueuedMs: 200 });
    server.release();
    await queued[0].closed; // handed the freed socket, it closes and passes it on
    await server.waitForPending(1);
    expect(stats(monitor)).toMatchObject({ queued: 0, oldestQueuedMs: 0, inFlight: 1 });
    server.release();
    await queued[1].closed;
    expect(stats(monitor).requests).toMatchObject({ started: 3, completed: 2, aborted: 1 });
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
    expect(stats(monitor).requests).toEqual({
      started: 2,
      completed: 2,
      failed: 0,
      aborted: 0,
      timedOut: 0,
      queueFull: 0,
    });
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

  it("reports long holds at K samples, then a stall past stallAfterMs as a change of cause (logged through the lockout), survives a throwing callback, recovers once", async () => {
    const warnings: string[] = [];
    const recoveries: SaturationReport[] = [];
    const saturations: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(1, {
      logger: { warn: (m) => warnings.push(m) },
      messagePrefix: "[pool] ",
      stallAfterMs: 10_000,
      onSaturation: (r) => {
        saturations.push(r);
        throw new Error("callback bug");
      },
      onRecovery: (r) => recoveries.push(r),
    });
    const brief = () => saturations.map((r) => [r.state, r.cause, r.trigger]);
    const poolEvents: Extract<PoolEvent, { type: "pool:saturated" | "pool:recovered" }>[] = [];
    monitor.subscribe((e) => {
      if (e.type === "pool:saturated" || e.type === "pool:recovered") poolEvents.push(e);
    });
    monitor.start();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(4000);
    expect(saturations).toHaveLength(0);
    vi.advanceTimersByTime(1000); // 5th sample: nothing completed yet, so a long hold rather than a stall
    expect(brief()).toEqual([["saturated", "pool_capacity", "long_holds"]]);
    expect(warnings[0]).toMatch(/^\[pool\] socket usage at capacity=1 and 2 additional requests are enqueued/);
    expect(warnings[0]).toContain("state=saturated, oldest queued 5000 ms");
    expect(warnings[0]).toContain("3 requests want a socket now (1 in use + 2 queued, the oldest held 5.0 s)");
    expect(warnings[1]).toBe("[pool] onSaturation callback threw Error; the monitor continues.");
    expect(stats(monitor).saturation).toMatchObject({
      state: "saturated",
      cause: "pool_capacity",
      trigger: "long_holds",
      episodes: 1,
      recommendedMaxSockets: 4,
    });

    vi.advanceTimersByTime(5000); // 10 s: held 10 s on one sample
    expect(saturations).toHaveLength(1);
    vi.advanceTimersByTime(1000); // 11 s: confirmed on a second sample
    expect(brief()).toEqual([
      ["saturated", "pool_capacity", "long_holds"],
      ["stalled", "no_progress", "stall"],
    ]);
    expect(saturations[1]).toMatchObject({ previousState: "saturated", previousCause: "pool_capacity", since: 5000 });
    // A change of cause is logged at once, 6 s into the 15 s lockout.
    expect(warnings).toHaveLength(4);
    expect(warnings[2]).toContain("state=stalled");
    expect(warnings[2]).toContain("Cause changed from pool_capacity.");
    expect(warnings[2]).toContain("the server may not be answering");
    expect(stats(monitor).saturation).toMatchObject({
      state: "stalled",
      cause: "no_progress",
      recommendedMaxSockets: null,
    });

    vi.advanceTimersByTime(14_000); // 25 s: repeats of the same cause wait out the lockout
    expect(warnings).toHaveLength(4);
    vi.advanceTimersByTime(1000); // 26 s: reminder with fresh figures
    expect(warnings).toHaveLength(5);
    expect(warnings[4]).toContain("oldest queued 26000 ms");
    expect(saturations).toHaveLength(2); // callbacks only on transitions and changes of cause
    // The channel / subscribers get the change of cause too.
    expect(poolEvents.map((e) => [e.type, e.report.cause])).toEqual([
      ["pool:saturated", "pool_capacity"],
      ["pool:saturated", "no_progress"],
    ]);

    for (const f of fired) {
      monitor.noteOutcome(f.req, "aborted");
      f.req.destroy();
    }
    await Promise.all(fired.map((f) => f.closed));
    expect(monitor.busy).toBe(true);
    vi.advanceTimersByTime(4000);
    expect(recoveries).toHaveLength(0);
    expect(stats(monitor).saturation.clearSamples).toBe(4);
    vi.advanceTimersByTime(1000);
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]).toMatchObject({
      state: "ok",
      previousState: "stalled",
      previousCause: "no_progress",
      origin: server.origin,
    });
    vi.advanceTimersByTime(10_000);
    expect(recoveries).toHaveLength(1);
    expect(saturations).toHaveLength(2);
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
    expect(events.map((e) => e.type)).toEqual(["request:acquired", "connection:created", "request:finished"]);
    expect(published).toEqual([
      { type: "request:acquired", origin: server.origin, waitMs: 0, reused: false, queued: false },
    ]);
    unsubscribe();
    await fire(monitor, agent, server).closed;
    expect(events).toHaveLength(3);
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

describe("PoolMonitor runtime configuration, origin keys, unpooled requests and _OTHER (fake clock)", () => {
  it("configure(): validates like the constructor (nothing changes on error), swaps callbacks and logger at runtime", async () => {
    const first: SaturationReport[] = [];
    const second: SaturationReport[] = [];
    const warnings: string[] = [];
    const { server, agent, monitor } = await setup(1, { onSaturation: (r) => first.push(r) });
    expect(() => monitor.configure({ sampleIntervalMs: 50 })).toThrow(
      "@sockeye/pool-monitor - invalid option sampleIntervalMs: 50; expected a number from 100 to 60000 (milliseconds)."
    );
    expect(() => monitor.configure({ onRecovery: 42 as never })).toThrow(
      "invalid option onRecovery: 42; expected a function."
    );
    expect(() => monitor.configure(null as never)).toThrow("configure(options) expects an object; received null");
    expect(monitor.sampleIntervalMs).toBe(1000);
    monitor.configure({ onSaturation: (r) => second.push(r), logger: { warn: (m) => warnings.push(m) } });
    monitor.start();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(5000);
    expect(first).toEqual([]);
    expect(second.map((r) => r.trigger)).toEqual(["long_holds"]);
    expect(warnings).toHaveLength(1);
    // `undefined` removes a callback.
    monitor.configure({ onSaturation: undefined });
    server.release();
    await server.waitForPending(1);
    server.release();
    await Promise.all(fired.map((f) => f.closed));
  });

  it("configure({ sampleIntervalMs }): the standalone interval and the detectors follow; no sample counts as a gap", async () => {
    const saturations: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(1, { onSaturation: (r) => saturations.push(r) });
    const setSpy = vi.spyOn(timing, "setInterval");
    cleanups.push(() => setSpy.mockRestore());
    monitor.start();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(2000);
    monitor.configure({ sampleIntervalMs: 5000 });
    expect(monitor.sampleIntervalMs).toBe(5000);
    expect(setSpy.mock.calls.at(-1)?.[1]).toBe(5000);
    expect(vi.getTimerCount()).toBe(1);
    // 5 samples 5 s apart (each a "gap" under the old 1 s period): detection still happens.
    vi.advanceTimersByTime(20_000);
    expect(saturations).toHaveLength(0);
    vi.advanceTimersByTime(5000);
    expect(saturations.map((r) => [r.trigger, r.windowSamples])).toEqual([["long_holds", 5]]);
    expect(saturations[0].windowMs).toBe(20_000);
    server.release();
    await server.waitForPending(1);
    server.release();
    await Promise.all(fired.map((f) => f.closed));
  });

  it("reduces a url.href to scheme://host:port: no path or presigned query in stats, events or logs; rejects non-URLs", async () => {
    const { server, agent, monitor } = await setup(1, {}, true);
    const events: PoolEvent[] = [];
    monitor.subscribe((e) => events.push(e));
    const href = `http://user:pw@127.0.0.1:${server.port}/bucket/key?X-Amz-Signature=deadbeef&X-Amz-Credential=AKID`;
    const req = http.request({ host: "127.0.0.1", port: server.port, path: "/bucket/key", agent });
    monitor.trackRequest(req, agent, href, timing.now());
    const closed = new Promise((resolve) => req.on("close", resolve));
    req.on("response", (res) => res.resume());
    req.end();
    await closed;
    const req2 = http.request({ host: "127.0.0.1", port: server.port, agent });
    monitor.trackRequest(req2, agent, `HTTP://127.0.0.1:${server.port}`, timing.now());
    const closed2 = new Promise((resolve) => req2.on("close", resolve));
    req2.on("response", (res) => res.resume());
    req2.end();
    await closed2;
    const s = monitor.getStats();
    expect(s.origins.map((o) => [o.origin, o.requests.completed])).toEqual([[server.origin, 2]]);
    const dump = JSON.stringify([s, events]);
    for (const secret of ["X-Amz-Signature", "deadbeef", "AKID", "/bucket", "user:pw"])
      expect(dump).not.toContain(secret);
    const bad = http.request({ host: "127.0.0.1", port: server.port, agent });
    bad.on("error", () => undefined);
    let err: unknown;
    try {
      monitor.trackRequest(bad, agent, "not a url?X-Amz-Signature=deadbeef", timing.now());
    } catch (e) {
      err = e;
    }
    bad.destroy();
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/origin must be "scheme:\/\/host:port".*a string of 34 characters/);
    expect((err as Error).message).not.toContain("deadbeef");
    expect(monitor.getStats().origins).toHaveLength(1);
  });

  it("trackUnpooledRequest(): counted per origin outside the pool gauges and the detector", async () => {
    const { server, agent, monitor } = await setup(1, {}, true);
    await fire(monitor, agent, server).closed; // one pooled request
    // What the handler does for `Expect: 100-continue`: a one-off agent, no socket limit.
    const sendUnpooled = () => {
      const oneOff = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
      const req = http.request({ host: "127.0.0.1", port: server.port, agent: oneOff, method: "PUT" });
      monitor.trackUnpooledRequest(req, server.origin, timing.now());
      req.on("response", (res) => res.resume());
      req.on("error", () => undefined);
      const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
      return { req, closed };
    };
    const a = sendUnpooled();
    const b = sendUnpooled();
    expect(stats(monitor).unpooled).toMatchObject({ started: 2, inFlight: 2 });
    a.req.end();
    await a.closed;
    monitor.noteOutcome(b.req, "aborted");
    b.req.destroy();
    await b.closed;
    const s = stats(monitor);
    expect(s.unpooled).toMatchObject({ started: 2, inFlight: 0, completed: 1, failed: 0, aborted: 1, timedOut: 0 });
    expect(s.unpooled!.connectMs.count).toBe(2); // both connected (b while a was in flight)
    // The pool's own figures only count the pooled request.
    expect(s.requests).toEqual({ started: 1, completed: 1, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(s.sockets).toMatchObject({ created: 1, acquisitions: 1 });
    expect(s.inFlight).toBe(0);
    expect(monitor.busy).toBe(false);
  });

  it("_OTHER: a member host full with a queue is reported, judged on its own sockets while other hosts complete; idle hosts do not count in maxSockets", async () => {
    const reports: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(2, {
      maxOrigins: 1,
      onSaturation: (r) => reports.push(r),
      onRecovery: (r) => reports.push(r),
    });
    const a = await startTestServer();
    const b = await startTestServer({ autoRespond: true });
    cleanups.push(
      () => a.close(),
      () => b.close()
    );
    monitor.start();
    const named = fire(monitor, agent, server);
    const held = [fire(monitor, agent, a), fire(monitor, agent, a), fire(monitor, agent, a)]; // 2 held, 1 queued
    await Promise.all([server.waitForPending(1), a.waitForPending(2)]);
    for (let i = 0; i < 5; i++) {
      await fire(monitor, agent, b).closed; // another member of _OTHER keeps completing
      vi.advanceTimersByTime(1000);
    }
    expect(reports.map((r) => [r.origin, r.state, r.cause, r.trigger, r.active, r.maxSockets, r.queued])).toEqual([
      ["_OTHER", "saturated", "pool_capacity", "long_holds", 2, 2, 1],
    ]);
    expect(reports[0].sizing).toMatchObject({ method: "concurrent_requests", needed: 3, recommended: 4 });
    // The snapshot keeps the aggregate: host b's idle keep-alive socket is there, its maxSockets is not (no request).
    const other = () => monitor.getStats().origins.find((o) => o.origin === "_OTHER")!;
    expect(other()).toMatchObject({ active: 2, idle: 1, queued: 1, maxSockets: 2 });
    expect(stats(monitor).saturation.state).toBe("ok"); // the named origin (1 of 2 sockets) is not saturated

    a.release(2);
    await a.waitForPending(1);
    a.release();
    await Promise.all(held.map((f) => f.closed));
    vi.advanceTimersByTime(5000);
    expect(reports.map((r) => [r.state, r.previousCause])).toEqual([
      ["saturated", null],
      ["ok", "pool_capacity"],
    ]);
    // Three hosts seen (two with idle sockets): maxSockets is the per-host limit, not a sum that grows with every host.
    expect(other()).toMatchObject({ active: 0, idle: 3, queued: 0, maxSockets: 2 });
    server.release();
    await named.closed;
  });

  it("an agent replaced for an origin stops counting in maxSockets: the new 2-socket pool is reported when full", async () => {
    const reports: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(2, { onSaturation: (r) => reports.push(r) });
    monitor.start();
    const before = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(2);
    server.release();
    await Promise.all(before.map((f) => f.closed));
    expect(stats(monitor)).toMatchObject({ maxSockets: 2, idle: 2 });
    // What updateHttpClientConfig("httpAgent", newAgent) does: later requests of the origin use another agent.
    const replacement = new http.Agent({ keepAlive: true, maxSockets: 2 });
    cleanups.push(() => replacement.destroy());
    const fired = [0, 1, 2].map(() => fire(monitor, replacement, server));
    await server.waitForPending(2);
    expect(stats(monitor)).toMatchObject({ maxSockets: 2, active: 2, idle: 2, queued: 1 });
    vi.advanceTimersByTime(5000);
    expect(reports.map((r) => [r.state, r.cause, r.trigger, r.active, r.maxSockets, r.queued])).toEqual([
      ["saturated", "pool_capacity", "long_holds", 2, 2, 1],
    ]);
    // The old agent's sockets gone, it is no longer linked to the origin at all.
    agent.destroy();
    await vi.waitFor(() => expect(stats(monitor).idle).toBe(0));
    expect(stats(monitor)).toMatchObject({ maxSockets: 2, active: 2, queued: 1 });
    server.release(2);
    await server.waitForPending(1);
    server.release();
    await Promise.all(fired.map((f) => f.closed));
  });

  it("requests queued alternately under two agents of one origin are each found, and the oldest queued age follows each queue", async () => {
    // The previous queued request's name is checked first: here it is always the other agent's, so each of these is
    // found by the scan of agent.requests; at the end, a drained, forgotten link is never reused, and consecutive
    // requests on one agent are found by the first check.
    const { server, agent, monitor } = await setup(1);
    const other = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => other.destroy());
    const holders = [fire(monitor, agent, server), fire(monitor, other, server)];
    await server.waitForPending(2);
    const queued = [];
    for (let i = 0; i < 3; i++) {
      queued.push(fire(monitor, agent, server), fire(monitor, other, server));
      vi.advanceTimersByTime(100);
    }
    expect(stats(monitor)).toMatchObject({ active: 2, queued: 6, oldestQueuedMs: 300, inFlight: 8 });
    server.release(); // both holders answer; each agent's oldest queued request gets its socket
    await server.waitForPending(2);
    vi.advanceTimersByTime(50);
    // Now the oldest queued requests are the two queued at 100 ms, 250 ms ago.
    expect(stats(monitor)).toMatchObject({ active: 2, queued: 4, oldestQueuedMs: 250 });
    for (let left = 4; left > 0; left -= 2) {
      server.release();
      await server.waitForPending(2);
    }
    expect(stats(monitor)).toMatchObject({ queued: 0, oldestQueuedMs: 0 });
    server.release();
    await Promise.all([...holders, ...queued].map((f) => f.closed));
    expect(stats(monitor).queueWaitMs.count).toBe(8);
    // Every socket gone: a sample forgets both links. Requests queued afterwards on the agent of the last queued
    // request (its name checked first) are found under a fresh link, not the forgotten one.
    agent.destroy();
    other.destroy();
    await vi.waitFor(() => expect(stats(monitor)).toMatchObject({ idle: 0, active: 0 }));
    const late = [fire(monitor, other, server), fire(monitor, other, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(40);
    late.push(fire(monitor, other, server)); // queued under the same name as the previous one
    vi.advanceTimersByTime(10);
    expect(stats(monitor)).toMatchObject({ active: 1, queued: 2, oldestQueuedMs: 50 });
    server.release();
    await server.waitForPending(1);
    expect(stats(monitor)).toMatchObject({ active: 1, queued: 1, oldestQueuedMs: 10 });
    server.release();
    await server.waitForPending(1);
    server.release();
    await Promise.all(late.map((f) => f.closed));
    expect(stats(monitor).requests).toMatchObject({ started: 11, completed: 11 });
    expect(stats(monitor).queueWaitMs.count).toBe(11);
  });

  it("a server that stops answering after fast requests (default options): reported within 6 s saying the server may not be answering, no_progress at 30 s", async () => {
    const warnings: string[] = [];
    const reports: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(2, {
      logger: { warn: (m) => warnings.push(m) },
      onSaturation: (r) => reports.push(r),
    });
    monitor.start();
    // History: requests of this origin hold a socket 200 ms.
    const fast = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(2);
    vi.advanceTimersByTime(200);
    server.release();
    await Promise.all(fast.map((f) => f.closed));
    vi.advanceTimersByTime(800); // an idle sample: the holds are remembered all the same
    // Then the server goes silent: 2 held, 2 queued.
    const hung = [0, 1, 2, 3].map(() => fire(monitor, agent, server));
    await server.waitForPending(2);
    vi.advanceTimersByTime(6000);
    expect(reports.map((r) => [r.state, r.cause, r.trigger])).toEqual([["saturated", "pool_capacity", "long_holds"]]);
    const first = reports[0];
    // The 200 ms holds, decaying 2 % per sample since (the idle sample after them included).
    expect(first.expectedHoldMs).toBeGreaterThan(170);
    expect(first.expectedHoldMs).toBeLessThanOrEqual(200);
    expect(first.oldestActiveMs).toBeGreaterThan(4 * 200);
    expect(first.message).toMatch(
      /held for 5\.0 s so far with no completion, \d+x longer than this origin's requests normally hold a socket \(up to 1\d\d ms\): the server may not be answering/
    );
    expect(first.message).toContain("configure requestTimeout/socketTimeout above your longest legitimate request");
    expect(first.message).toContain("If these are long requests, about 5 sockets are needed");
    expect(first.message).not.toMatch(/Cause: requests queue[^.]*\. About/); // never a bare "raise maxSockets"
    expect(warnings).toHaveLength(1);
    vi.advanceTimersByTime(26_000); // held 30 s (the stallAfterMs floor), confirmed on a second sample
    expect(reports.map((r) => [r.state, r.cause])).toEqual([
      ["saturated", "pool_capacity"],
      ["stalled", "no_progress"],
    ]);
    expect(reports[1].detectedAt - first.detectedAt).toBeLessThanOrEqual(27_000);
    for (const f of hung) {
      monitor.noteOutcome(f.req, "timed_out");
      f.req.destroy();
    }
    await Promise.all(hung.map((f) => f.closed));
  });

  it("a first request that never completes (no history, default options): the long_holds report names both explanations, the hint is conditional", async () => {
    const reports: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(1, { onSaturation: (r) => reports.push(r) });
    monitor.start();
    const hung = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    vi.advanceTimersByTime(5000);
    expect(reports.map((r) => r.trigger)).toEqual(["long_holds"]);
    expect(reports[0].message).toContain(
      "(no request of this origin has completed yet): either long requests (long polls, streams), which need a socket each for their whole duration, or a server not answering, which becomes no_progress once a request is held 30.0 s."
    );
    expect(reports[0].message).toContain("If these are long requests, about 3 sockets are needed");
    for (const f of hung) f.req.destroy();
    await Promise.all(hung.map((f) => f.closed));
  });
});

/**
 * Advances the fake clock one sample period at a time while the monitor wants samples; returns the time at which it
 * stopped wanting them (the sample that found nothing could change any more). Fails after `limitMs`.
 */
function advanceUntilQuiet(monitor: PoolMonitor, limitMs: number): number {
  const end = timing.now() + limitMs;
  while (monitor.wantsSamples) {
    if (timing.now() >= end) throw new Error(`still sampling after ${limitMs} ms`);
    vi.advanceTimersByTime(monitor.sampleIntervalMs);
  }
  return timing.now();
}

describe("PoolMonitor: sampling stops while nothing happens (wantsSamples), and resumes on the next event", () => {
  it("requests in flight, no queue, no event: the interval stops a window of samples after the last event; the next event resumes it through onResume", async () => {
    const { server, agent, monitor } = await setup(2);
    const resume = vi.fn(monitor.onResume);
    monitor.onResume = resume;
    monitor.start();
    const t0 = timing.now();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(2); // started and acquired: the last events for now
    expect(monitor.wantsSamples).toBe(true);
    const stoppedAt = advanceUntilQuiet(monitor, 60_000);
    // The sample at 1 s saw the events; windowSamples (5) + 1 periods later no sample can change anything.
    expect(stoppedAt - t0).toBe(7000);
    expect(monitor.busy).toBe(true);
    expect(vi.getTimerCount()).toBe(0); // the interval is gone: nothing re-arms for ever
    vi.advanceTimersByTime(60_000);
    expect(vi.getTimerCount()).toBe(0);
    expect(resume).not.toHaveBeenCalled();
    // An event that is not a new request (those start the interval anyway): one response completes.
    server.release(1);
    await fired[0].closed;
    expect(resume).toHaveBeenCalledTimes(1);
    expect(monitor.wantsSamples).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    const resumedAt = timing.now();
    // Sampling again, until nothing happened for the same span once more.
    expect(advanceUntilQuiet(monitor, 60_000) - resumedAt).toBe(7000);
    expect(vi.getTimerCount()).toBe(0);
    server.release();
    await fired[1].closed;
    expect(resume).toHaveBeenCalledTimes(2);
  });

  it("with a queue: sampling goes on until the stall is reported, then stops; the next event resumes it and the recovery is reported", async () => {
    const reports: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(1, {
      stallAfterMs: 10_000,
      onSaturation: (r) => reports.push(r),
      onRecovery: (r) => reports.push(r),
    });
    const resume = vi.fn(monitor.onResume);
    monitor.onResume = resume;
    monitor.start();
    const t0 = timing.now();
    const fired = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    const stoppedAt = advanceUntilQuiet(monitor, 120_000);
    expect(reports.map((r) => [r.state, r.cause, r.trigger])).toEqual([
      ["saturated", "pool_capacity", "long_holds"],
      ["stalled", "no_progress", "stall"],
    ]);
    // The stall came first (at 11 s), and sampling went on past it for as long as unread bodies could still age
    // (unconsumedBodyMs, 10 s) and a full window be taken.
    expect(reports[1].detectedAt - t0).toBe(11_000);
    expect(stoppedAt - reports[1].detectedAt).toBeGreaterThanOrEqual(10_000);
    expect(monitor.busy).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    expect(resume).not.toHaveBeenCalled();
    // The server answers: the first completes, the queued one gets the socket.
    server.release(1);
    await fired[0].closed;
    expect(resume).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(1);
    await server.waitForPending(1);
    server.release();
    await fired[1].closed;
    vi.advanceTimersByTime(5000); // a window of clear samples
    expect(reports.map((r) => r.state)).toEqual(["saturated", "stalled", "ok"]);
    expect(monitor.busy).toBe(false);
  });

  it("vi.runAllTimers() terminates with requests in flight on a standalone monitor, after the stall was reported", async () => {
    const reports: SaturationReport[] = [];
    const { server, agent, monitor } = await setup(1, { onSaturation: (r) => reports.push(r) });
    monitor.start();
    const hung = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(1);
    // A recurring interval that never stops would make fake timers abort after 10,000 timers.
    expect(() => vi.runAllTimers()).not.toThrow();
    expect(vi.getTimerCount()).toBe(0);
    expect(monitor.busy).toBe(true);
    expect(reports.map((r) => r.cause)).toEqual(["pool_capacity", "no_progress"]);
    for (const f of hung) f.req.destroy();
    await Promise.all(hung.map((f) => f.closed));
  });
});
