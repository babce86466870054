/**
 * InFlightRequest's single way out, `finish()`: it runs once and releases everything (deadlines, abort listener,
 * monitor accounting, the runtime's live list), whichever of its four entry points reaches it first: the Node
 * request's `'close'`, leaving the agent queue (abort while queued), the handler's `destroy()`, and a synchronous
 * throw from `http.request`. Real `HandlerRuntime`, `Http1PoolMonitor`, `http.Agent` and a loopback server; timers and
 * clocks faked (explicit `toFake`), I/O real; waits are event-driven (the server saw N requests), never sleeps.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { Http1PoolMonitor } from "@sockeye/pool-monitor";
import { getEventListeners } from "node:events";
import http, { type ClientRequest } from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test as it, vi } from "vitest";
import { FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import { HoldingServer } from "./holding-server.mock";
import { HandlerRuntime } from "./handler-runtime";
import { InFlightRequest } from "./in-flight-request";
import type { RequestPlan } from "./request-plan";
import { testPlan } from "./request-plan.mock";

const server = new HoldingServer((url) => url === "/hold");
let port: number;
/** Responses the server holds without answering. */
const held = server.held;
const serverSaw = (n: number): Promise<void> => server.saw(n);

beforeAll(async () => {
  await server.start();
  port = server.port;
});

afterAll(() => server.close());

interface Setup {
  runtime: HandlerRuntime;
  monitor: Http1PoolMonitor;
  agent: http.Agent;
  finished: InFlightRequest[];
}

let current: Setup | undefined;

function setup(agentOptions: http.AgentOptions = {}): Setup {
  const runtime = new HandlerRuntime();
  const monitor = new Http1PoolMonitor();
  runtime.hostMonitor = monitor;
  const agent = new http.Agent({ keepAlive: true, ...agentOptions });
  const finished: InFlightRequest[] = [];
  const requestFinished = runtime.requestFinished.bind(runtime);
  // Counts the host's single release call per request (the real one still runs).
  runtime.requestFinished = (r: InFlightRequest, now: number) => {
    finished.push(r);
    requestFinished(r, now);
  };
  current = { runtime, monitor, agent, finished };
  return current;
}

const planFor = (agent: http.Agent, overrides: Partial<RequestPlan> = {}): RequestPlan =>
  testPlan(agent, { acquireMs: 30_000, ...overrides });

interface Started {
  state: InFlightRequest;
  promise: Promise<{ response: { statusCode: number; body: http.IncomingMessage } }>;
  outcome: { value?: unknown; error?: any } | undefined;
}

function start(
  s: Setup,
  path: string,
  signal?: unknown,
  requestFunc: (options: object) => ClientRequest = http.request,
  plan: RequestPlan = planFor(s.agent)
): Started {
  const httpRequest = new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path });
  const state = new InFlightRequest(s.runtime, httpRequest, plan, `http://127.0.0.1:${port}`, signal);
  const started: Started = { state, promise: undefined as never, outcome: undefined };
  started.promise = new Promise((resolve, reject) =>
    state.start(resolve, reject, requestFunc, { host: "127.0.0.1", port, path, method: "GET", agent: s.agent })
  );
  started.promise.then(
    (value) => {
      started.outcome = { value };
    },
    (error) => {
      started.outcome = { error };
    }
  );
  return started;
}

/** Everything the request held is released: asserted on the real runtime, scheduler, monitor and signal. */
function expectReleased(s: Setup, r: Started, signal?: AbortSignal): void {
  expect(r.state.isFinished).toBe(true);
  expect(r.state.settled).toBe(true);
  expect(s.finished.filter((x) => x === r.state)).toHaveLength(1);
  // Telemetry's fields of the request: its close counted (by the one release above: the runtime counts it there), out
  // of the queued count and off its socket; the monitor's readings walk the live list, which it left (below).
  if (r.state.monitor !== undefined) {
    expect(r.state.isQueued).toBe(false);
    expect(r.state.socketState?.current).not.toBe(r.state);
  }
  expect(r.state.liveNext).toBeUndefined();
  expect(r.state.livePrev).toBeUndefined();
  expect(r.state.idleOn).toBeUndefined();
  expect(r.state.idleWatch?.watching ?? false).toBe(false);
  if (signal !== undefined) expect(getEventListeners(signal, "abort")).toHaveLength(0);
}

