/**
 * Example: Sockeye's socket-pool metrics in Prometheus format, scraped over HTTP.
 *
 *   node packages/opentelemetry/examples/prometheus.mjs   # then: curl http://127.0.0.1:9464/metrics
 *
 * An S3Client on Sockeye's handler sends a few requests per second to a local loopback S3 endpoint; the handler's
 * pool is exported with `@opentelemetry/exporter-prometheus` on `GET /metrics`. Ctrl-C stops it.
 * `startPrometheusExample()` is what `packages/opentelemetry/test/examples.integ.spec.ts` runs (with port 0).
 */
import http from "node:http";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { registerPoolMetrics } from "@sockeye/opentelemetry";

/**
 * Serves the metrics of a new handler on `http://host:port/metrics`.
 * @param {{ host?: string, port?: number }} [options] defaults: 127.0.0.1, 9464 (the exporter's usual port); 0 picks
 *   a free port
 * @returns {Promise<{ handler: NodeHttpHandler, metricsUrl: string, close(): Promise<void> }>}
 */
export async function startPrometheusExample({ host = "127.0.0.1", port = 9464 } = {}) {
  const handler = new NodeHttpHandler({ httpsAgent: { maxSockets: 50 } });
  // The exporter is a pull MetricReader; `preventServerStart` lets us mount it on a server of our own.
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  const registration = registerPoolMetrics(handler.poolMonitor, { meterProvider });

  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/metrics") exporter.getMetricsRequestHandler(req, res);
    else res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(port, host, () => resolve(undefined)));
  const address = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    handler,
    metricsUrl: `http://${host}:${address.port}/metrics`,
    async close() {
      registration.unregister();
      handler.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
      await meterProvider.shutdown();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { GetObjectCommand, PutObjectCommand, S3Client } = await import("@aws-sdk/client-s3");
  const { startLocalS3 } = await import("./local-s3-endpoint.mjs");
  const local = await startLocalS3();
  const example = await startPrometheusExample();
  const s3 = new S3Client({
    region: "us-east-1",
    endpoint: local.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: "EXAMPLE", secretAccessKey: "example-not-a-secret" },
    requestHandler: example.handler,
  });
  const object = { Bucket: "example-bucket", Key: "hello.txt" };
  await s3.send(new PutObjectCommand({ ...object, Body: "hello" }));
  const traffic = setInterval(() => {
    for (let i = 0; i < 5; i++) {
      s3.send(new GetObjectCommand(object))
        .then(({ Body }) => Body?.transformToString())
        .catch((error) => console.error(error));
    }
  }, 1000);
  console.log(`serving ${example.metricsUrl} — try: curl ${example.metricsUrl} (Ctrl-C to stop)`);
  process.once("SIGINT", async () => {
    clearInterval(traffic);
    s3.destroy();
    await example.close();
    await local.close();
  });
}
