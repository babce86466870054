/**
 * The bridge wired to a real Sockeye handler (the way users do it) and the real OpenTelemetry SDK, against a
 * loopback server: metrics carry the origin attributes only, never the path or query; the counters of
 * `maxQueuedRequests` and of refused HTTP/2 streams reach the exporter.
 */
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { MeterProvider, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { afterEach, expect, test as it } from "vitest";
import { activeResources } from "../../node-http-handler/test/active-resources";
import { type PoolMetricsSource, registerPoolMetrics } from "./register-pool-metrics";
import { PullReader } from "./pull-reader.mock";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function metric(rm: ResourceMetrics, name: string) {
  for (const scope of rm.scopeMetrics) for (const m of scope.metrics) if (m.descriptor.name === name) return m;
  return undefined;
}

it("exports a Sockeye handler's pool through registerPoolMetrics(handler.poolMonitor)", async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const handler = new NodeHttpHandler({ httpAgent: { maxSockets: 2 } });
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  const registration = registerPoolMetrics(handler.poolMonitor!, { meterProvider: provider });
  cleanups.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => server.closeAllConnections(),
    () => handler.destroy(),
    () => registration.unregister(),
    () => provider.shutdown()
  );

  await Promise.all(
    Array.from({ length: 6 }, async () => {
      const { response } = await handler.handle(
        new HttpRequest({
          protocol: "http:",
          hostname: "127.0.0.1",
          port,
          method: "GET",
          path: "/secret",
          query: { "X-Amz-Signature": "abc" },
          headers: {},
        })
      );
      response.body.resume();
      await new Promise((resolve) => response.body.once("end", resolve));
    })
  );

  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const open = metric(resourceMetrics, "http.client.open_connections");
  expect(open).toBeDefined();
  const idle = open!.dataPoints.find((p) => p.attributes["http.connection.state"] === "idle");
  expect(idle?.value).toBe(2);
  expect(idle?.attributes["server.address"]).toBe("127.0.0.1");
  expect(idle?.attributes["server.port"]).toBe(port);
  const inQueue = metric(resourceMetrics, "http.client.request.time_in_queue");
  expect(inQueue).toBeDefined();
  expect(JSON.stringify(resourceMetrics)).not.toMatch(/secret|Signature|abc/);
});

/** A loopback server that holds every response (HTTP/2: one stream per session) and refuses `/refuse` streams. */
async function holdingServer(h2: boolean) {
  const held: (() => void)[] = [];
  let arrived: () => void = () => {};
  const firstHeld = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const hold = (res: http.ServerResponse | http2.Http2ServerResponse) => {
    held.push(() => res.end("ok"));
    arrived();
  };
  const server = h2
    ? http2.createServer({ settings: { maxConcurrentStreams: 1 } }, (req, res) => {
        if (req.url === "/refuse") req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        else hold(res);
      })
    : http.createServer((req, res) => {
        req.resume();
        hold(res);
      });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (session: http2.Http2Session) => sessions.add(session));
  cleanups.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => {
      for (const session of sessions) session.destroy();
      if (server instanceof http.Server) server.closeAllConnections();
    }
  );
  return { port, held, firstHeld };
}

/** A reader of `handler`'s pool exported through `registerPoolMetrics`; the handler is destroyed after the test. */
function exported(handler: { poolMonitor?: PoolMetricsSource; destroy(): void }): PullReader {
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  const registration = registerPoolMetrics(handler.poolMonitor!, { meterProvider: provider });
  cleanups.push(
    () => handler.destroy(),
    () => registration.unregister(),
    () => provider.shutdown()
  );
  return reader;
}

/** Whether the process holds no more ref'd handles and timers than `before`. */
function withinResources(before: { timers: number; handles: number }): boolean {
  const now = activeResources();
  return now.handles <= before.handles && now.timers <= before.timers;
}

const HANDLERS = [
  ["NodeHttpHandler", false, () => new NodeHttpHandler({ httpAgent: { maxSockets: 1 }, maxQueuedRequests: 0 })],
  ["UndiciHttpHandler", false, () => new UndiciHttpHandler({ httpAgent: { maxSockets: 1 }, maxQueuedRequests: 0 })],
  ["NodeHttp2Handler", true, () => new NodeHttp2Handler({ maxSessionsPerOrigin: 1, maxQueuedRequests: 0 })],
] as const;

it.each(HANDLERS)(
  "%s: requests refused by maxQueuedRequests are exported as <ns>.request.queue_full",
  async (_name, h2, make) => {
    const { port, held, firstHeld } = await holdingServer(h2);
    const before = activeResources();
    const handler = make();
    const reader = exported(handler);
    const request = (path: string) =>
      new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path, headers: {} });
    const first = handler.handle(request("/held"));
    await firstHeld;
    // The only connection (stream slot) is busy and nothing may wait: both fail at once.
    const refused = await Promise.allSettled([handler.handle(request("/a")), handler.handle(request("/b"))]);
    expect(refused.map((r) => r.status === "rejected" && (r.reason as { code?: string }).code)).toEqual([
      "ERR_SOCKEYE_QUEUE_FULL",
      "ERR_SOCKEYE_QUEUE_FULL",
    ]);
    held[0]();
    const { response } = await first;
    response.body.resume();
    await new Promise((resolve) => response.body.once("close", resolve));

    const { resourceMetrics, errors } = await reader.collect();
    expect(errors).toEqual([]);
    const base = { "server.address": "127.0.0.1", "server.port": port, "url.scheme": "http" };
    const queueFull = metric(resourceMetrics, "sockeye.request.queue_full");
    expect(queueFull?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([[base, 2]]);
    const failed = metric(resourceMetrics, "sockeye.requests")?.dataPoints.find(
      (p) => p.attributes["sockeye.request.outcome"] === "failed"
    );
    expect(failed?.value).toBe(2);
    // Refused streams: HTTP/2 origins only.
    const refusedStreams = metric(resourceMetrics, "sockeye.stream.refused");
    expect(refusedStreams?.dataPoints.map((p) => [p.attributes, p.value]) ?? []).toEqual(h2 ? [[base, 0]] : []);
    // Every request settled; once the handler is destroyed, none of its sockets or timers is left.
    handler.destroy();
    for (let i = 0; i < 100 && !withinResources(before); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(withinResources(before)).toBe(true);
  }
);

it("NodeHttp2Handler: streams the server refuses are exported as <ns>.stream.refused, sent again or not", async () => {
  const { port } = await holdingServer(true);
  const handler = new NodeHttp2Handler();
  const reader = exported(handler);
  const request = (body?: unknown) =>
    new HttpRequest({
      protocol: "http:",
      hostname: "127.0.0.1",
      port,
      method: "PUT",
      path: "/refuse",
      headers: {},
      body,
    });
  // Sent 4 times (3 again), then failed; a stream body cannot be sent again: refused once.
  for (const body of [undefined, Readable.from([Buffer.from("x")])]) {
    await expect(handler.handle(request(body))).rejects.toMatchObject({ code: "ERR_HTTP2_STREAM_ERROR" });
  }
  expect(handler.getPoolStats().origins[0].http2?.streamsRefused).toBe(5);
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const base = { "server.address": "127.0.0.1", "server.port": port, "url.scheme": "http" };
  expect(metric(resourceMetrics, "sockeye.stream.refused")?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
    [base, 5],
  ]);
});
