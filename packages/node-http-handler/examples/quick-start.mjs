// An S3 client on Sockeye's NodeHttpHandler, then what its socket pool looks like.
// Run: node quick-start.mjs (AWS credentials and region as for any SDK program; AWS_ENDPOINT_URL for an emulator).
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler";

const handler = new NodeHttpHandler({
  httpsAgent: { maxSockets: 200 }, // per origin; upstream's default is 50
  connectionTimeout: 3_000,
  socketAcquisitionTimeout: 10_000, // fail fast instead of queueing for ever
  onSaturation: (report) => console.warn("socket pool saturated:", report.origin, report.cause),
});
const s3 = new S3Client({ region: process.env.AWS_REGION ?? "us-east-1", requestHandler: handler });

const { Buckets = [] } = await s3.send(new ListBucketsCommand({}));
console.log(`buckets: ${Buckets.length}`);

// One entry per origin (scheme://host:port, never a path): sockets active / idle, requests queued, and more.
for (const { origin, active, idle, queued } of handler.getPoolStats().origins) {
  console.log(`pool ${origin}: active ${active}, idle ${idle}, queued ${queued}`);
}
s3.destroy();
