/**
 * Real sockets: loopback http/https servers on port 0 and real keep-alive agents with small pools.
 * Two kinds of tests:
 * - lockstep: the test drives sampling (`monitor.sample(timing.now())`) between server releases, so
 *   queue depths per sample are deterministic and nothing waits on a wall-clock period;
 * - timed scenarios (long polls, a dead server, unread bodies, a latency ramp), where the server holds
 *   responses for real milliseconds: `sampleFor()` samples every `sampleIntervalMs` (100 ms) of real
 *   time, as the handler's tick would, for at most a few seconds. Their assertions are on the exact
 *   sequence of reports (cause, trigger, one recovery); time bounds are generous and only guard
 *   against a report coming far too late, never measure performance.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import http from "node:http";
import https from "node:https";
import { afterEach, describe, expect, test as it } from "vitest";
import { CHANNEL_NAMES } from "./diagnostics";
import { PoolMonitor } from "./pool-monitor";
import type { PoolEvent, SaturationReport } from "./pool-stats";
import {
  type Fired,
  fire,
  makeSelfSignedCert,
  startTestServer,
  type TestServer,
  type TestServerOptions,
} from "./test-server.mock";
import { timing } from "./timing";
import { socketStateOf } from "./tracking-state";

const cleanups: (() => unknown)[] = [];
let certificate: { key: string; cert: string } | undefined;
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  options: {
    maxSockets?: number;
    tls?: boolean;
    autoRespond?: boolean;
    monitor?: ConstructorParameters<typeof PoolMonitor>[0];
    server?: Pick<TestServerOptions, "holdMs" | "bodyBytes">;
  } = {}
) {
  const tlsMaterial = options.tls ? (certificate ??= makeSelfSignedCert()) : undefined;
  const server = await startTestServer({
    tls: tlsMaterial,
    autoRespond: options.autoRespond,
    bodyBytes: 64,
    ...options.server,
  });
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 2 };
  const agent = tlsMaterial ? new https.Agent({ ...agentOptions, ca: tlsMaterial.cert }) : new http.Agent(agentOptions);
  const warnings: string[] = [];
  const saturations: SaturationReport[] = [];
  const recoveries: SaturationReport[] = [];
  const monitor = new PoolMonitor({
    sampleIntervalMs: 100,
    logger: { warn: (m) => warnings.push(m) },
    onSaturation: (r) => saturations.push(r),
    onRecovery: (r) => recoveries.push(r),
    ...options.monitor,
  });
  const events: PoolEvent[] = [];
  monitor.subscribe((e) => events.push(e));
  cleanups.push(
    () => server.close(),
    () => agent.destroy(),
    () => monitor.destroy()
  );
  return { server, agent, monitor, warnings, saturations, recoveries, events };
}

const origin = (monitor: PoolMonitor, name: string) => monitor.getStats().origins.find((o) => o.origin === name)!;
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 5));
const brief = (r: SaturationReport) => [r.state, r.cause, r.trigger];

/**
 * Samples every `sampleIntervalMs` (100 ms) of real time, as the handler's tick would, until `done()` is true. The
 * assertions that follow are on the sequence of reports, not on how many samples it took.
 */
async function sampleFor(monitor: PoolMonitor, done: () => boolean): Promise<void> {
  while (!done()) {
    await new Promise((resolve) => setTimeout(resolve, monitor.sampleIntervalMs));
    monitor.sample(timing.now());
  }
}

/** Releases `n` parked requests and waits until the pool is refilled to `expectPending` parked requests. */
async function step(server: TestServer, n: number, expectPending: number) {
  server.release(n);
  await server.waitForPending(expectPending);
  await tick();
}

