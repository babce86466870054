// The two ways to give agent settings: options (the handler builds and owns the agent) or your own agent (used as is).
// Run: node agents.mjs (AWS credentials as for any SDK program; AWS_ENDPOINT_URL for an emulator).
import https from "node:https";
import { ListBucketsCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler";

// Agent options: the handler owns the agent (idle sockets are closed after idleSocketTimeout, 4 s by default).
const owned = new NodeHttpHandler({ httpsAgent: { maxSockets: 200 } });

// Your own agent: used as is (lifecycle limits apply only when you set them explicitly).
const agent = new https.Agent({ keepAlive: true, maxSockets: 200 });
const external = new NodeHttpHandler({ httpsAgent: agent });

for (const requestHandler of [owned, external]) {
  const s3 = new S3Client({ region: "us-east-1", requestHandler });
  const { Buckets = [] } = await s3.send(new ListBucketsCommand({}));
  console.log(`buckets: ${Buckets.length}`);
  s3.destroy();
}
agent.destroy();
