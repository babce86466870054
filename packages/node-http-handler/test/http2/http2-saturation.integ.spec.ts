/**
 * Saturation detection for HTTP/2 (the shared `SaturationDetector`): streams waiting for a stream slot that keep
 * growing raise one `pool_capacity` report naming the origin; a batch that only drains raises none.
 * Real h2 server with `maxConcurrentStreams: 2`, `maxSessionsPerOrigin: 1`, so capacity is 2 streams.
 */
import { HttpRequest } from "@smithy/protocol-http";
import type { SaturationReport } from "@sockeye/pool-monitor";
import { afterAll, beforeAll, expect, it } from "vitest";
import { NodeHttp2Handler } from "../../src/index";
import { CA, type H2TestServer, readBody, startH2Server } from "./h2-servers";

let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server({ settings: { maxConcurrentStreams: 2 } });
});
afterAll(async () => {
  await server.close();
});

function req(path: string) {
  return new HttpRequest({
    protocol: "https:",
    hostname: "localhost",
    port: server.port,
    method: "GET",
    path,
    headers: {},
  });
}

it("a drained batch raises no warning", async () => {
  const reports: SaturationReport[] = [];
  const warnings: string[] = [];
  const h = new NodeHttp2Handler({
    nodeHttp2ConnectOptions: { ca: CA },
    maxSessionsPerOrigin: 1,
    onSaturation: (r) => reports.push(r),
    logger: { warn: (m: string) => warnings.push(m) } as never,
  });
  try {
    await Promise.all(
      Array.from({ length: 60 }, () => h.handle(req("/delay?ms=200")).then((r) => readBody(r.response.body)))
    );
    expect(h.getPoolStats().origins[0].queueWaitMs.count).toBe(60);
    expect(reports).toEqual([]);
    expect(warnings).toEqual([]);
  } finally {
    h.destroy();
  }
}, 20_000);

it("sustained arrivals above capacity raise pool_capacity once; a throwing callback changes nothing", async () => {
  const reports: SaturationReport[] = [];
  const warnings: string[] = [];
  const h = new NodeHttp2Handler({
    nodeHttp2ConnectOptions: { ca: CA },
    maxSessionsPerOrigin: 1,
    requestTimeout: 60_000,
    onSaturation: (r) => {
      reports.push(r);
      throw new Error("user callback bug");
    },
    logger: { warn: (m: string) => warnings.push(m) } as never,
  });
  const pending: Promise<unknown>[] = [];
  try {
    // Capacity: 2 streams × (1 / 0.1 s) = 20/s. Arrivals: 40/s for up to 12 s (bounded: 480 requests).
    for (let i = 0; i < 480 && reports.length === 0; i++) {
      pending.push(h.handle(req("/delay?ms=100")).then((r) => readBody(r.response.body)));
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({
      state: "saturated",
      cause: "pool_capacity",
      origin: `https://localhost:${server.port}`,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^@sockeye\/node-http-handler - HTTP\/2 stream slots at capacity=2/);
    expect(h.getPoolStats().origins[0].saturation.state).toBe("saturated");
  } finally {
    h.destroy();
    await Promise.allSettled(pending);
  }
}, 30_000);
