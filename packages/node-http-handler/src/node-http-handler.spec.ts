/**
 * Timer behaviour of the handler under vitest fake timers, against a real loopback server (I/O stays real; only
 * timers and clocks are faked). Waits are event-driven (server saw N requests), never sleeps.
 */
import { HttpRequest } from "@smithy/protocol-http";
import http from "node:http";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test as it, vi } from "vitest";
import { FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import { HoldingServer } from "./holding-server.mock";
import { NodeHttpHandler } from "./node-http-handler";
import type { NodeHttpHandlerOptions } from "./node-http-handler-options";
import { SOCKET_MONITOR_ENV } from "@sockeye/pool-monitor";
import { timing } from "@sockeye/pool-monitor/internal";

const server = new HoldingServer((url) => url.startsWith("/hold"));
let port: number;
/**
 * Resolves once the server has seen `n` requests. The handler's gate dispatches queued requests from Node's own
 * `setImmediate` (`timing.afterPoll`), which runs under fake timers too: no fake time has to pass for it.
 */
const serverSaw = (n: number): Promise<void> => server.saw(n);
const releaseAll = (): void => server.releaseAll();

beforeAll(async () => {
  await server.start();
  port = server.port;
});

afterAll(() => server.close());

function get(path = "/"): HttpRequest {
  return new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path, headers: {} });
}

/** Consumes the body as soon as headers arrive (an unread body would pin its keep-alive socket). */
async function consume(p: Promise<{ response: { body?: any } }>): Promise<void> {
  const { response } = await p;
  response.body.resume();
  await new Promise((resolve) => response.body.once("end", resolve));
}

/** Starts n requests whose bodies are consumed on arrival; failures become values (never unhandled). */
function startMany(h: NodeHttpHandler, n: number, path: string): Promise<unknown>[] {
  return Array.from({ length: n }, () => consume(h.handle(get(path))).catch((e) => e));
}

/** Answers held requests as they arrive until the server has seen `total` requests. */
async function drain(total: number): Promise<void> {
  releaseAll();
  while (server.seen < total) {
    await serverSaw(server.seen + 1);
    releaseAll();
  }
}

function runtimeOf(handler: NodeHttpHandler) {
  return (handler as any).runtime as { hostScheduler: { ticking: boolean; size: number }; inFlightCount: number };
}

/** Every native timer `spy` saw created went to the handler's one scheduler (none per request). */
function onlySchedulerTimers(spy: { mock: { calls: unknown[][] } }, handler: NodeHttpHandler): boolean {
  return spy.mock.calls.every((call) => call[2] === runtimeOf(handler).hostScheduler);
}