describe("PoolMonitor with a real keep-alive http.Agent (maxSockets 2)", () => {
  it("trackRequest(): counts and queue age; one state on the request, in a symbol slot nobody enumerates", async () => {
    const { server, agent, monitor, events } = await setup();
    const fired = Array.from({ length: 6 }, () => fire(monitor, agent, server));
    let s = origin(monitor, server.origin);
    expect(s).toMatchObject({ maxSockets: 2, active: 2, idle: 0, queued: 4, inFlight: 6 });
    expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(4);
    const own = (req: http.ClientRequest) => Object.getOwnPropertySymbols(req).map((sym) => sym.description);
    for (const f of fired) {
      expect(own(f.req).filter((d) => d?.startsWith("sockeye"))).toEqual(["sockeye.pool-monitor.request"]);
      expect(Object.keys(f.req).filter((k) => k.includes("sockeye"))).toEqual([]);
    }

    await server.waitForPending(2);
    await new Promise((r) => setTimeout(r, 60));
    monitor.sample(timing.now());
    s = origin(monitor, server.origin);
    expect(s.oldestQueuedMs).toBeGreaterThanOrEqual(55);
    // The last queued request is destroyed while queued and noted as aborted (as a caller does on abort): it is
    // counted as aborted, not failed, once.
    const last = fired[5];
    monitor.noteOutcome(last.req, "aborted");
    last.req.destroy();
    let settled = false;
    const all = Promise.all([...fired.map((f) => f.done), last.closed]).then(() => {
      settled = true;
    });
    while (!settled) {
      server.release();
      await tick();
    }
    await all;
    await tick();

    monitor.sample(timing.now());
    s = origin(monitor, server.origin);
    expect(s).toMatchObject({ active: 0, idle: 2, queued: 0, inFlight: 0, oldestQueuedMs: 0 });
    expect(s.requests).toEqual({ started: 6, completed: 5, failed: 0, aborted: 1, timedOut: 0, queueFull: 0 });
    expect(s.sockets).toMatchObject({ created: 2, errors: 0 });
    expect(monitor.busy).toBe(false);
  });

  it("keeps one state per socket off the socket (its shape stays Node's), and releases it when the socket closes", async () => {
    const { server, agent, monitor } = await setup({ autoRespond: true });
    await Promise.all(Array.from({ length: 4 }, () => fire(monitor, agent, server).done));
    const sockets = Object.values(agent.freeSockets).flat() as import("node:net").Socket[];
    expect(sockets).toHaveLength(2);
    for (const socket of sockets) {
      expect(Object.keys(socket).filter((k) => k.includes("sockeye"))).toEqual([]);
      expect(Object.getOwnPropertySymbols(socket).filter((sym) => sym.description?.includes("sockeye"))).toEqual([]);
      expect(socketStateOf(socket)).toMatchObject({ requests: 2 });
    }
    const closed = sockets.map((socket) => new Promise((resolve) => socket.once("close", resolve)));
    agent.destroy();
    await Promise.all(closed);
    // The close listener ran (counted as a local close) and released the state: a closed socket pins nothing.
    for (const socket of sockets) expect(socketStateOf(socket)).toBeUndefined();
    expect(origin(monitor, server.origin).sockets.closed.local).toBe(2);
  });

  it("counts active/idle/queued, reuse for queued requests (where req.reusedSocket is false) and queue wait", async () => {
    const { server, agent, monitor, events } = await setup();
    const fired: Fired[] = [];
    for (let i = 0; i < 6; i++) fired.push(fire(monitor, agent, server));
    let s = origin(monitor, server.origin);
    expect(s).toMatchObject({ maxSockets: 2, active: 2, idle: 0, queued: 4, inFlight: 6 });
    expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(4);

    await server.waitForPending(2);
    await new Promise((r) => setTimeout(r, 60));
    s = origin(monitor, server.origin);
    expect(s.oldestQueuedMs).toBeGreaterThanOrEqual(55);
    for (let remaining = 4; remaining > 0; remaining -= 2) await step(server, 2, 2);
    server.release();
    await Promise.all(fired.map((f) => f.done));
    await tick();

    s = origin(monitor, server.origin);
    expect(s).toMatchObject({ active: 0, idle: 2, queued: 0, inFlight: 0, oldestQueuedMs: 0 });
    expect(s.requests).toEqual({ started: 6, completed: 6, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(s.sockets).toMatchObject({ created: 2, acquisitions: 6, reusedAcquisitions: 4, errors: 0 });
    // Node's own flag misses the 'free' hand-off to queued requests: that is why reuse is counted per socket.
    expect(fired.filter((f) => f.req.reusedSocket).length).toBe(0);
    expect(s.queueWaitMs.count).toBe(6);
    expect(s.queueWaitMs.max).toBeGreaterThanOrEqual(55);
    expect(s.connectMs.count).toBe(2);
    expect(s.tlsMs.count).toBe(0);
    const acquired = events.filter((e) => e.type === "request:acquired");
    expect(acquired.map((e) => [e.queued, e.reused])).toEqual([
      [false, false],
      [false, false],
      [true, true],
      [true, true],
      [true, true],
      [true, true],
    ]);
    // Origins only: no event carries the path or query string.
    expect(JSON.stringify(events)).not.toContain("secret");
    expect(JSON.stringify(monitor.getStats())).not.toContain("secret");
  });

  it("does not warn for a Promise.all batch of 20 x maxSockets that drains", async () => {
    const { server, agent, monitor, warnings, saturations } = await setup();
    const fired = Array.from({ length: 40 }, () => fire(monitor, agent, server));
    await server.waitForPending(2);
    monitor.sample(timing.now());
    for (let left = 38; left > 0; left -= 2) {
      await step(server, 2, 2);
      monitor.sample(timing.now());
    }
    server.release();
    await Promise.all(fired.map((f) => f.done));
    for (let i = 0; i < 6; i++) monitor.sample(timing.now());
    expect(saturations).toEqual([]);
    expect(warnings).toEqual([]);
    expect(origin(monitor, server.origin).requests.completed).toBe(40);
    expect(monitor.busy).toBe(false);
  });

  it("warns on sustained overload within K samples, recommends maxSockets, then reports recovery", async () => {
    const { server, agent, monitor, warnings, saturations, recoveries, events } = await setup();
    const fired: Fired[] = [fire(monitor, agent, server), fire(monitor, agent, server)];
    await server.waitForPending(2);
    // Each step: 3 arrivals, 2 completions -> the queue grows by 1 per sample (1.5x capacity).
    let samples = 0;
    let firstSaturatedSample = -1;
    while (saturations.length === 0 && samples < 20) {
      for (let i = 0; i < 3; i++) fired.push(fire(monitor, agent, server));
      await step(server, 2, 2);
      monitor.sample(timing.now());
      samples++;
      if (firstSaturatedSample < 0 && origin(monitor, server.origin).queued >= 2) firstSaturatedSample = samples;
    }
    const report = saturations[0];
    expect(report).toBeDefined();
    expect(samples - firstSaturatedSample + 1).toBeLessThanOrEqual(5);
    expect(report).toMatchObject({
      origin: server.origin,
      state: "saturated",
      cause: "pool_capacity",
      trigger: "growth",
      maxSockets: 2,
      active: 2,
    });
    expect(report.queueGrowth).toBeGreaterThanOrEqual(4);
    expect(report.recommendedMaxSockets).toBeGreaterThanOrEqual(3);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      `@sockeye/pool-monitor:WARN - socket usage at capacity=2 and ${report.queued} additional requests are enqueued`
    );
    expect(warnings[0]).toContain(server.origin);
    expect(warnings[0]).not.toContain("secret");
    expect(events.some((e) => e.type === "pool:saturated")).toBe(true);
    expect(monitor.getStats().origins[0].saturation).toMatchObject({ state: "saturated", cause: "pool_capacity" });
    if (process.env.SOCKEYE_SIM_REPORT) {
      console.log(`integ overload: warned ${samples - firstSaturatedSample + 1} samples after the pool saturated`);
    }

    // Stop the arrivals and drain; recovery comes after K low samples.
    while (server.pending.length > 0 || origin(monitor, server.origin).inFlight > 0) {
      server.release();
      await tick();
    }
    await Promise.all(fired.map((f) => f.done));
    expect(monitor.busy).toBe(true); // the detector still needs samples to report recovery
    for (let i = 0; i < 5; i++) monitor.sample(timing.now());
    expect(recoveries).toHaveLength(1);
    expect(recoveries[0]).toMatchObject({ state: "ok", previousState: "saturated", cause: null });
    expect(monitor.busy).toBe(false);
  });

  it("a server that never answers: long holds after K samples, a stall once held past stallAfterMs, no flapping, one recovery", async () => {
    const { server, agent, monitor, warnings, saturations, recoveries } = await setup({
      monitor: { stallAfterMs: 1000 },
    });
    const fired = Array.from({ length: 5 }, () => fire(monitor, agent, server));
    await server.waitForPending(2);
    const t0 = timing.now();
    await sampleFor(monitor, () => saturations.length >= 2 || timing.now() - t0 > 3000);
    if (process.env.SOCKEYE_SIM_REPORT) {
      console.log(
        `integ dead server: reports at ${saturations.map((r) => Math.round(r.detectedAt - t0)).join(", ")} ms`
      );
    }
    expect(saturations.map(brief)).toEqual([
      ["saturated", "pool_capacity", "long_holds"],
      ["stalled", "no_progress", "stall"],
    ]);
    expect(saturations[0]).toMatchObject({ queued: 3, active: 2, recommendedMaxSockets: 7 }); // 5 x 1.25
    expect(saturations[1]).toMatchObject({
      queued: 3,
      active: 2,
      recommendedMaxSockets: null,
      previousCause: "pool_capacity",
    });
    expect(saturations[1].oldestActiveMs).toBeGreaterThanOrEqual(1000);
    expect(warnings[0]).toContain("socket usage at capacity=2 and 3 additional requests are enqueued");
    expect(warnings[1]).toContain("no request completed");
    // Still stuck: no recovery, no new report (the old rule recovered on a short queue and re-fired).
    await sampleFor(monitor, () => timing.now() - t0 > 2500);
    expect(saturations).toHaveLength(2);
    expect(recoveries).toEqual([]);
    for (const f of fired) {
      monitor.noteOutcome(f.req, "timed_out");
      f.req.destroy();
    }
    await Promise.all(fired.map((f) => f.done));
    await sampleFor(monitor, () => recoveries.length > 0 || !monitor.busy);
    expect(recoveries.map((r) => [r.state, r.previousCause])).toEqual([["ok", "no_progress"]]);
    const s = origin(monitor, server.origin);
    expect(s.requests).toMatchObject({ started: 5, timedOut: 5, failed: 0 });
    expect(s.sockets.closed.timed_out).toBe(2);
  });

  it("latency ramp (50 -> 300 ms at 20 requests/s on 2 sockets): reminders size the pool for the latency now", async () => {
    const { agent, monitor, saturations } = await setup({ monitor: { windowSamples: 10 } });
    const t0 = timing.now();
    const server = await startTestServer({ holdMs: () => Math.min(300, 50 + ((timing.now() - t0) / 1500) * 250) });
    cleanups.push(() => server.close());
    const fired: Fired[] = [];
    let nextArrival = t0;
    let onset: number | null = null;
    await sampleFor(monitor, () => {
      while (timing.now() >= nextArrival) {
        fired.push(fire(monitor, agent, server));
        nextArrival += 50;
      }
      if (onset === null && saturations.length > 0) onset = saturations[0].recommendedMaxSockets;
      return timing.now() - t0 > 3500;
    });
    const now = origin(monitor, server.origin).saturation;
    if (process.env.SOCKEYE_SIM_REPORT) console.log(`integ ramp: onset ${onset}, now ${now.recommendedMaxSockets}`);
    expect(saturations.map((r) => [r.state, r.cause])).toEqual([["saturated", "pool_capacity"]]);
    expect(["growth", "rising_troughs"]).toContain(saturations[0].trigger);
    // 20/s x 300 ms = 6 sockets needed now (x 1.25 headroom): at least 6, and more than at onset.
    expect(now.recommendedMaxSockets).toBeGreaterThanOrEqual(6);
    expect(now.recommendedMaxSockets).toBeGreaterThan(onset!);
    for (const f of fired) f.req.destroy();
    await Promise.all(fired.map((f) => f.closed));
  });
});

describe("PoolMonitor on unread response bodies (real sockets)", () => {
  it("attributes a pool pinned by unread bodies to unconsumed_bodies (short unconsumedBodyMs)", async () => {
    const { server, agent, monitor, saturations, warnings } = await setup({
      autoRespond: true,
      monitor: { unconsumedBodyMs: 30 },
    });
    // Two responses whose bodies are never read pin both sockets; three more requests queue behind them.
    const leaked = [fire(monitor, agent, server, false), fire(monitor, agent, server, false)];
    const queued = Array.from({ length: 3 }, () => fire(monitor, agent, server));
    const leakedResponses = await Promise.all(leaked.map((f) => f.response));
    monitor.sample(timing.now());
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 5 && saturations.length === 0; i++) {
      await tick();
      monitor.sample(timing.now());
    }
    expect(saturations[0]).toMatchObject({ state: "saturated", cause: "unconsumed_bodies", queued: 3, active: 2 });
    expect(saturations[0].unconsumed.count).toBe(2);
    expect(saturations[0].unconsumed.oldestMs).toBeGreaterThanOrEqual(30);
    expect(warnings[0]).toContain("2 responses handed to the caller have not been read or destroyed");
    expect(origin(monitor, server.origin).unconsumed.count).toBe(2);
    // Reading the bodies releases the sockets and the queued requests complete.
    for (const res of leakedResponses) res.resume();
    await Promise.all(queued.map((f) => f.done));
    await tick();
    const s = origin(monitor, server.origin);
    expect(s.unconsumed.count).toBe(0);
    expect(s.requests.completed).toBe(5);
  });
});