function runtimeIdle(s: Setup): void {
  expect(s.runtime.inFlightCount).toBe(0);
  expect(s.runtime.hostScheduler.size).toBe(0);
  expect(s.monitor.getStats().totals.inFlight).toBe(0);
}

/** Settles pending promise callbacks and I/O callbacks (fake timers leave microtasks and I/O real). */
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

const realSetImmediate = setImmediate;

/**
 * `until()` for a request the gate dispatches: its batched drain is Node's own `setImmediate` (`timing.afterPoll`),
 * which runs under fake timers too, so real event-loop turns are enough.
 */
async function untilDrained(predicate: () => boolean): Promise<void> {
  await until(predicate);
}

/** Fake timers for each test of a block; after it, held responses end and the test's runtime, agent and monitor go. */
function fakeTimersPerTest(): void {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    server.seen = 0;
  });
  afterEach(() => {
    for (const res of held.splice(0)) res.end("ok");
    current?.runtime.destroy();
    current?.agent.destroy();
    current?.monitor.destroy();
    current = undefined;
    vi.useRealTimers();
  });
}

describe("InFlightRequest.finish(): one way out, reached from each entry point", () => {
  fakeTimersPerTest();

  it("'close': a completed request finishes once, with every deadline, listener and count released", async () => {
    const s = setup();
    const controller = new AbortController();
    // A body larger than the client buffers: its response stays open until it is read (a small one ends at once).
    const r = start(s, "/big", controller.signal);
    expect(s.runtime.inFlightCount).toBe(1);
    // connection, request and acquisition deadlines armed (one node on the shared scheduler); the abort listener is on.
    for (const kind of ["connection", "request", "acquire"] as const) expect(r.state.deadlineArmed(kind)).toBe(true);
    expect(s.runtime.hostScheduler.size).toBeGreaterThanOrEqual(1);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    await until(() => r.outcome !== undefined);
    const { response } = r.outcome!.value as { response: { statusCode: number; body: http.IncomingMessage } };
    expect(response.statusCode).toBe(200);
    // Settled but the body is still open: in flight until 'close'.
    expect(r.state.isFinished).toBe(false);
    expect(s.runtime.inFlightCount).toBe(1);
    response.body.resume();
    await until(() => r.state.isFinished);
    expectReleased(s, r, controller.signal);
    runtimeIdle(s);
    // A late call of any entry point changes nothing.
    r.state.finish(new Error("late"));
    r.state.destroyByHandler();
    expect(s.finished).toHaveLength(1);
    expect(s.runtime.inFlightCount).toBe(0);
    expect(s.monitor.getStats().origins[0].requests).toMatchObject({ started: 1, completed: 1, aborted: 0 });
  });

  it("leaving the agent queue: an aborted queued request finishes with no 'close' and leaves the queue", async () => {
    const s = setup({ maxSockets: 1 });
    const first = start(s, "/hold");
    await serverSaw(1);
    const controller = new AbortController();
    const queued = start(s, "/ok", controller.signal);
    await until(() => Object.keys(s.agent.requests).length === 1);
    expect(s.runtime.inFlightCount).toBe(2);
    controller.abort();
    await until(() => queued.outcome !== undefined);
    expect(queued.outcome!.error).toMatchObject({ name: "AbortError" });
    expect(queued.state.req?.socket ?? null).toBeNull();
    expect(Object.keys(s.agent.requests)).toEqual([]);
    expectReleased(s, queued, controller.signal);
    expect(s.runtime.inFlightCount).toBe(1);
    expect(s.monitor.getStats().origins[0]).toMatchObject({ inFlight: 1, requests: { aborted: 1 } });
    // The held request is untouched, and ends by 'close' later.
    expect(first.state.isFinished).toBe(false);
    for (const res of held.splice(0)) res.end("ok");
    await until(() => first.outcome !== undefined);
    (first.outcome!.value as { response: { body: http.IncomingMessage } }).response.body.resume();
    await until(() => first.state.isFinished);
    expect(s.finished).toEqual([queued.state, first.state]);
    runtimeIdle(s);
  });

  it("destroy(): in-flight and queued requests reject with HandlerDestroyedError, each finished once", async () => {
    const s = setup({ maxSockets: 1 });
    const controller = new AbortController();
    const inFlight = start(s, "/hold", controller.signal);
    await serverSaw(1);
    const queued = start(s, "/hold", controller.signal);
    await until(() => Object.keys(s.agent.requests).length === 1);
    expect(s.runtime.destroy()).toBe(2);
    await until(() => inFlight.outcome !== undefined && queued.outcome !== undefined);
    expect(inFlight.outcome!.error).toMatchObject({ name: "HandlerDestroyedError", code: "ERR_HANDLER_DESTROYED" });
    expect(inFlight.outcome!.error.message).toContain("while the request was in flight");
    expect(queued.outcome!.error.message).toContain("while it was waiting for a free socket");
    expect(Object.keys(s.agent.requests)).toEqual([]);
    expectReleased(s, inFlight, controller.signal);
    expectReleased(s, queued, controller.signal);
    runtimeIdle(s);
    // The in-flight request's own 'close' comes later and must not release it a second time.
    await until(() => inFlight.state.req?.closed === true);
    expect(s.finished).toHaveLength(2);
    expect(s.runtime.inFlightCount).toBe(0);
    expect(s.runtime.hostScheduler.ticking).toBe(false);
  });

  it("a synchronous throw from http.request: rejects with it, finished once, the count never goes negative", async () => {
    const s = setup();
    const controller = new AbortController();
    const thrown = new TypeError("Invalid character in header content");
    const r = start(s, "/ok", controller.signal, () => {
      throw thrown;
    });
    // Finished inside start(): before any Node request existed, nothing was armed or tracked.
    expect(r.state.isFinished).toBe(true);
    await until(() => r.outcome !== undefined);
    expect(r.outcome!.error).toBe(thrown);
    expect(r.state.req).toBeUndefined();
    expectReleased(s, r, controller.signal);
    runtimeIdle(s);
    expect(s.monitor.getStats().origins).toEqual([]);
  });

  it("a legacy signal (onabort only): finish() clears the onabort it installed, never a caller's", async () => {
    const s = setup();
    const legacy: { aborted: boolean; onabort: unknown } = { aborted: false, onabort: null };
    const r = start(s, "/ok", legacy);
    expect(typeof legacy.onabort).toBe("function");
    await until(() => r.outcome !== undefined);
    (r.outcome!.value as { response: { body: http.IncomingMessage } }).response.body.resume();
    await until(() => r.state.isFinished);
    expect(legacy.onabort).toBeNull();

    // The caller replaced onabort while the request ran: finish() leaves the caller's handler alone.
    const other: { aborted: boolean; onabort: unknown } = { aborted: false, onabort: null };
    const r2 = start(s, "/ok", other);
    const callers = () => {};
    other.onabort = callers;
    await until(() => r2.outcome !== undefined);
    (r2.outcome!.value as { response: { body: http.IncomingMessage } }).response.body.resume();
    await until(() => r2.state.isFinished);
    expect(other.onabort).toBe(callers);
    runtimeIdle(s);
  });

  it("a legacy signal's onabort aborts the request through the same way out", async () => {
    const s = setup();
    const legacy: { aborted: boolean; reason?: unknown; onabort: (() => void) | null } = {
      aborted: false,
      onabort: null,
    };
    const r = start(s, "/hold", legacy);
    await serverSaw(1);
    legacy.aborted = true;
    legacy.onabort?.();
    await until(() => r.outcome !== undefined);
    expect(r.outcome!.error).toMatchObject({ name: "AbortError" });
    await until(() => r.state.isFinished);
    expect(legacy.onabort).toBeNull();
    expect(s.finished).toEqual([r.state]);
    runtimeIdle(s);
  });
});

