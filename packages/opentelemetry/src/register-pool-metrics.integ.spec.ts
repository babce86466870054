/**
 * Real OpenTelemetry SDK (MeterProvider + a pull MetricReader) against a real PoolMonitor tracking a
 * real keep-alive agent talking to a loopback server.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createNoopMeter, type MeterProvider as ApiMeterProvider } from "@opentelemetry/api";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { PoolMonitor } from "@sockeye/pool-monitor";
import { afterEach, describe, expect, test as it, vi } from "vitest";
import { registerPoolMetrics } from "./register-pool-metrics";

class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

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
      "@sockeye/opentelemetry: registerPoolMetrics(source) expects an object with getStats(); received undefined."
    );
    expect(() => registerPoolMetrics(new PoolMonitor(), { namespace: "Bad Name" })).toThrow(
      '@sockeye/opentelemetry: option "namespace" must be a dot-separated lowercase name such as "sockeye" or "com.example.http"; received "Bad Name".'
    );
  });
});
