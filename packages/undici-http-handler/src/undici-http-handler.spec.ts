import { HttpRequest } from "@smithy/protocol-http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { POOL_MONITOR_DEFAULTS } from "@sockeye/pool-monitor";
import { TICK_MS } from "@sockeye/pool-monitor/internal";
import { FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import { connect, respond, stubDispatcher } from "./stub-dispatcher.mock";
import { UndiciHttpHandler } from "./undici-http-handler";

const request = () =>
  new HttpRequest({ protocol: "https:", hostname: "example.com", port: 443, method: "GET", path: "/", headers: {} });

function quietLogger() {
  return { warn: vi.fn(), debug() {}, info() {}, error() {}, trace() {} };
}

/** Lets the handler's first handle() resolve its config (one awaited promise). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

async function outcome(p: Promise<unknown>) {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error) => ({ ok: false as const, error })
  );
}

describe("UndiciHttpHandler deadlines (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("requestTimeout without throwOnRequestTimeout warns once, at the timeout (never early)", async () => {
    const dispatcher = stubDispatcher();
    const logger = quietLogger();
    const h = new UndiciHttpHandler({ dispatcher, requestTimeout: 1000, logger });
    const p = h.handle(request());
    await flush();
    connect(dispatcher.calls[0]);
    vi.advanceTimersByTime(999);
    expect(logger.warn).not.toHaveBeenCalled();
    // Due at 1000 ms: it fires in the timers phase that reaches it.
    vi.advanceTimersByTime(1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain("exceeded the configured 1000 ms requestTimeout");
    respond(dispatcher.calls[0], 200, [Buffer.from("x-a"), Buffer.from("1")], "OK");
    const { response } = (await p) as any;
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({ "x-a": "1" });
    dispatcher.calls[0].handler.onResponseEnd(dispatcher.calls[0].controller, {});
    vi.advanceTimersByTime(5000);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    h.destroy();
  });

  it("requestTimeout with throwOnRequestTimeout rejects TimeoutError ETIMEDOUT and aborts the exchange", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, requestTimeout: 2000, throwOnRequestTimeout: true });
    const p = outcome(h.handle(request()));
    await flush();
    connect(dispatcher.calls[0]);
    vi.advanceTimersByTime(2000 + TICK_MS);
    const r = await p;
    expect(r.ok).toBe(false);
    expect((r as any).error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect(dispatcher.calls[0].aborts).toEqual([(r as any).error]);
    expect(h.getPoolStats().origins[0].requests.timedOut).toBe(1);
    expect(h.getPoolStats().totals.inFlight).toBe(0);
    h.destroy();
  });

  it("a per-call requestTimeout rejects TimeoutError ETIMEDOUT by default (as upstream); false keeps it a warning", async () => {
    const dispatcher = stubDispatcher();
    const logger = quietLogger();
    const h = new UndiciHttpHandler({ dispatcher, logger });
    const p = outcome(h.handle(request(), { requestTimeout: 500 }));
    await flush();
    vi.advanceTimersByTime(500 + TICK_MS);
    const r = await p;
    expect(r.ok).toBe(false);
    expect((r as any).error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect(logger.warn).not.toHaveBeenCalled();
    h.destroy();
    const warnOnly = new UndiciHttpHandler({ dispatcher: stubDispatcher(), logger, throwOnRequestTimeout: false });
    let settled = false;
    const abort = new AbortController();
    const q = outcome(warnOnly.handle(request(), { requestTimeout: 500, abortSignal: abort.signal as any })).finally(
      () => {
        settled = true;
      }
    );
    await flush();
    vi.advanceTimersByTime(500 + TICK_MS);
    await flush();
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(settled).toBe(false);
    abort.abort();
    expect(((await q) as any).error.name).toBe("AbortError");
    warnOnly.destroy();
  });

  it("the #fragment is not sent, Expect is removed, the caller's header bag is left alone", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher });
    const req = new HttpRequest({
      protocol: "https:",
      hostname: "example.com",
      port: 443,
      method: "PUT",
      path: "/key",
      query: { a: "1" },
      fragment: "section",
      headers: { Expect: "100-continue", "x-kept": "yes" },
      body: "data",
    });
    void h.handle(req).catch(() => {});
    await flush();
    const sent = dispatcher.calls[0].options;
    expect(sent.path).toBe("/key?a=1");
    expect(sent.headers).toEqual({ "x-kept": "yes" });
    expect(req.headers).toEqual({ Expect: "100-continue", "x-kept": "yes" });
    h.destroy();
  });

  it("a per-call requestTimeout overrides the handler's", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, requestTimeout: 60_000, throwOnRequestTimeout: true });
    const p = outcome(h.handle(request(), { requestTimeout: 500 }));
    await flush();
    vi.advanceTimersByTime(500 + TICK_MS);
    expect((await p).ok).toBe(false);
    h.destroy();
  });

  it("a handle() started while the provider is pending uses an update made meanwhile", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler(async () => ({ dispatcher, requestTimeout: 60_000, throwOnRequestTimeout: true }));
    const p = outcome(h.handle(request()));
    h.updateHttpClientConfig("requestTimeout", 500);
    await flush();
    expect(dispatcher.calls).toHaveLength(1);
    vi.advanceTimersByTime(500 + TICK_MS);
    expect(((await p) as any).error.message).toContain("500 ms");
    h.destroy();
  });

  it("connectionTimeout before undici gave a connection rejects at once; undici later drops the request unsent, keeping the connection", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, connectionTimeout: 1000 });
    const p = outcome(h.handle(request()));
    await flush();
    vi.advanceTimersByTime(1000 + TICK_MS);
    const r = await p;
    expect((r as any).error.name).toBe("TimeoutError");
    expect((r as any).error.message).toContain("within the configured timeout of 1000 ms");
    expect(h.getPoolStats().totals.inFlight).toBe(0);
    // undici hands it a connection later: the handler refuses it by throwing (undici drops the request unsent and
    // keeps the connection), never by aborting through the controller (which would destroy the socket).
    const call = dispatcher.calls[0];
    expect(connect(call)).toBe("dropped");
    expect(call.aborts).toEqual([]);
    expect(h.getPoolStats().origins[0].sockets.acquisitions).toBe(0);
    h.destroy();
  });

  it("a connection in time cancels connectionTimeout and socketAcquisitionTimeout: nothing fires later", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, connectionTimeout: 1000, socketAcquisitionTimeout: 800 });
    const p = outcome(h.handle(request()));
    await flush();
    vi.advanceTimersByTime(300);
    connect(dispatcher.calls[0]);
    expect((h as any).scheduler.size).toBe(0);
    vi.advanceTimersByTime(5000);
    respond(dispatcher.calls[0], 204, []);
    expect((await p).ok).toBe(true);
    expect(dispatcher.calls[0].aborts).toEqual([]);
    h.destroy();
  });

  it("socketAcquisitionTimeout (shorter than connectionTimeout) rejects ETIMEDOUT naming the wait and the setting", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, connectionTimeout: 5000, socketAcquisitionTimeout: 700 });
    const p = outcome(h.handle(request()));
    await flush();
    vi.advanceTimersByTime(700 + TICK_MS);
    const r = await p;
    expect((r as any).error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect((r as any).error.message).toMatch(/waited \d+ ms for a free connection/);
    expect((r as any).error.message).toContain("socketAcquisitionTimeout of 700 ms");
    h.destroy();
  });

  it("no native timer per request: 200 requests with every deadline share one interval", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({
      dispatcher,
      connectionTimeout: 5000,
      requestTimeout: 10_000,
      throwOnRequestTimeout: true,
      socketAcquisitionTimeout: 8000,
    });
    const all = Array.from({ length: 200 }, () => outcome(h.handle(request())));
    await flush();
    expect(dispatcher.calls).toHaveLength(200);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(5000 + TICK_MS);
    const results = await Promise.all(all);
    expect(results.every((r) => !r.ok && (r as any).error.name === "TimeoutError")).toBe(true);
    // The recurring tick (one per sampleIntervalMs, 1 s) finds the handler idle and is not re-armed.
    vi.advanceTimersByTime(2 * POOL_MONITOR_DEFAULTS.sampleIntervalMs);
    expect(vi.getTimerCount()).toBe(0);
    h.destroy();
  });

  it("abort while queued: AbortError with the reason as cause, at once; a throwing logger changes nothing", async () => {
    const dispatcher = stubDispatcher();
    const logger = {
      warn: () => {
        throw new Error("broken logger");
      },
    };
    const h = new UndiciHttpHandler({ dispatcher, logger: logger as any, requestTimeout: 300 });
    const controller = new AbortController();
    const p = outcome(h.handle(request(), { abortSignal: controller.signal as any }));
    await flush();
    vi.advanceTimersByTime(300 + TICK_MS);
    controller.abort(new Error("stop"));
    const r = await p;
    expect((r as any).error.name).toBe("AbortError");
    expect((r as any).error.cause.message).toBe("stop");
    expect(h.getPoolStats().origins[0].requests.aborted).toBe(1);
    h.destroy();
  });

  it("destroy() clears the interval and destroys the dispatcher", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, requestTimeout: 10_000 });
    void outcome(h.handle(request()));
    await flush();
    expect(vi.getTimerCount()).toBe(1);
    h.destroy();
    expect(vi.getTimerCount()).toBe(0);
    expect(dispatcher.destroyed).toBe(true);
  });
});

describe("UndiciHttpHandler options", () => {
  it.each([
    [{ connectionTimeout: -1 }, "connectionTimeout: -1"],
    [{ requestTimeout: "5s" }, 'requestTimeout: "5s"'],
    [{ socketTimeout: Number.NaN }, "socketTimeout: NaN"],
    [{ socketMonitor: "sometimes" }, 'socketMonitor: "sometimes"'],
    [{ httpsAgent: { maxSockets: 0 } }, "httpsAgent.maxSockets: 0"],
    [{ httpAgent: 7 }, "httpAgent: 7"],
    [{ telemetry: "yes" }, 'telemetry: "yes"'],
    [{ onSaturation: 1 }, "onSaturation: 1"],
    [{ dispatcher: 5 }, "dispatcher: 5"],
  ])("rejects %j with an error naming the option and the value", (options, text) => {
    expect(() => new UndiciHttpHandler(options as any)).toThrow(TypeError);
    expect(() => new UndiciHttpHandler(options as any)).toThrow(text);
  });

  it("maxQueuedRequests with a caller's dispatcher (which queues in undici) is a one-line error, not ignored", () => {
    const dispatcher = stubDispatcher();
    expect(() => new UndiciHttpHandler({ dispatcher, maxQueuedRequests: 10 })).toThrow(
      "invalid option maxQueuedRequests: 10; expected no bound with a caller's dispatcher"
    );
    // Unbounded, or Agent options (the handler's own Agent and gate), are fine.
    new UndiciHttpHandler({ dispatcher, maxQueuedRequests: Number.POSITIVE_INFINITY }).destroy();
    new UndiciHttpHandler({ dispatcher: { connections: 4 }, maxQueuedRequests: 10 }).destroy();
  });

  it("an update after destroy() does not bring the destroyed caller's dispatcher back (every key resolves the options again)", () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, requestTimeout: 1000 });
    h.destroy();
    expect((h.httpHandlerConfigs() as { dispatcher?: unknown }).dispatcher).toBeUndefined();
    const logger = quietLogger();
    h.updateHttpClientConfig(Symbol.for("logger"), logger);
    h.updateHttpClientConfig("requestTimeout", 2000);
    const config = h.httpHandlerConfigs() as { dispatcher?: unknown; logger?: unknown; requestTimeout?: unknown };
    expect(config).toMatchObject({ dispatcher: undefined, logger, requestTimeout: 2000 });
    h.destroy();
  });

  it('socketMonitor: "per-request" is treated as "interval", with one warning', () => {
    const logger = quietLogger();
    const h = new UndiciHttpHandler({ socketMonitor: "per-request", logger });
    expect(h.httpHandlerConfigs().socketMonitor).toBe("interval");
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain('socketMonitor "per-request" has no undici equivalent');
    h.destroy();
  });

  it("validates saturation.* with the pool monitor's rules", () => {
    expect(() => new UndiciHttpHandler({ saturation: { sampleIntervalMs: 1 } })).toThrow(/sampleIntervalMs/);
  });

  it("accepts numeric strings for times (environment variables), as NodeHttpHandler does", async () => {
    const h = new UndiciHttpHandler({ dispatcher: stubDispatcher(), requestTimeout: "1500" as any });
    void h.handle(request()).catch(() => {});
    await flush();
    expect(h.httpHandlerConfigs().requestTimeout).toBe(1500);
    h.destroy();
  });

  it("httpHandlerConfigs() shows the config at once and every update at once (as upstream); updates are validated", () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, requestTimeout: 1000 });
    expect(h.httpHandlerConfigs()).toMatchObject({ requestTimeout: 1000, dispatcher });
    expect(() => h.updateHttpClientConfig("requestTimeout", -5)).toThrow("requestTimeout: -5");
    expect(() => h.updateHttpClientConfig("socketMonitor", null)).toThrow("socketMonitor: null");
    expect(() => h.updateHttpClientConfig("httpsAgent", { maxSockets: -5 })).toThrow("httpsAgent.maxSockets: -5");
    expect(() => h.updateHttpClientConfig("dispatcher", [])).toThrow(
      "@sockeye/undici-http-handler - invalid option dispatcher: an array; expected an undici Dispatcher or Agent options object."
    );
    expect(h.httpHandlerConfigs()).toMatchObject({ requestTimeout: 1000, dispatcher });
    h.updateHttpClientConfig("requestTimeout", 2500);
    expect(h.httpHandlerConfigs().requestTimeout).toBe(2500);
    h.destroy();
  });

  it("with a provider, httpHandlerConfigs() is {} until it resolves, then the config; an update waits for it", async () => {
    const h = new UndiciHttpHandler(async () => ({ dispatcher: stubDispatcher(), requestTimeout: 1000 }));
    expect(h.httpHandlerConfigs()).toEqual({});
    h.updateHttpClientConfig("requestTimeout", 2500);
    expect(h.httpHandlerConfigs()).toEqual({});
    await flush();
    expect(h.httpHandlerConfigs().requestTimeout).toBe(2500);
    h.destroy();
  });

  it("a rejecting options provider rejects handle(), never throws or leaves an unhandled rejection", async () => {
    const h = new UndiciHttpHandler(() => Promise.reject(new Error("no config")));
    await expect(h.handle(request())).rejects.toThrow("no config");
  });

  it("create() returns an existing handler unchanged and builds one from options", () => {
    const existing = new UndiciHttpHandler();
    expect(UndiciHttpHandler.create(existing)).toBe(existing);
    expect(UndiciHttpHandler.create({ requestTimeout: 5 })).toBeInstanceOf(UndiciHttpHandler);
    expect(existing.metadata).toEqual({ handlerProtocol: "http/1.1" });
  });

  it("telemetry: false tracks nothing: getPoolStats() is empty and poolMonitor undefined", async () => {
    const dispatcher = stubDispatcher();
    const h = new UndiciHttpHandler({ dispatcher, telemetry: false });
    void h.handle(request()).catch(() => {});
    await flush();
    expect(h.getPoolStats().origins).toEqual([]);
    expect(h.poolMonitor).toBeUndefined();
    h.destroy();
  });
});