describe.each([
  { scheme: "http", tls: false },
  { scheme: "https", tls: true },
])("timed scenarios on $scheme (real sockets)", ({ tls }) => {
  it("long polls (3 pollers on 2 sockets, each held 700 ms): one capacity report sized for the pollers, no stall claim, one recovery", async () => {
    const { server, agent, monitor, saturations, recoveries } = await setup({
      tls,
      monitor: { stallAfterMs: 1000 },
      server: { holdMs: 700 },
    });
    let polling = true;
    let polls = 0;
    const poller = async () => {
      while (polling) {
        expect(await fire(monitor, agent, server).done).toBe("ok");
        polls++;
      }
    };
    const pollers = [poller(), poller(), poller()];
    const t0 = timing.now();
    await sampleFor(monitor, () => timing.now() - t0 > 3200);
    polling = false;
    expect(polls).toBeGreaterThanOrEqual(6);
    expect(saturations.map(brief)).toEqual([["saturated", "pool_capacity", "long_holds"]]);
    const report = saturations[0];
    expect(report.sizing).toMatchObject({ method: "concurrent_requests", needed: 3, recommended: 4 });
    expect(report.message).toContain("3 requests want a socket now (2 in use + 1 queued");
    expect(origin(monitor, server.origin).saturation).toMatchObject({ state: "saturated", cause: "pool_capacity" });
    expect(recoveries).toEqual([]);
    await Promise.all(pollers);
    await sampleFor(monitor, () => recoveries.length > 0 || !monitor.busy);
    expect(recoveries.map((r) => [r.state, r.previousCause])).toEqual([["ok", "pool_capacity"]]);
    expect(saturations).toHaveLength(1);
  });

  it("names unconsumed_bodies (not no_progress) before unconsumedBodyMs when requests queue behind never-read bodies; keeps it; one recovery", async () => {
    // Default unconsumedBodyMs (10 s): a never-read body counts after 2 samples (200 ms) while requests queue.
    const { server, agent, monitor, saturations, recoveries, warnings } = await setup({ tls, autoRespond: true });
    const leaked = [fire(monitor, agent, server, false), fire(monitor, agent, server, false)];
    const leakedResponses = await Promise.all(leaked.map((f) => f.response));
    const queued = Array.from({ length: 3 }, () => fire(monitor, agent, server));
    const t0 = timing.now();
    await sampleFor(monitor, () => saturations.length > 0 || timing.now() - t0 > 3000);
    expect(saturations.map(brief)).toEqual([["saturated", "unconsumed_bodies", "long_holds"]]);
    expect(saturations[0].unconsumed.count).toBe(2);
    expect(saturations[0].detectedAt - t0).toBeLessThan(2000);
    expect(warnings[0]).toContain("2 responses handed to the caller have not been read or destroyed");
    // Kept while they stay unread.
    await sampleFor(monitor, () => timing.now() - t0 > 2500);
    expect(saturations).toHaveLength(1);
    expect(recoveries).toEqual([]);
    expect(origin(monitor, server.origin).saturation.cause).toBe("unconsumed_bodies");
    for (const res of leakedResponses) res.resume();
    await Promise.all(queued.map((f) => f.done));
    await sampleFor(monitor, () => recoveries.length > 0 || !monitor.busy);
    expect(recoveries.map((r) => [r.state, r.previousCause])).toEqual([["ok", "unconsumed_bodies"]]);
    expect(saturations).toHaveLength(1);
    expect(origin(monitor, server.origin).requests.completed).toBe(5);
  });
});

