// An S3 client on Sockeye's UndiciHttpHandler: the same options, stats, events and metrics as NodeHttpHandler.
// Run: node quick-start.mjs (AWS credentials as for any SDK program; AWS_ENDPOINT_URL for an emulator).
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { registerPoolMetrics } from "@sockeye/opentelemetry";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";

const handler = new UndiciHttpHandler({
  httpsAgent: { maxSockets: 200 },
  onSaturation: (report) => console.warn("socket pool saturated:", report.origin, report.cause),
});
// OpenTelemetry instruments on the global meter provider (a no-op until an SDK is registered).
const metrics = registerPoolMetrics(handler.poolMonitor);
// The same PoolEvent objects as on the sockeye:* diagnostics channels.
const events = new Map();
const unsubscribe = handler.poolMonitor.subscribe((event) => events.set(event.type, (events.get(event.type) ?? 0) + 1));

const s3 = new S3Client({ region: "us-east-1", requestHandler: handler });
const { Buckets = [] } = await s3.send(new ListBucketsCommand({}));
console.log(`buckets: ${Buckets.length}`);
for (const { origin, active, idle, queued } of handler.getPoolStats().origins) {
  console.log(`pool ${origin}: active ${active}, idle ${idle}, queued ${queued}`);
}
console.log(`events: ${[...events.keys()].sort().join(", ")}`);
unsubscribe();
metrics.unregister();
s3.destroy();