describe("NodeHttpHandler timers (fake timers)", () => {
  let handler: NodeHttpHandler | undefined;
  const savedEnv = process.env[SOCKET_MONITOR_ENV];

  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    server.seen = 0;
    delete process.env[SOCKET_MONITOR_ENV];
  });
  afterEach(() => {
    releaseAll();
    handler?.destroy();
    handler = undefined;
    vi.useRealTimers();
    vi.restoreAllMocks();
    if (savedEnv === undefined) delete process.env[SOCKET_MONITOR_ENV];
    else process.env[SOCKET_MONITOR_ENV] = savedEnv;
  });

  it("creates no timer before the first handle(), then one shared timer across many concurrent requests", async () => {
    const setInterval = vi.spyOn(timing, "setInterval");
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 10 } });
    expect(setTimeout).not.toHaveBeenCalled();
    const pending = startMany(handler, 50, "/hold");
    await serverSaw(10);
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(onlySchedulerTimers(setTimeout, handler)).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(true);
    await drain(50);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
    // 50 requests (and 50 free-socket sweeps armed later than the sample tick): still that one timer.
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(setInterval).not.toHaveBeenCalled();
  });

  it("once idle, the one timer lapses at its due time and nothing re-arms it", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler();
    await consume(handler.handle(get()));
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(true);
    // The sample tick (due at 1 s) finds nothing to do and is not re-armed; the free socket keeps no timer.
    vi.advanceTimersByTime(1000);
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(onlySchedulerTimers(setTimeout, handler)).toBe(true);
    const calls = setTimeout.mock.calls.length;
    vi.advanceTimersByTime(60_000);
    expect(setTimeout).toHaveBeenCalledTimes(calls);
  });

  it("the timer is unref'd", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler();
    const p = handler.handle(get("/hold"));
    await serverSaw(1);
    expect(setTimeout).toHaveBeenCalledTimes(1);
    const timer = setTimeout.mock.results[0].value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    releaseAll();
    await consume(p);
  });

  it("creates no timer at all when the agent has maxSockets: Infinity and no timeouts are set", async () => {
    const setInterval = vi.spyOn(timing, "setInterval");
    const setTimeout = vi.spyOn(timing, "setTimeout");
    // idleSocketTimeout: 0 too (a limit that is set is a deadline while requests run).
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: Infinity }, idleSocketTimeout: 0 });
    await Promise.all([consume(handler.handle(get())), consume(handler.handle(get()))]);
    expect(setInterval).not.toHaveBeenCalled();
    expect(setTimeout).not.toHaveBeenCalled();
  });

  it("while requests run, an expired free socket is closed at its limit on the one timer", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: Infinity } });
    await Promise.all([consume(handler.handle(get())), consume(handler.handle(get()))]);
    const held = handler.handle(get("/hold")); // takes one free socket; the other stays free
    await serverSaw(3);
    const agent = (handler.httpHandlerConfigs() as any).httpAgent as http.Agent;
    const free = () => Object.values(agent.freeSockets).reduce((n, q) => n + (q?.length ?? 0), 0);
    expect(free()).toBe(1);
    vi.advanceTimersByTime(4000 - 1);
    expect(free()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(free()).toBe(0);
    expect(onlySchedulerTimers(setTimeout, handler)).toBe(true);
    releaseAll();
    await consume(held);
  });

  it("re-evaluates when a lazily created finite agent appears", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: Infinity } });
    await consume(handler.handle(get()));
    expect(setTimeout).not.toHaveBeenCalled();
    handler.updateHttpClientConfig("httpAgent", new http.Agent({ keepAlive: true, maxSockets: 5 }));
    await consume(handler.handle(get()));
    // The sample tick (and the first socket's sweep, due once requests run again): the one scheduler timer.
    expect(setTimeout).toHaveBeenCalled();
    expect(onlySchedulerTimers(setTimeout, handler)).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
  });

  it("destroy() clears the timer", async () => {
    const clearTimeout = vi.spyOn(timing, "clearTimeout");
    handler = new NodeHttpHandler({ requestTimeout: 60_000 });
    const p = handler.handle(get("/hold"));
    await serverSaw(1);
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(true);
    handler.destroy();
    expect(clearTimeout).toHaveBeenCalled();
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(false);
    await expect(p).rejects.toThrow();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("honours a minimum window when requestTimeout and connectionTimeout are 0 (no spin, no timer per request)", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({
      requestTimeout: 0,
      connectionTimeout: 0,
      httpAgent: { maxSockets: 1 },
      logger,
      telemetry: false,
    });
    const pending = startMany(handler, 3, "/hold");
    await serverSaw(1);
    // Three 200 ms windows (MIN_WARNING_WINDOW_MS) on the one scheduler timer.
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(setTimeout.mock.calls[0][1]).toBe(200);
    expect(onlySchedulerTimers(setTimeout, handler)).toBe(true);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2000);
    // The windows expired (checked once each); nothing else is armed, so the timer lapsed instead of spinning.
    expect(vi.getTimerCount()).toBe(0);
    expect(setTimeout).toHaveBeenCalledTimes(1);
    await drain(3);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it("with telemetry off, interval mode applies upstream's criteria only after a request waited the whole window", async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 1 }, logger, telemetry: false });
    const pending = startMany(handler, 5, "/hold");
    await serverSaw(1);
    vi.advanceTimersByTime(2999);
    expect(logger.warn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain("socket usage at capacity=1 and 4 additional requests are enqueued");
    expect(logger.warn.mock.calls[0][0]).toMatch(/^@sockeye\/node-http-handler:WARN - /);
    // 15 s lockout: the other 4 windows expiring do not warn again.
    vi.advanceTimersByTime(5000);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    await drain(5);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it("interval mode: a stalled pool (every socket busy, no completion) warns once via the detector, with a report", async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const onSaturation = vi.fn();
    const onRecovery = vi.fn();
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 1 }, logger, onSaturation, onRecovery });
    const pending = startMany(handler, 5, "/hold");
    await serverSaw(1);
    vi.advanceTimersByTime(1000);
    expect(logger.warn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(9000);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toMatch(/^@sockeye\/node-http-handler:WARN - /);
    expect(logger.warn.mock.calls[0][0]).toContain("socket usage at capacity=1 and 4 additional requests are enqueued");
    expect(onSaturation).toHaveBeenCalledTimes(1);
    const report = onSaturation.mock.calls[0][0];
    expect(report.origin).toBe(`http://127.0.0.1:${port}`);
    expect(report.queued).toBe(4);
    expect(JSON.stringify(report)).not.toContain("/hold");
    const stats = handler.getPoolStats();
    expect(stats.origins[0].saturation.state).not.toBe("ok");
    await drain(5);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
    vi.advanceTimersByTime(15_000);
    expect(onRecovery).toHaveBeenCalledTimes(1);
    expect(handler.getPoolStats().origins[0].saturation.state).toBe("ok");
    // Idle again: the timer lapsed by itself.
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(false);
  });

  it("interval mode: a Promise.all batch that drains never warns", async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 2 }, logger });
    const pending = startMany(handler, 40, "/hold");
    // Two requests complete per simulated 500 ms: the queue only shrinks.
    for (let done = 2; done <= 40; done += 2) {
      await serverSaw(done);
      vi.advanceTimersByTime(500);
      releaseAll();
    }
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
    vi.advanceTimersByTime(10_000);
    expect(logger.warn).not.toHaveBeenCalled();
    const origin = handler.getPoolStats().origins[0];
    expect(origin.requests.completed).toBe(40);
    expect(origin.saturation.state).toBe("ok");
  });

  it("\"per-request\" mode arms upstream's warning timer per request with upstream's delay", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler({
      socketMonitor: "per-request",
      connectionTimeout: 3100,
      httpAgent: { maxSockets: 5 },
    });
    const pending = startMany(handler, 3, "/");
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
    const warningTimers = setTimeout.mock.calls.filter((c) => c[1] === 2000 + 3100);
    expect(warningTimers).toHaveLength(3);
    // connectionTimeout still runs on the shared scheduler: its one timer, not one per request.
    const scheduler = runtimeOf(handler).hostScheduler;
    expect(setTimeout.mock.calls.filter((c) => c[2] === scheduler)).toHaveLength(1);
    expect(setTimeout).toHaveBeenCalledTimes(4);
  });

  it('"per-request" mode warns like upstream', async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({ socketMonitor: "per-request", httpAgent: { maxSockets: 1 }, logger });
    const pending = startMany(handler, 5, "/hold");
    await serverSaw(1);
    vi.advanceTimersByTime(3000);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain("socket usage at capacity=1 and 4 additional requests are enqueued");
    await drain(5);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it('"off" mode creates no monitoring timer at all', async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const setInterval = vi.spyOn(timing, "setInterval");
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({ socketMonitor: "off", httpAgent: { maxSockets: 1 }, logger });
    const pending = startMany(handler, 5, "/hold");
    await serverSaw(1);
    vi.advanceTimersByTime(20_000);
    expect(setTimeout).not.toHaveBeenCalled();
    expect(setInterval).not.toHaveBeenCalled();
    expect(logger.warn).not.toHaveBeenCalled();
    await drain(5);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it("uses SOCKEYE_SOCKET_MONITOR when the option is absent; the option wins over it", async () => {
    process.env[SOCKET_MONITOR_ENV] = "off";
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler();
    await consume(handler.handle(get()));
    expect(setTimeout).not.toHaveBeenCalled();
    handler.destroy();
    handler = new NodeHttpHandler({ socketMonitor: "interval" });
    await consume(handler.handle(get()));
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(onlySchedulerTimers(setTimeout, handler)).toBe(true);
  });

  it("rejects an invalid mode, naming the option or the variable and the allowed values", () => {
    expect(() => new NodeHttpHandler({ socketMonitor: "sometimes" as any })).toThrow(
      /invalid option socketMonitor: "sometimes"; expected one of "interval", "per-request", "off"/
    );
    process.env[SOCKET_MONITOR_ENV] = "loud";
    expect(() => new NodeHttpHandler()).toThrow(/invalid environment variable SOCKEYE_SOCKET_MONITOR: "loud"/);
  });

  it("a provider with a bad mode rejects handle() with the same clear error", async () => {
    handler = new NodeHttpHandler(async () => ({ socketMonitor: "x" as any }));
    await expect(handler.handle(get())).rejects.toThrow(/invalid option socketMonitor: "x"/);
  });

  it("updateHttpClientConfig('socketMonitor') switches mode at runtime without leaking a timer", async () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 5 } });
    await consume(handler.handle(get()));
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(true);
    expect(setTimeout).toHaveBeenCalledTimes(1); // the scheduler's (sample tick)
    handler.updateHttpClientConfig("socketMonitor", "per-request");
    await consume(handler.handle(get()));
    expect(setTimeout).toHaveBeenCalledTimes(2); // + upstream's warning timer
    handler.updateHttpClientConfig("socketMonitor", "off");
    await consume(handler.handle(get()));
    expect(setTimeout).toHaveBeenCalledTimes(2);
    vi.advanceTimersByTime(1000);
    expect(runtimeOf(handler).hostScheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(() => handler!.updateHttpClientConfig("socketMonitor", "fast")).toThrow(
      /invalid option socketMonitor: "fast"/
    );
  });

  it("re-initialises from the new config after updateHttpClientConfig", async () => {
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 1 }, logger, telemetry: false });
    await consume(handler.handle(get()));
    handler.updateHttpClientConfig("socketAcquisitionWarningTimeout", 500);
    expect(handler.httpHandlerConfigs()).toEqual({});
    const pending = startMany(handler, 3, "/hold");
    await serverSaw(2);
    vi.advanceTimersByTime(500);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain("capacity=1 and 2 additional requests");
    await drain(4);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it("requestTimeout fires on the shared scheduler exactly at its limit, never early", async () => {
    handler = new NodeHttpHandler({ requestTimeout: 1000, throwOnRequestTimeout: true });
    const p = handler.handle(get("/hold"));
    const outcome = p.then(
      () => "resolved",
      (e: Error) => e
    );
    await serverSaw(1);
    vi.advanceTimersByTime(999);
    await Promise.resolve();
    expect(runtimeOf(handler).inFlightCount).toBe(1);
    vi.advanceTimersByTime(1);
    const error = (await outcome) as Error & { code?: string };
    expect(error.name).toBe("TimeoutError");
    expect(error.code).toBe("ETIMEDOUT");
    expect(error.message).toBe(
      "@sockeye/node-http-handler - [ERROR] a request has exceeded the configured 1000 ms requestTimeout."
    );
  });

  it("socketAcquisitionTimeout fails a queued request with a message naming maxSockets and the queue", async () => {
    handler = new NodeHttpHandler({ socketAcquisitionTimeout: 500, httpAgent: { maxSockets: 1 } });
    const first = handler.handle(get("/hold"));
    await serverSaw(1);
    const second = handler.handle(get("/hold")).catch((e) => e);
    await Promise.resolve();
    vi.advanceTimersByTime(499);
    await Promise.resolve();
    expect(runtimeOf(handler).inFlightCount).toBe(2);
    vi.advanceTimersByTime(1);
    const error = await second;
    expect(error.name).toBe("TimeoutError");
    expect(error.code).toBe("ETIMEDOUT");
    expect(error.message).toMatch(/waited \d+ ms for a free socket \(maxSockets=1, 1 requests queued\)/);
    const agent = (handler.httpHandlerConfigs() as any).httpAgent as http.Agent;
    // It left the agent queue.
    const queued = Object.values(agent.requests).reduce((n, q) => n + (q?.length ?? 0), 0);
    expect(queued).toBe(0);
    releaseAll();
    await consume(first);
  });
});