describe.each([
  { scheme: "http", tls: false },
  { scheme: "https", tls: true },
])("queued requests under several agents of one origin on $scheme (real sockets)", ({ tls }) => {
  it("finds each queued request whichever agent it waits in, and never reuses a forgotten agent name's link", async () => {
    const { server, agent, monitor } = await setup({ tls, maxSockets: 1 });
    const tlsOptions = tls ? { ca: (certificate as { cert: string }).cert } : {};
    const newAgent = () => {
      const a = tls
        ? new https.Agent({ keepAlive: true, maxSockets: 1, ...tlsOptions })
        : new http.Agent({ keepAlive: true, maxSockets: 1 });
      cleanups.push(() => a.destroy());
      return a;
    };
    const other = newAgent();
    const stats = () => origin(monitor, server.origin);
    // One holder per agent, then queued requests alternating between the agents (each found by the scan), then two
    // more on one agent (the second found by the check of the previous request's name).
    const fired = [fire(monitor, agent, server), fire(monitor, other, server)];
    await server.waitForPending(2);
    for (let i = 0; i < 2; i++) fired.push(fire(monitor, agent, server), fire(monitor, other, server));
    fired.push(fire(monitor, other, server));
    // The oldest queued age comes from the queue lists: above 0 exactly while some request is queued.
    expect(stats()).toMatchObject({ active: 2, queued: 5, inFlight: 7 });
    expect(stats().oldestQueuedMs).toBeGreaterThan(0);
    for (const queuedAfter of [3, 1, 0]) {
      server.release();
      await server.waitForPending(queuedAfter === 0 ? 1 : 2);
      expect(stats().queued).toBe(queuedAfter);
      expect(stats().oldestQueuedMs > 0).toBe(queuedAfter > 0);
    }
    server.release();
    await Promise.all(fired.map((f) => f.closed));
    expect(stats().queueWaitMs.count).toBe(7);
    // Every socket gone: a sample forgets both links. Requests queued again on `other` (the previous queued request's
    // agent) are counted under a fresh link.
    agent.destroy();
    other.destroy();
    for (let i = 0; i < 50 && (stats().idle !== 0 || stats().active !== 0); i++) await tick();
    expect(stats()).toMatchObject({ idle: 0, active: 0, queued: 0 });
    const late = [fire(monitor, other, server), fire(monitor, other, server), fire(monitor, other, server)];
    await server.waitForPending(1);
    expect(stats()).toMatchObject({ active: 1, queued: 2 });
    expect(stats().oldestQueuedMs).toBeGreaterThan(0);
    server.release();
    await server.waitForPending(1);
    expect(stats()).toMatchObject({ active: 1, queued: 1 });
    expect(stats().oldestQueuedMs).toBeGreaterThan(0);
    server.release();
    await server.waitForPending(1);
    server.release();
    await Promise.all(late.map((f) => f.closed));
    expect(stats().requests).toMatchObject({ started: 10, completed: 10, failed: 0 });
    expect(stats().queueWaitMs.count).toBe(10);
  });
});

