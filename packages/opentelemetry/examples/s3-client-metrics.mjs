/**
 * Example: an AWS SDK `S3Client` on Sockeye's handler, its socket pool exported as OpenTelemetry metrics through
 * `registerPoolMetrics(handler.poolMonitor)`.
 *
 *   node packages/opentelemetry/examples/s3-client-metrics.mjs   # against a local loopback S3 endpoint
 *
 * Prints the pool metrics the SDK traffic produced. `runS3Example()` is what the README shows and what
 * `packages/opentelemetry/test/examples.integ.spec.ts` runs.
 */
import { GetObjectCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { registerPoolMetrics } from "@sockeye/opentelemetry";
import { startLocalS3 } from "./local-s3-endpoint.mjs";

/**
 * Sends `objects` PutObject + GetObject pairs through an S3Client whose handler's pool is exported to `meterProvider`.
 * The metrics stay registered (collect them now) until `stop()`, which unregisters them and destroys the client.
 * @param {{ endpoint: string, meterProvider: import("@opentelemetry/api").MeterProvider, objects?: number }} options
 */
export async function runS3Example({ endpoint, meterProvider, objects = 10 }) {
  // --- README: the wiring ---
  const handler = new NodeHttpHandler({ httpAgent: { maxSockets: 4 } });
  const s3 = new S3Client({
    region: "us-east-1",
    endpoint, // omit for real S3
    forcePathStyle: true,
    credentials: { accessKeyId: "EXAMPLE", secretAccessKey: "example-not-a-secret" }, // omit for real S3
    requestHandler: handler,
  });
  const registration = registerPoolMetrics(handler.poolMonitor, { meterProvider });
  // --- end of the wiring ---
  const stop = () => {
    registration.unregister();
    s3.destroy();
  };
  try {
    await Promise.all(
      Array.from({ length: objects }, async (_, i) => {
        const key = { Bucket: "example-bucket", Key: `reports/${i}.txt` };
        await s3.send(new PutObjectCommand({ ...key, Body: `report ${i}` }));
        const { Body } = await s3.send(new GetObjectCommand(key));
        await Body?.transformToString();
      })
    );
  } catch (error) {
    stop();
    throw error;
  }
  return { stats: handler.getPoolStats(), stop };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { InMemoryMetricExporter, AggregationTemporality, PeriodicExportingMetricReader } = await import(
    "@opentelemetry/sdk-metrics"
  );
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const local = await startLocalS3();
  const { stop } = await runS3Example({ endpoint: local.endpoint, meterProvider });
  await reader.forceFlush();
  stop();
  for (const scope of exporter.getMetrics().at(-1)?.scopeMetrics ?? []) {
    for (const m of scope.metrics) {
      for (const p of m.dataPoints) {
        const value = typeof p.value === "number" ? p.value : `count ${/** @type {any} */ (p.value).count}`;
        console.log(`${m.descriptor.name} ${JSON.stringify(p.attributes)} ${value}`);
      }
    }
  }
  await meterProvider.shutdown();
  await local.close();
}
