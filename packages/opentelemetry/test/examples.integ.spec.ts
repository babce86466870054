/**
 * The README's runnable examples (`examples/*.mjs`), run for real: an AWS SDK `S3Client` on Sockeye's handler against
 * a loopback S3 endpoint, its pool exported through `registerPoolMetrics(handler.poolMonitor)` to the OpenTelemetry
 * SDK, and the same metrics served in Prometheus format and scraped over HTTP.
 */
import http from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterEach, expect, it } from "vitest";

// The examples are plain ESM JavaScript (runnable with `node`); imported by URL so TypeScript does not type them.
const example = (name: string) => import(pathToFileURL(join(__dirname, "..", "examples", name)).href);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function get(url: string): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"]), body })
        );
      })
      .on("error", reject);
  });
}

it("s3-client-metrics: an S3Client's traffic shows up in registerPoolMetrics(handler.poolMonitor)", async () => {
  const { startLocalS3 } = await example("local-s3-endpoint.mjs");
  const { runS3Example } = await example("s3-client-metrics.mjs");
  const local = await startLocalS3();
  cleanups.push(() => local.close());
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  cleanups.push(() => meterProvider.shutdown());

  const { stats, stop } = await runS3Example({ endpoint: local.endpoint, meterProvider, objects: 6 });
  cleanups.push(stop);
  await reader.forceFlush();

  const port = Number(new URL(local.endpoint).port);
  const points = (name: string): Array<{ value: unknown; attributes: Record<string, unknown> }> =>
    exporter
      .getMetrics()
      .at(-1)!
      .scopeMetrics.flatMap((s) => s.metrics)
      .filter((m) => m.descriptor.name === name)
      .flatMap((m) => m.dataPoints as Array<{ value: unknown; attributes: Record<string, unknown> }>);
  const completed = points("sockeye.requests").find((p) => p.attributes["sockeye.request.outcome"] === "completed");
  expect(completed?.value).toBe(12); // 6 PutObject + 6 GetObject
  expect(completed?.attributes).toMatchObject({
    "server.address": "127.0.0.1",
    "server.port": port,
    "url.scheme": "http",
  });
  const created = points("sockeye.connection.created")[0]?.value as number;
  expect(created).toBeGreaterThanOrEqual(1);
  expect(created).toBeLessThanOrEqual(4); // maxSockets 4
  expect(points("sockeye.pool.limit")[0]?.value).toBe(4);
  const queued = points("http.client.request.time_in_queue");
  expect(queued.length).toBe(1);
  expect(stats.origins.map((o: { origin: string }) => o.origin)).toEqual([`http://127.0.0.1:${port}`]);
  // Origins only: the object keys ("reports/<i>.txt") and the bucket never become attributes.
  expect(JSON.stringify(exporter.getMetrics())).not.toMatch(/reports\/|example-bucket/);
});

it("prometheus: the handler's pool metrics are scraped over HTTP in Prometheus text format", async () => {
  const { startLocalS3 } = await example("local-s3-endpoint.mjs");
  const { startPrometheusExample } = await example("prometheus.mjs");
  const { GetObjectCommand, PutObjectCommand, S3Client } = await import("@aws-sdk/client-s3");
  const local = await startLocalS3();
  cleanups.push(() => local.close());
  const prom = await startPrometheusExample({ port: 0 });
  cleanups.push(() => prom.close());
  const s3 = new S3Client({
    region: "us-east-1",
    endpoint: local.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "EXAMPLE", secretAccessKey: "example-not-a-secret" },
    requestHandler: prom.handler,
  });
  const object = { Bucket: "example-bucket", Key: "secret/path.txt" };
  await s3.send(new PutObjectCommand({ ...object, Body: "hello" }));
  for (let i = 0; i < 4; i++) await (await s3.send(new GetObjectCommand(object))).Body?.transformToString();

  const scrape = await get(prom.metricsUrl);
  expect(scrape.status).toBe(200);
  expect(scrape.contentType).toMatch(/^text\/plain/);
  const port = new URL(local.endpoint).port;
  const line = (metric: string, extra = "") =>
    scrape.body
      .split("\n")
      .find((l) => l.startsWith(`${metric}{`) && l.includes(`server_port="${port}"`) && l.includes(extra));
  expect(line("sockeye_requests_total", 'sockeye_request_outcome="completed"')).toMatch(/ 5$/);
  expect(line("sockeye_connection_created_total")).toMatch(/ 1$/); // sequential requests reuse one keep-alive socket
  expect(line("http_client_open_connections", 'http_connection_state="idle"')).toMatch(/ 1$/);
  expect(line("sockeye_pool_saturation_state")).toMatch(/ 0$/);
  // The README's example output: the stable request-duration histogram, one series per method and status.
  expect(
    line(
      "http_client_request_duration_count",
      'url_scheme="http",http_request_method="GET",http_response_status_code="200",network_protocol_version="1.1",'
    )
  ).toMatch(/ 4$/);
  expect(line("http_client_request_duration_count", 'http_request_method="PUT"')).toMatch(/ 1$/);
  expect(scrape.body).toContain("# UNIT http_client_request_duration s");
  expect(scrape.body).toContain("# TYPE sockeye_requests_total counter");
  expect(scrape.body).not.toMatch(/secret\/path|example-bucket/);
  expect((await get(prom.metricsUrl.replace("/metrics", "/other"))).status).toBe(404);
});
