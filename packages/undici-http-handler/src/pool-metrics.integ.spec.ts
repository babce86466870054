/**
 * `@sockeye/opentelemetry`'s `registerPoolMetrics()` bridged to an UndiciHttpHandler's monitor, unchanged, with the
 * real OpenTelemetry SDK and a loopback server: gauges, counters and the event-fed histograms carry origin
 * attributes only, never the path or query.
 */
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { registerPoolMetrics } from "@sockeye/opentelemetry";
import { afterEach, expect, it } from "vitest";
import { readAll, requestTo, startServer } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function metric(rm: ResourceMetrics, name: string) {
  for (const scope of rm.scopeMetrics) for (const m of scope.metrics) if (m.descriptor.name === name) return m;
  return undefined;
}

it("exports the undici pools through registerPoolMetrics(handler.poolMonitor)", async () => {
  const server = await startServer("http");
  const handler = new UndiciHttpHandler({ httpAgent: { maxSockets: 2 } });
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  const monitor = handler.poolMonitor;
  expect(monitor).toBeDefined();
  const registration = registerPoolMetrics(monitor as NonNullable<typeof monitor>, { meterProvider: provider });
  cleanups.push(
    () => server.close(),
    () => handler.destroy(),
    () => registration.unregister(),
    () => provider.shutdown()
  );
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      const { response } = await handler.handle(
        requestTo(server, { path: "/secret", query: { "X-Amz-Signature": "abc" } })
      );
      await readAll(response.body);
    })
  );
  const { resourceMetrics } = await reader.collect();
  const requests = metric(resourceMetrics, "sockeye.requests");
  const completed = requests?.dataPoints.find((p) => p.attributes["sockeye.request.outcome"] === "completed");
  expect(completed?.value).toBe(6);
  expect(completed?.attributes).toMatchObject({
    "server.address": "127.0.0.1",
    "server.port": server.port,
    "url.scheme": "http",
  });
  const created = metric(resourceMetrics, "sockeye.connection.created");
  expect(created?.dataPoints[0].value).toBe(2);
  const connect = metric(resourceMetrics, "sockeye.connection.connect.duration");
  expect(connect).toBeDefined();
  expect((connect!.dataPoints[0].value as { count: number }).count).toBe(2);
  expect(JSON.stringify(resourceMetrics)).not.toMatch(/secret|Signature/);
});