describe("NodeHttpHandler runtime configuration of telemetry (fake timers)", () => {
  let handler: NodeHttpHandler | undefined;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    server.seen = 0;
  });
  afterEach(() => {
    releaseAll();
    handler?.destroy();
    handler = undefined;
    vi.useRealTimers();
  });

  it("updateHttpClientConfig validates saturation, callbacks and telemetry now, naming the option and value", () => {
    handler = new NodeHttpHandler();
    expect(() => handler!.updateHttpClientConfig("saturation", { windowSamples: 1 })).toThrow(/windowSamples/);
    expect(() => handler!.updateHttpClientConfig("saturation", 5 as any)).toThrow(/invalid option saturation: 5/);
    expect(() => handler!.updateHttpClientConfig("onSaturation", "x" as any)).toThrow(/onSaturation/);
    expect(() => handler!.updateHttpClientConfig("telemetry", "yes" as any)).toThrow(
      /invalid option telemetry: "yes"; expected a boolean/
    );
    expect(() => new NodeHttpHandler({ telemetry: 1 as any })).toThrow(/invalid option telemetry: 1/);
    // throwOnRequestTimeout: the constructor and updateHttpClientConfig apply the same shared rule.
    expect(() => new NodeHttpHandler({ throwOnRequestTimeout: "false" as any })).toThrow(TypeError);
    expect(() => handler!.updateHttpClientConfig("throwOnRequestTimeout", 1)).toThrow(
      "@sockeye/node-http-handler - invalid option throwOnRequestTimeout: 1; expected a boolean (true or false)."
    );
    // A rejected update changed nothing.
    expect(handler.poolMonitor?.sampleIntervalMs).toBe(1000);
  });

  it("a new saturation object and callback apply at once; omitted saturation fields return to their defaults", async () => {
    const first = vi.fn();
    const second = vi.fn();
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    handler = new NodeHttpHandler({
      httpAgent: { maxSockets: 1 },
      logger,
      onSaturation: first,
      saturation: { sampleIntervalMs: 2000 },
    });
    expect(handler.poolMonitor?.sampleIntervalMs).toBe(2000);
    handler.updateHttpClientConfig("saturation", { windowSamples: 3 });
    expect(handler.poolMonitor?.sampleIntervalMs).toBe(1000);
    handler.updateHttpClientConfig("onSaturation", second);
    const pending = startMany(handler, 4, "/hold");
    await serverSaw(1);
    // K = 3 samples of 1 s with every socket busy, a queue and no completion: one report, to the new callback.
    vi.advanceTimersByTime(4000);
    expect(second).toHaveBeenCalledTimes(1);
    expect(first).not.toHaveBeenCalled();
    expect(second.mock.calls[0][0].queued).toBe(3);
    await drain(4);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it("telemetry can be switched off and on at runtime; the monitor keeps its counts", async () => {
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 2 } });
    await consume(handler.handle(get()));
    const monitor = handler.poolMonitor!;
    expect(monitor.getStats().origins[0].requests.completed).toBe(1);
    handler.updateHttpClientConfig("telemetry", false);
    expect(handler.poolMonitor).toBeUndefined();
    expect(handler.getPoolStats().origins).toEqual([]);
    await consume(handler.handle(get()));
    expect(monitor.getStats().origins[0].requests.completed).toBe(1);
    handler.updateHttpClientConfig("telemetry", true);
    expect(handler.poolMonitor).toBe(monitor);
    await consume(handler.handle(get()));
    await vi.waitFor(() => expect(monitor.getStats().origins[0].requests.completed).toBe(2));
    expect(monitor.getStats().totals.inFlight).toBe(0);
  });

  it("provider form: the monitor exists from construction; updates made before the provider resolved win over it", async () => {
    const fromProvider = vi.fn();
    const fromUpdate = vi.fn();
    let resolveOptions!: (options: NodeHttpHandlerOptions) => void;
    handler = new NodeHttpHandler(() => new Promise<NodeHttpHandlerOptions>((resolve) => (resolveOptions = resolve)));
    const monitor = handler.poolMonitor;
    expect(monitor).toBeDefined();
    // Validated now, as with an options object; a rejected update changes nothing.
    expect(() => handler!.updateHttpClientConfig("saturation", { windowSamples: 1 })).toThrow(/windowSamples/);
    handler.updateHttpClientConfig("saturation", { windowSamples: 3 });
    handler.updateHttpClientConfig("onSaturation", fromUpdate);
    resolveOptions({
      httpAgent: { maxSockets: 1 },
      logger: { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() },
      onSaturation: fromProvider,
      saturation: { windowSamples: 8, sampleIntervalMs: 2000 },
    });
    const pending = startMany(handler, 4, "/hold");
    await serverSaw(1);
    // The later updates replaced the provider's saturation object (sampleIntervalMs back to its default) and callback.
    expect(handler.poolMonitor).toBe(monitor);
    expect(monitor!.sampleIntervalMs).toBe(1000);
    // K = 3 (the update), not 8 (the provider): one report within 4 samples, to the update's callback.
    vi.advanceTimersByTime(4000);
    expect(fromUpdate).toHaveBeenCalledTimes(1);
    expect(fromProvider).not.toHaveBeenCalled();
    await drain(4);
    expect((await Promise.all(pending)).filter(Boolean)).toEqual([]);
  });

  it("provider form: the provider's telemetry: false drops the monitor, unless telemetry was switched on meanwhile", async () => {
    handler = new NodeHttpHandler(async () => ({ telemetry: false }));
    await consume(handler.handle(get()));
    expect(handler.poolMonitor).toBeUndefined();
    handler.destroy();
    handler = new NodeHttpHandler(async () => ({ telemetry: false }));
    handler.updateHttpClientConfig("telemetry", true);
    await consume(handler.handle(get()));
    expect(handler.poolMonitor).toBeDefined();
    await vi.waitFor(() => expect(handler!.getPoolStats().origins[0].requests.completed).toBe(1));
  });

  it("Expect: 100-continue requests (one-off agent) are counted per origin outside the pool gauges", async () => {
    handler = new NodeHttpHandler({ httpAgent: { maxSockets: 2 } });
    const request = get("/upload");
    request.method = "PUT";
    request.headers = { Expect: "100-continue", "content-length": "5" };
    request.body = "hello";
    await consume(handler.handle(request));
    await vi.waitFor(() => expect(handler!.getPoolStats().origins[0].unpooled?.completed).toBe(1));
    const origin = handler.getPoolStats().origins[0];
    expect(origin.unpooled).toMatchObject({ started: 1, inFlight: 0, completed: 1, failed: 0 });
    expect(origin.requests.completed).toBe(0);
    expect(origin.active + origin.idle + origin.queued).toBe(0);
  });
});
