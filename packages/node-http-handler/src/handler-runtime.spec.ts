/**
 * HandlerRuntime: the live list (the handler's one in-flight count) and `destroy()`, which walks it to end every
 * request. Real requests (`InFlightRequest`, `http.Agent`, `Http1PoolMonitor`) against a loopback server; timers and
 * clocks faked (explicit `toFake`), I/O real; waits are event-driven, never sleeps.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { Http1PoolMonitor } from "@sockeye/pool-monitor";
import http from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test as it, vi } from "vitest";
import { FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import { HoldingServer } from "./holding-server.mock";
import { HandlerRuntime } from "./handler-runtime";
import { InFlightRequest } from "./in-flight-request";
import type { RequestPlan } from "./request-plan";
import { testPlan } from "./request-plan.mock";

const server = new HoldingServer(() => true);
let port: number;
/** Responses the server holds without answering. */
const held = server.held;
const serverSaw = (n: number): Promise<void> => server.saw(n);
const realSetImmediate = setImmediate;

beforeAll(async () => {
  await server.start();
  port = server.port;
});

afterAll(() => server.close());

const plan = (agent: http.Agent): RequestPlan => testPlan(agent);

interface Started {
  state: InFlightRequest;
  error?: any;
  settled: boolean;
}

function start(runtime: HandlerRuntime, agent: http.Agent): Started {
  const httpRequest = new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path: "/" });
  const state = new InFlightRequest(runtime, httpRequest, plan(agent), `http://127.0.0.1:${port}`, undefined);
  const started: Started = { state, settled: false };
  new Promise((resolve, reject) =>
    state.start(resolve, reject, http.request, { host: "127.0.0.1", port, path: "/", method: "GET", agent })
  ).then(
    () => {
      started.settled = true;
    },
    (error) => {
      started.settled = true;
      started.error = error;
    }
  );
  return started;
}

/** The live list, walked from its head (what `destroy()` walks). */
function liveList(runtime: HandlerRuntime): InFlightRequest[] {
  const out: InFlightRequest[] = [];
  for (let r = (runtime as any).liveHead as InFlightRequest | undefined; r !== undefined; r = r.liveNext) out.push(r);
  return out;
}

/**
 * Waits for loopback I/O: real event-loop turns through the `setImmediate` captured before timers were faked,
 * bounded by 2 s of real time (`process.hrtime`, never faked); a passing run never waits for the bound.
 */
async function until(predicate: () => boolean): Promise<void> {
  const start = process.hrtime.bigint();
  while (!predicate() && process.hrtime.bigint() - start < 2_000_000_000n) {
    await new Promise((resolve) => realSetImmediate(resolve));
  }
  expect(predicate()).toBe(true);
}

describe("HandlerRuntime: live list and destroy()", () => {
  let runtime: HandlerRuntime;
  let monitor: Http1PoolMonitor;
  let agent: http.Agent;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    server.seen = 0;
    runtime = new HandlerRuntime();
    monitor = new Http1PoolMonitor();
    runtime.hostMonitor = monitor;
    agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  });
  afterEach(() => {
    for (const res of held.splice(0)) res.destroy();
    runtime.destroy();
    agent.destroy();
    monitor.destroy();
    vi.useRealTimers();
  });

  it("counts each request from start to finish once; unlinking from the head, middle and tail keeps the list whole", async () => {
    agent.maxSockets = 5;
    expect(runtime.inFlightCount).toBe(0);
    const rs = Array.from({ length: 5 }, () => start(runtime, agent));
    expect(runtime.inFlightCount).toBe(5);
    // Newest first.
    expect(liveList(runtime)).toEqual(rs.map((r) => r.state).reverse());
    await serverSaw(5);
    // Middle, head (newest), tail (oldest): each Node request is destroyed and ends through its own 'close'.
    for (const i of [2, 4, 0]) {
      rs[i].state.req?.destroy();
      await until(() => rs[i].state.isFinished);
      expect(liveList(runtime)).not.toContain(rs[i].state);
      expect(runtime.inFlightCount).toBe(liveList(runtime).length);
    }
    expect(runtime.inFlightCount).toBe(2);
    expect(liveList(runtime)).toEqual([rs[3].state, rs[1].state]);
    // finish() is idempotent: the count never goes below the list's length.
    rs[2].state.finish();
    expect(runtime.inFlightCount).toBe(2);
    expect(rs[2].error).toMatchObject({ code: "ECONNRESET" });
    expect(monitor.getStats().totals.inFlight).toBe(2);
  });

  it("destroy() walks the list: every request ends (HandlerDestroyedError), the count is 0, the timer is cleared", async () => {
    const rs = Array.from({ length: 4 }, () => start(runtime, agent));
    await serverSaw(2);
    // Two on sockets (idle-watched, deadlines armed, the timer running), two queued.
    await until(() => runtime.idleWatching);
    expect(runtime.hostScheduler.ticking).toBe(true);
    expect(runtime.hostScheduler.size).toBeGreaterThan(0);
    expect(monitor.getStats().totals).toMatchObject({ inFlight: 4, queued: 2 });

    expect(runtime.destroy()).toBe(4);
    expect(runtime.inFlightCount).toBe(0);
    expect(liveList(runtime)).toEqual([]);
    expect(runtime.hostScheduler.size).toBe(0);
    expect(runtime.hostScheduler.ticking).toBe(false);
    expect(runtime.idleWatching).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(Object.keys(agent.requests)).toEqual([]);
    await until(() => rs.every((r) => r.settled));
    for (const r of rs) expect(r.error).toMatchObject({ name: "HandlerDestroyedError", code: "ERR_HANDLER_DESTROYED" });
    expect(monitor.getStats().totals).toMatchObject({ inFlight: 0, queued: 0 });
    // Nothing is armed again by the requests' late 'close' events.
    vi.advanceTimersByTime(60_000);
    expect(runtime.inFlightCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    // A second destroy() finds nothing.
    expect(runtime.destroy()).toBe(0);
  });

  it("the runtime keeps working after destroy(): a new request is counted and ends normally", async () => {
    start(runtime, agent);
    await serverSaw(1);
    expect(runtime.destroy()).toBe(1);
    const r = start(runtime, agent);
    expect(runtime.inFlightCount).toBe(1);
    await serverSaw(2);
    for (const res of held.splice(0)) res.end("ok");
    await until(() => r.settled);
    expect(r.error).toBeUndefined();
    r.state.res?.resume();
    await until(() => r.state.isFinished);
    expect(runtime.inFlightCount).toBe(0);
  });

  it("without telemetry (no monitor) the count and destroy() walk are the same", async () => {
    runtime.hostMonitor = undefined;
    const rs = [start(runtime, agent), start(runtime, agent), start(runtime, agent)];
    expect(rs.every((r) => r.state.monitor === undefined)).toBe(true);
    expect(runtime.inFlightCount).toBe(3);
    await serverSaw(2);
    expect(runtime.destroy()).toBe(3);
    expect(runtime.inFlightCount).toBe(0);
    await until(() => rs.every((r) => r.settled));
    expect(rs.map((r) => r.error?.name)).toEqual(Array(3).fill("HandlerDestroyedError"));
  });
});
