/**
 * The bridge wired to Sockeye's NodeHttp2Handler and the real OpenTelemetry SDK, against a loopback HTTP/2 server:
 * `http.client.open_connections` counts sessions and carries `network.protocol.version = "2"`; origins only.
 */
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { MeterProvider, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler } from "@sockeye/node-http-handler";
import { afterEach, expect, test as it } from "vitest";
import { registerPoolMetrics } from "./register-pool-metrics";
import { PullReader } from "./pull-reader.mock";

const FIXTURES = join(__dirname, "..", "..", "node-http-handler", "test", "fixtures");
const CA = readFileSync(join(FIXTURES, "localhost-cert.pem"));
const KEY = readFileSync(join(FIXTURES, "localhost-key.pem"));

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function metric(rm: ResourceMetrics, name: string) {
  for (const scope of rm.scopeMetrics) for (const m of scope.metrics) if (m.descriptor.name === name) return m;
  return undefined;
}

it("exports a NodeHttp2Handler's sessions with network.protocol.version = 2", async () => {
  const server = http2.createSecureServer({ key: KEY, cert: CA }, (req, res) => {
    req.resume();
    res.end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const handler = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } });
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  const registration = registerPoolMetrics(handler.poolMonitor!, { meterProvider: provider });
  cleanups.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => handler.destroy(),
    () => registration.unregister(),
    () => provider.shutdown()
  );
  await Promise.all(
    Array.from({ length: 5 }, async () => {
      const { response } = await handler.handle(
        new HttpRequest({
          protocol: "https:",
          hostname: "localhost",
          port,
          method: "GET",
          path: "/secret",
          query: { "X-Amz-Signature": "abc" },
          headers: {},
        })
      );
      response.body.resume();
      await new Promise((resolve) => response.body.once("close", resolve));
    })
  );
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const open = metric(resourceMetrics, "http.client.open_connections");
  const idle = open!.dataPoints.find((p) => p.attributes["http.connection.state"] === "idle");
  expect(idle?.value).toBe(1);
  expect(idle?.attributes["network.protocol.version"]).toBe("2");
  expect(idle?.attributes["server.port"]).toBe(port);
  expect(JSON.stringify(resourceMetrics)).not.toMatch(/secret|Signature|abc/);
});
