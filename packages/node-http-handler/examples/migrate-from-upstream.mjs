// Moving a client from upstream's handler to Sockeye's: the import is the only line that changes.
// Run: node migrate-from-upstream.mjs (AWS credentials as for any SDK program; AWS_ENDPOINT_URL for an emulator).
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler"; // was: from "@smithy/node-http-handler"

const s3 = new S3Client({
  region: "eu-west-1",
  requestHandler: new NodeHttpHandler({ connectionTimeout: 2_000, requestTimeout: 10_000 }),
});
const { Buckets = [] } = await s3.send(new ListBucketsCommand({}));
console.log(`buckets: ${Buckets.length}`);
s3.destroy();