describe("InFlightRequest in the handler's gate: every deadline, abort and destroy() act while it is queued", () => {
  fakeTimersPerTest();

  /** maxSockets: 1; one request held on the socket, a second one queued in the gate with `overrides`. */
  async function queuedBehindHeld(overrides: Partial<RequestPlan>, signal?: AbortSignal) {
    const s = setup({ maxSockets: 1 });
    const gate = s.runtime.gateFor(s.agent)!;
    const plan = (o: Partial<RequestPlan>) => testPlan(s.agent, { agentGate: gate, ...o });
    const first = start(s, "/hold", undefined, http.request, plan({ connectWaitMs: undefined }));
    await serverSaw(1);
    let created = 0;
    const counting = (options: object) => {
      created++;
      return http.request(options);
    };
    const queued = start(s, "/ok", signal, counting, plan(overrides));
    expect(gate.queued).toBe(1);
    expect(queued.state.listTag).not.toBe(0); // on its gate key's FIFO
    expect(queued.state.req).toBeUndefined();
    expect(Object.keys(s.agent.requests)).toEqual([]);
    // Counted by the monitor as queued, from start().
    vi.advanceTimersByTime(100);
    const origin = s.monitor.getStats().origins[0];
    expect(origin).toMatchObject({ queued: 1, inFlight: 2 });
    expect(origin.oldestQueuedMs).toBeGreaterThanOrEqual(100);
    return { s, gate, first, queued, created: () => created };
  }

  /** The queued request ended without a Node request; the gate is empty and the held one still runs. */
  function expectLeftGate(q: Awaited<ReturnType<typeof queuedBehindHeld>>, signal?: AbortSignal): void {
    expectReleased(q.s, q.queued, signal);
    expect(q.created()).toBe(0);
    expect(q.gate.queued).toBe(0);
    expect(q.gate.total).toBe(1);
    expect(q.queued.state.gateKey).toBeUndefined();
    expect(q.s.runtime.inFlightCount).toBe(1);
    expect(q.s.monitor.getStats().origins[0]).toMatchObject({ queued: 0, inFlight: 1 });
  }

  async function releaseFirst(q: Awaited<ReturnType<typeof queuedBehindHeld>>): Promise<void> {
    for (const res of held.splice(0)) res.end("ok");
    await until(() => q.first.outcome !== undefined);
    (q.first.outcome!.value as { response: { body: http.IncomingMessage } }).response.body.resume();
    await until(() => q.first.state.isFinished);
    expect(q.gate.total).toBe(0);
    runtimeIdle(q.s);
  }

  it("connectionTimeout: today's 'waiting for a free socket' error, no Node request created", async () => {
    const q = await queuedBehindHeld({ connectWaitMs: 1_000, requestMs: undefined });
    vi.advanceTimersByTime(900);
    await until(() => q.queued.outcome !== undefined);
    expect(q.queued.outcome!.error).toMatchObject({ name: "TimeoutError" });
    expect(q.queued.outcome!.error.message).toContain(
      "did not establish a connection with the server within the configured timeout of 1000 ms. The request was still waiting for a free socket (maxSockets=1, 1 requests queued)."
    );
    expectLeftGate(q);
    expect(q.s.monitor.getStats().origins[0].requests.timedOut).toBe(1);
    await releaseFirst(q);
  });

  it("socketAcquisitionTimeout: today's acquisition error", async () => {
    const q = await queuedBehindHeld({
      connectWaitMs: undefined,
      requestMs: undefined,
      acquireMs: 500,
    });
    vi.advanceTimersByTime(400);
    await until(() => q.queued.outcome !== undefined);
    expect(q.queued.outcome!.error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect(q.queued.outcome!.error.message).toMatch(
      /waited 50\d ms for a free socket \(maxSockets=1, 1 requests queued\) and exceeded the configured socketAcquisitionTimeout of 500 ms/
    );
    expectLeftGate(q);
    await releaseFirst(q);
  });

  it("requestTimeout with throwOnRequestTimeout: rejects with ETIMEDOUT while queued", async () => {
    const q = await queuedBehindHeld({
      connectWaitMs: undefined,
      requestMs: 300,
      requestTimeoutThrows: true,
    });
    vi.advanceTimersByTime(200);
    await until(() => q.queued.outcome !== undefined);
    expect(q.queued.outcome!.error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect(q.queued.outcome!.error.message).toContain(
      "[ERROR] a request has exceeded the configured 300 ms requestTimeout"
    );
    expectLeftGate(q);
    await releaseFirst(q);
  });

  it("requestTimeout warn-only: warns while queued, stays queued, then is dispatched on the freed socket", async () => {
    const warn = vi.fn();
    const q = await queuedBehindHeld({
      connectWaitMs: undefined,
      requestMs: 300,
      requestTimeoutThrows: false,
      logger: { warn } as never,
    });
    vi.advanceTimersByTime(200);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toContain("[WARN] a request has exceeded the configured 300 ms requestTimeout");
    expect(q.queued.outcome).toBeUndefined();
    expect(q.gate.queued).toBe(1);
    for (const res of held.splice(0)) res.end("ok");
    await until(() => q.first.outcome !== undefined);
    (q.first.outcome!.value as { response: { body: http.IncomingMessage } }).response.body.resume();
    await untilDrained(() => q.queued.outcome !== undefined);
    expect(q.created()).toBe(1);
    const { response } = q.queued.outcome!.value as { response: { statusCode: number; body: http.IncomingMessage } };
    expect(response.statusCode).toBe(200);
    response.body.resume();
    await until(() => q.queued.state.isFinished && q.first.state.isFinished);
    expect(q.gate.total).toBe(0);
    // The freed socket was reused: one connection for both.
    expect(q.s.monitor.getStats().origins[0].sockets).toMatchObject({
      created: 1,
      acquisitions: 2,
      reusedAcquisitions: 1,
    });
    runtimeIdle(q.s);
  });

  it("abort: AbortError, an O(1) unlink, counted as aborted", async () => {
    const controller = new AbortController();
    const q = await queuedBehindHeld({}, controller.signal);
    controller.abort();
    await until(() => q.queued.outcome !== undefined);
    expect(q.queued.outcome!.error).toMatchObject({ name: "AbortError" });
    expectLeftGate(q, controller.signal);
    expect(q.s.monitor.getStats().origins[0].requests.aborted).toBe(1);
    await releaseFirst(q);
  });

  it("handler destroy(): HandlerDestroyedError saying it was queued; nothing dispatched meanwhile", async () => {
    const q = await queuedBehindHeld({});
    const third = start(q.s, "/ok", undefined, http.request, q.queued.state.requestPlan);
    expect(q.gate.queued).toBe(2);
    expect(q.s.runtime.destroy()).toBe(3);
    await until(() => q.queued.outcome !== undefined && third.outcome !== undefined && q.first.outcome !== undefined);
    expect(q.queued.outcome!.error).toMatchObject({ name: "HandlerDestroyedError", code: "ERR_HANDLER_DESTROYED" });
    expect(q.queued.outcome!.error.message).toMatch(
      /while it was waiting for a free socket \(maxSockets=1, [12] requests queued\)/
    );
    expect(third.outcome!.error.message).toContain("while it was waiting for a free socket");
    expect(q.created()).toBe(0);
    expect(q.gate).toMatchObject({ queued: 0, total: 0 });
    expectReleased(q.s, q.queued);
    expectReleased(q.s, third);
    runtimeIdle(q.s);
  });
});

describe("connectionTimeout is armed only for a request that has no connected socket", () => {
  fakeTimersPerTest();

  const gatedPlan = (s: Setup): RequestPlan => planFor(s.agent, { agentGate: s.runtime.gateFor(s.agent) });

  async function completed(r: Started): Promise<void> {
    await until(() => r.outcome !== undefined);
    (r.outcome!.value as { response: { body: http.IncomingMessage } }).response.body.resume();
    await until(() => r.state.isFinished);
  }

  it("a cold pool: armed at dispatch, from handle(); a warm pool's free socket: never armed", async () => {
    const s = setup({ maxSockets: 2 });
    vi.advanceTimersByTime(250); // the clock is not at 0: `at` below is measured from start()
    const cold = start(s, "/ok", undefined, http.request, gatedPlan(s));
    expect(cold.state.deadlineDueAt("connection")).toBe(cold.state.begunAt + 5_000);
    await completed(cold);
    expect(cold.state.deadlineArmed("connection")).toBe(false);
    expect(Object.values(s.agent.freeSockets).flat()).toHaveLength(1);

    const warm = start(s, "/ok", undefined, http.request, gatedPlan(s));
    expect(warm.state.req?.reusedSocket).toBe(true);
    expect(warm.state.deadlineArmed("connection")).toBe(false);
    await completed(warm);
    expect(warm.state.deadlineArmed("connection")).toBe(false);
    expect((warm.outcome!.value as { response: { statusCode: number } }).response.statusCode).toBe(200);
    expect(s.monitor.getStats().origins[0].requests).toMatchObject({ started: 2, completed: 2 });
    runtimeIdle(s);
  });

  it("a free socket destroyed under it: Node opens a new connection, timed from handle()", async () => {
    const s = setup({ maxSockets: 2 });
    await completed(start(s, "/ok", undefined, http.request, gatedPlan(s)));
    const [free] = Object.values(s.agent.freeSockets).flat();
    free!.destroy(); // still in the free list until its 'close': Node skips it and opens a new connection
    vi.advanceTimersByTime(100);
    const r = start(s, "/ok", undefined, http.request, gatedPlan(s));
    expect(Object.values(s.agent.freeSockets).flat()).toHaveLength(0);
    expect(r.state.deadlineDueAt("connection")).toBe(r.state.begunAt + 5_000);
    await completed(r);
    expect(r.state.deadlineArmed("connection")).toBe(false);
    expect(s.monitor.getStats().origins[0].sockets.created).toBe(2);
    runtimeIdle(s);
  });

  it("no gate (an agent without a socket limit): a free socket skips it too; waiting in agent.requests is timed", async () => {
    const s = setup({ maxSockets: 1 });
    await completed(start(s, "/ok"));
    const warm = start(s, "/hold");
    expect(warm.state.gateKey).toBeUndefined();
    expect(warm.state.deadlineArmed("connection")).toBe(false);
    await serverSaw(2);
    // The one socket is busy: the next request waits in the agent's queue, with connectionTimeout running.
    const queued = start(s, "/ok");
    expect(queued.state.deadlineArmed("connection")).toBe(true);
    vi.advanceTimersByTime(4_999);
    expect(queued.outcome).toBeUndefined();
    vi.advanceTimersByTime(1);
    await until(() => queued.outcome !== undefined);
    expect(queued.outcome!.error.message).toContain("The request was still waiting for a free socket");
    expectReleased(s, queued);
  });

  it("a request function that is not Node's (no `reusedSocket`): armed", () => {
    const s = setup();
    const r = start(s, "/ok", undefined, (options) => {
      const req = http.request(options);
      Object.defineProperty(req, "reusedSocket", { value: undefined });
      return req;
    });
    expect(r.state.deadlineArmed("connection")).toBe(true);
  });
});
