/**
 * The bridge wired to a real Sockeye handler (the way users do it) and the real OpenTelemetry SDK, against a
 * loopback server: metrics carry the origin attributes only, never the path or query.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { MeterProvider, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterEach, expect, test as it } from "vitest";
import { registerPoolMetrics } from "./register-pool-metrics";
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
