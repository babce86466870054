/**
 * Real OpenTelemetry SDK (MeterProvider + a pull MetricReader) against a real PoolMonitor tracking a
 * real keep-alive agent talking to a loopback server.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createNoopMeter, type MeterProvider as ApiMeterProvider } from "@opentelemetry/api";
import { type DataPoint, type Histogram, MeterProvider, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { type PoolEvent, PoolMonitor, type RequestFinishedEvent } from "@sockeye/pool-monitor";
import { afterEach, describe, expect, test as it, vi } from "vitest";
import { registerPoolMetrics } from "./register-pool-metrics";
import { PullReader } from "./pull-reader.mock";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function points(rm: ResourceMetrics, name: string): DataPoint<unknown>[] {
  for (const scope of rm.scopeMetrics)
    for (const m of scope.metrics) if (m.descriptor.name === name) return m.dataPoints;
  return [];
}

async function setup() {
  const held: http.ServerResponse[] = [];
  let holding = false;
  const server = http.createServer((_req, res) => {
    if (holding) held.push(res);
    else res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const monitor = new PoolMonitor();
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  cleanups.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => server.closeAllConnections(),
    () => agent.destroy(),
    () => monitor.destroy(),
    () => provider.shutdown()
  );
  const send = () =>
    new Promise<void>((resolve, reject) => {
      const startedAt = performance.now();
      const req = http.request({ host: "127.0.0.1", port, path: "/private?sig=x", agent });
      monitor.trackRequest(req, agent, origin, startedAt);
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => setImmediate(resolve));
      });
      req.on("error", reject);
      req.end();
    });
  return {
    port,
    origin,
    agent,
    monitor,
    reader,
    provider,
    send,
    hold: (on: boolean) => {
      holding = on;
    },
    releaseHeld: () => {
      for (const res of held.splice(0)) res.end("ok");
    },
    heldCount: () => held.length,
  };
}

describe("registerPoolMetrics with @opentelemetry/sdk-metrics", () => {
  it("exports semconv and namespaced pool metrics read from the snapshot and from events", async () => {
    const t = await setup();
    const registration = registerPoolMetrics(t.monitor, { meterProvider: t.provider });
    cleanups.push(() => registration.unregister());

    // Two requests with maxSockets 1: the second queues, then reuses the kept-alive socket.
    t.hold(true);
    const a = t.send();
    const b = t.send();
    for (let i = 0; i < 500 && t.heldCount() < 1; i++) await new Promise((r) => setTimeout(r, 2));
    await new Promise((r) => setTimeout(r, 20));

    let { resourceMetrics: rm, errors } = await t.reader.collect();
    expect(errors).toEqual([]);
    const base = { "server.address": "127.0.0.1", "server.port": t.port, "url.scheme": "http" };
    expect(points(rm, "http.client.open_connections").map((p) => [p.attributes, p.value])).toEqual([
      [{ ...base, "http.connection.state": "active" }, 1],
      [{ ...base, "http.connection.state": "idle" }, 0],
    ]);
    expect(points(rm, "http.client.active_requests").map((p) => p.value)).toEqual([2]);
    expect(points(rm, "sockeye.pool.queued_requests").map((p) => p.value)).toEqual([1]);
    expect(points(rm, "sockeye.pool.oldest_queued_age")[0].value).toBeGreaterThanOrEqual(0.015);
    expect(points(rm, "sockeye.pool.limit").map((p) => p.value)).toEqual([1]);
    expect(points(rm, "sockeye.pool.saturation.state").map((p) => [p.attributes, p.value])).toEqual([[base, 0]]);

    t.hold(false); // the queued request is answered at once when it reaches the server
    t.releaseHeld();
    await Promise.all([a, b]);
    t.agent.destroy();
    await new Promise((r) => setTimeout(r, 20));

    ({ resourceMetrics: rm, errors } = await t.reader.collect());
    expect(errors).toEqual([]);
    expect(points(rm, "sockeye.connection.created").map((p) => p.value)).toEqual([1]);
    expect(points(rm, "sockeye.response.reclaimed").map((p) => [p.attributes, p.value])).toEqual([[base, 0]]);
    expect(
      points(rm, "sockeye.connection.acquisitions").map((p) => [p.attributes["sockeye.connection.reused"], p.value])
    ).toEqual([
      [true, 1],
      [false, 1],
    ]);
    expect(
      points(rm, "sockeye.requests")
        .filter((p) => p.value !== 0)
        .map((p) => [p.attributes["sockeye.request.outcome"], p.value])
    ).toEqual([["completed", 2]]);
    expect(
      points(rm, "sockeye.connection.closed").map((p) => [p.attributes["sockeye.connection.close_reason"], p.value])
    ).toEqual([["local", 1]]);

    const queue = points(rm, "http.client.request.time_in_queue") as DataPoint<Histogram>[];
    expect(queue).toHaveLength(1);
    expect(queue[0].attributes).toEqual(base);
    expect(queue[0].value.count).toBe(1); // only the request that queued (.NET semantics)
    expect(queue[0].value.sum).toBeGreaterThanOrEqual(0.015);
    const connect = points(rm, "sockeye.connection.connect.duration") as DataPoint<Histogram>[];
    expect(connect.map((p) => [p.attributes["sockeye.connect.phase"], p.value.count])).toEqual([["tcp", 1]]);
    const duration = points(rm, "http.client.connection.duration") as DataPoint<Histogram>[];
    expect(duration.map((p) => p.value.count)).toEqual([1]);
    expect(duration[0].value.sum).toBeGreaterThan(0);

    // Nothing in the exported data carries the path or query string.
    expect(JSON.stringify(rm.scopeMetrics)).not.toContain("private");

    // After unregister the snapshot is no longer read and events no longer recorded.
    registration.unregister();
    registration.unregister();
    const getStats = vi.spyOn(t.monitor, "getStats");
    await t.reader.collect();
    expect(getStats).not.toHaveBeenCalled();
  });

  it("uses a custom namespace and accepts a plain { getStats } source (no histograms)", async () => {
    const t = await setup();
    const registration = registerPoolMetrics(
      { getStats: () => t.monitor.getStats() },
      { meterProvider: t.provider, namespace: "com.example.http" }
    );
    cleanups.push(() => registration.unregister());
    await t.send();
    const { resourceMetrics: rm } = await t.reader.collect();
    expect(points(rm, "com.example.http.connection.created").map((p) => p.value)).toEqual([1]);
    expect(points(rm, "sockeye.connection.created")).toEqual([]);
    expect(points(rm, "com.example.http.connection.connect.duration")).toEqual([]);
  });

  it("reports each origin's bodiesReclaimed as <ns>.response.reclaimed", async () => {
    const t = await setup();
    const registration = registerPoolMetrics(
      {
        getStats: () => {
          const stats = t.monitor.getStats();
          for (const o of stats.origins) o.bodiesReclaimed = 3;
          return stats;
        },
      },
      { meterProvider: t.provider }
    );
    cleanups.push(() => registration.unregister());
    await t.send();
    const { resourceMetrics: rm } = await t.reader.collect();
    const base = { "server.address": "127.0.0.1", "server.port": t.port, "url.scheme": "http" };
    expect(points(rm, "sockeye.response.reclaimed").map((p) => [p.attributes, p.value])).toEqual([[base, 3]]);
  });

  it("does not subscribe to monitor events when the meter is a no-op (no SDK registered)", () => {
    let subscribed = 0;
    const source = {
      getStats: () => new PoolMonitor().getStats(),
      subscribe: () => {
        subscribed++;
        return () => undefined;
      },
    };
    const noopProvider: ApiMeterProvider = { getMeter: () => createNoopMeter() };
    registerPoolMetrics(source, { meterProvider: noopProvider }).unregister();
    expect(subscribed).toBe(0);
  });

  it("validates its arguments", () => {
    expect(() => registerPoolMetrics(undefined as never)).toThrow(
      "@sockeye/opentelemetry - registerPoolMetrics(source) expects an object with getStats(); received undefined."
    );
    expect(() => registerPoolMetrics(new PoolMonitor(), { namespace: "Bad Name" })).toThrow(
      '@sockeye/opentelemetry - invalid option namespace: "Bad Name"; expected a dot-separated lowercase name such as "sockeye" or "com.example.http".'
    );
    expect(() => registerPoolMetrics(new PoolMonitor(), { requestDuration: "yes" as never })).toThrow(
      '@sockeye/opentelemetry - invalid option requestDuration: "yes"; expected "auto", true or false.'
    );
    expect(() => registerPoolMetrics(new PoolMonitor(), { bodySize: {} as never })).toThrow(
      "@sockeye/opentelemetry - invalid option bodySize: an object; expected a boolean (true or false)."
    );
    expect(() => registerPoolMetrics(new PoolMonitor(), { timeInQueue: 1 as never })).toThrow(
      "@sockeye/opentelemetry - invalid option timeInQueue: 1; expected a boolean (true or false)."
    );
    for (const bad of [0, 1.5, 100_001, Number.NaN, "3"]) {
      expect(() => registerPoolMetrics(new PoolMonitor(), { maxOrigins: bad as never })).toThrow(
        /^@sockeye\/opentelemetry - invalid option maxOrigins: .+; expected an integer from 1 to 100000\.$/
      );
    }
  });

  it("takes null as unset, as every Sockeye option", () => {
    const nulls = { namespace: null, requestDuration: null, bodySize: null, timeInQueue: null, maxOrigins: null };
    expect(() => registerPoolMetrics(new PoolMonitor(), nulls as never).unregister()).not.toThrow();
  });
});

describe("per-request instruments (request:finished)", () => {
  /** A source whose events the test publishes: `PoolMetricsSource` is any `{ getStats, subscribe }`. */
  function eventSource() {
    const listeners: ((e: PoolEvent) => void)[] = [];
    const stats = new PoolMonitor().getStats();
    return {
      source: {
        getStats: () => stats,
        subscribe(l: (e: PoolEvent) => void) {
          listeners.push(l);
          return () => listeners.splice(listeners.indexOf(l), 1);
        },
      },
      publish: (e: PoolEvent) => {
        for (const l of listeners) l(e);
      },
    };
  }
  const finished = (origin: string, over: Partial<RequestFinishedEvent> = {}): RequestFinishedEvent => ({
    type: "request:finished",
    origin,
    scheme: "https",
    method: "GET",
    statusCode: 200,
    outcome: "completed",
    errorType: null,
    durationMs: 250,
    protocolVersion: "1.1",
    requestBodySize: 10,
    responseBodySize: 2000,
    queuedMs: null,
    ...over,
  });

  async function run(options: Parameters<typeof registerPoolMetrics>[1], events: PoolEvent[]) {
    const reader = new PullReader();
    const provider = new MeterProvider({ readers: [reader] });
    cleanups.push(() => provider.shutdown());
    const { source, publish } = eventSource();
    const registration = registerPoolMetrics(source, { meterProvider: provider, ...options });
    cleanups.push(() => registration.unregister());
    for (const e of events) publish(e);
    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    return resourceMetrics;
  }

  it("records the duration with the semconv attributes; body sizes only when opted in", async () => {
    const events = [
      finished("https://s3.amazonaws.com:443"),
      finished("https://s3.amazonaws.com:443", { statusCode: 503, errorType: "503", durationMs: 1500 }),
      finished("http://[::1]:8080", {
        scheme: "http",
        statusCode: null,
        outcome: "failed",
        errorType: "ECONNREFUSED",
        protocolVersion: null,
        responseBodySize: null,
      }),
    ];
    let rm = await run({}, events);
    const duration = points(rm, "http.client.request.duration") as DataPoint<Histogram>[];
    expect(duration.map((p) => [p.attributes, p.value.count, p.value.sum])).toEqual([
      [
        {
          "server.address": "s3.amazonaws.com",
          "server.port": 443,
          "url.scheme": "https",
          "http.request.method": "GET",
          "http.response.status_code": 200,
          "network.protocol.version": "1.1",
        },
        1,
        0.25,
      ],
      [
        {
          "server.address": "s3.amazonaws.com",
          "server.port": 443,
          "url.scheme": "https",
          "http.request.method": "GET",
          "http.response.status_code": 503,
          "error.type": "503",
          "network.protocol.version": "1.1",
        },
        1,
        1.5,
      ],
      [
        {
          "server.address": "::1",
          "server.port": 8080,
          "url.scheme": "http",
          "http.request.method": "GET",
          "error.type": "ECONNREFUSED",
        },
        1,
        expect.any(Number),
      ],
    ]);
    expect(points(rm, "http.client.request.body.size")).toEqual([]);
    expect(points(rm, "http.client.response.body.size")).toEqual([]);

    rm = await run({ bodySize: true, requestDuration: false }, events);
    expect(points(rm, "http.client.request.duration")).toEqual([]);
    const req = points(rm, "http.client.request.body.size") as DataPoint<Histogram>[];
    const res = points(rm, "http.client.response.body.size") as DataPoint<Histogram>[];
    expect(req.map((p) => p.value.sum)).toEqual([10, 10, 10]);
    expect(res.map((p) => p.value.sum)).toEqual([2000, 2000]); // none for the refused request
  });

  it("records time in queue for a request that left the queue without a connection; switchable", async () => {
    const events: PoolEvent[] = [
      { type: "request:acquired", origin: "http://h:80", waitMs: 40, reused: true, queued: true },
      { type: "request:acquired", origin: "http://h:80", waitMs: 1, reused: true, queued: false },
      finished("http://h:80", { outcome: "timed_out", statusCode: null, errorType: "TimeoutError", queuedMs: 120 }),
    ];
    let rm = await run({}, events);
    const queue = points(rm, "http.client.request.time_in_queue") as DataPoint<Histogram>[];
    expect(queue.map((p) => [p.value.count, p.value.sum])).toEqual([[2, 0.16]]);
    rm = await run({ timeInQueue: false }, events);
    expect(points(rm, "http.client.request.time_in_queue")).toEqual([]);
    expect(points(rm, "http.client.request.duration")).toHaveLength(1);
  });

  it("caps the origins with attributes of their own (maxOrigins); the rest report as _OTHER", async () => {
    const rm = await run(
      { maxOrigins: 2 },
      ["http://a:80", "http://b:80", "http://c:80", "http://d:80"].map((o) => finished(o, { scheme: "http" }))
    );
    const duration = points(rm, "http.client.request.duration") as DataPoint<Histogram>[];
    expect(duration.map((p) => [p.attributes["server.address"], p.attributes["url.scheme"], p.value.count])).toEqual([
      ["a", "http", 1],
      ["b", "http", 1],
      ["_OTHER", "http", 2],
    ]);
  });
});
