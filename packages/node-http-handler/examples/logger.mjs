// Where the handler's warnings go: the client's logger, unless the handler was given its own.
// Run: node logger.mjs (AWS credentials as for any SDK program; AWS_ENDPOINT_URL for an emulator).
import { DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { NodeHttpHandler } from "@sockeye/node-http-handler";

const clientLogger = {
  debug() {},
  info() {},
  warn: (...args) => console.log("client logger:", ...args),
  error: console.error,
};
const handlerLogger = { ...clientLogger, warn: (...args) => console.log("handler logger:", ...args) };

// requestTimeout warns (throwOnRequestTimeout: false, upstream's default) on the client's logger...
const dynamodb = new DynamoDBClient({
  region: "us-east-1",
  logger: clientLogger,
  requestHandler: new NodeHttpHandler({ requestTimeout: 1_000 }),
});
// ...or on the handler's own logger, which wins over the client's.
const withOwnLogger = new DynamoDBClient({
  region: "us-east-1",
  logger: clientLogger,
  requestHandler: new NodeHttpHandler({ requestTimeout: 1_000, logger: handlerLogger }),
});

for (const client of [dynamodb, withOwnLogger]) {
  const { TableNames = [] } = await client.send(new ListTablesCommand({}));
  console.log(`tables: ${TableNames.length}`);
  client.destroy();
}