describe("PoolMonitor with a real https.Agent", () => {
  it("measures TCP connect and TLS handshake separately and counts reuse", async () => {
    const { server, agent, monitor, events } = await setup({ tls: true, autoRespond: true });
    const created: unknown[] = [];
    const onCreated = (m: unknown) => created.push(m);
    diagnosticsChannel.subscribe(CHANNEL_NAMES.connectionCreated, onCreated);
    cleanups.push(() => diagnosticsChannel.unsubscribe(CHANNEL_NAMES.connectionCreated, onCreated));
    expect(await fire(monitor, agent, server).done).toBe("ok");
    await tick();
    expect(await fire(monitor, agent, server).done).toBe("ok");
    await tick();
    const s = origin(monitor, server.origin);
    expect(s.origin).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(s.sockets).toMatchObject({ created: 1, acquisitions: 2, reusedAcquisitions: 1 });
    expect(s.connectMs.count).toBe(1);
    expect(s.tlsMs.count).toBe(1);
    expect(s.tlsMs.max).toBeGreaterThan(0);
    expect(s.idle).toBe(1);
    expect(created).toHaveLength(1);
    expect(created[0]).toEqual({
      type: "connection:created",
      origin: server.origin,
      connectMs: expect.any(Number),
      tlsMs: expect.any(Number),
    });
    expect(events.filter((e) => e.type === "connection:created")).toHaveLength(1);

    agent.destroy();
    await new Promise((r) => setTimeout(r, 20));
    const closed = events.filter((e) => e.type === "connection:closed");
    expect(closed).toEqual([
      { type: "connection:closed", origin: server.origin, ageMs: expect.any(Number), requests: 2, reason: "local" },
    ]);
    expect(origin(monitor, server.origin).sockets.closed.local).toBe(1);
  });
});
