/**
 * The ways a caller hands the handler to a client, each with a smoke subset of S3, DynamoDB and SQS calls:
 * - `requestHandler: new NodeHttpHandler(options)`
 * - `requestHandler: NodeHttpHandler.create(options)` (and `create(instance)` returning that instance)
 * - a caller-owned `httpAgent: new http.Agent({ keepAlive: true })`, which must really carry the traffic, be
 *   reused (keep-alive) and be emptied by `client.destroy()` (upstream destroys even caller-owned agents).
 *
 * (The plain-options shorthand `requestHandler: { ... }` is not here: it makes the client build the SDK's OWN
 * bundled handler, not the one under test. See docs/aws-sdk.md.)
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import { CreateTableCommand, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { describe, expect, it } from "vitest";
import { expectAgentEmptied } from "./support/agent-emptied.js";
import { dynamoDbClient, motoEndpoint, s3Client, sqsClient, uniqueName } from "./support/aws-clients.js";
import { startExpectContinueProbe } from "./support/expect-continue-probe.js";
import { HANDLERS_UNDER_TEST, type HandlerClass, type HandlerInstance } from "./support/handlers-under-test.js";
import { sha256, sha256OfStream } from "./support/sha256.js";
import { startSlowServer } from "./support/slow-server.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

/** S3 + DynamoDB + SQS calls that must all succeed through `handler`; destroys the clients at the end. */
async function smoke(handler: HandlerInstance): Promise<void> {
  const s3 = s3Client(handler);
  const dynamo = dynamoDbClient(handler);
  const sqs = sqsClient(handler);
  try {
    const Bucket = uniqueName("sockeye-forms");
    const Body = randomBytes(64 * 1024);
    await s3.send(new CreateBucketCommand({ Bucket }));
    await s3.send(new PutObjectCommand({ Bucket, Key: "k", Body }));
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: "k" }));
    expect((await sha256OfStream(got.Body as AsyncIterable<Uint8Array>)).hex).toBe(sha256(Body));

    const TableName = uniqueName("sockeye-forms");
    await dynamo.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      })
    );
    await dynamo.send(new PutItemCommand({ TableName, Item: { pk: { S: "a" }, v: { N: "7" } } }));
    const item = await dynamo.send(new GetItemCommand({ TableName, Key: { pk: { S: "a" } } }));
    expect(item.Item?.v?.N).toBe("7");

    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-forms") }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "forms" }));
    const received = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 }));
    expect(received.Messages?.map((m) => m.Body)).toEqual(["forms"]);
  } finally {
    // One handler shared by three clients: the first destroy() destroys it; the others are harmless repeats.
    s3.destroy();
    dynamo.destroy();
    sqs.destroy();
  }
}

describe.each(HANDLERS_UNDER_TEST)("requestHandler forms of the $name NodeHttpHandler", ({ NodeHttpHandler }) => {
  const Handler: HandlerClass = NodeHttpHandler;

  it("new NodeHttpHandler(options)", async () => {
    const handler = new Handler({ connectionTimeout: 2_000, requestTimeout: 10_000 });
    expect(handler.metadata.handlerProtocol).toBe("http/1.1");
    await smoke(handler);
  });

  it("NodeHttpHandler.create(options)", async () => {
    const handler = Handler.create({ connectionTimeout: 2_000, socketTimeout: 10_000 });
    expect(handler).toBeInstanceOf(Handler);
    await smoke(handler);
  });

  it("NodeHttpHandler.create(instance) returns that very instance", async () => {
    const instance = new Handler({});
    expect(Handler.create(instance)).toBe(instance);
    await smoke(Handler.create(instance));
  });

  it("a caller-owned http.Agent carries the traffic and is emptied by client.destroy()", async () => {
    const agent = new http.Agent({ keepAlive: true });
    let socketsCreated = 0;
    const createConnection = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof createConnection>) => {
      socketsCreated++;
      return createConnection(...args);
    };
    await smoke(new Handler({ httpAgent: agent }));
    expect(socketsCreated).toBeGreaterThanOrEqual(9);
    await expectAgentEmptied(agent);
  });

  it("a caller-owned keep-alive agent reuses one socket for sequential calls (local server; moto closes each)", async () => {
    const local = await startSlowServer(0);
    const agent = new http.Agent({ keepAlive: true });
    const client = dynamoDbClient(new Handler({ httpAgent: agent }), { endpoint: local.endpoint });
    try {
      for (let i = 0; i < 5; i++) {
        const out = await client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: String(i) } } }));
        expect(out.$metadata.httpStatusCode).toBe(200);
      }
      expect(local.received()).toBe(5);
      expect(local.connections()).toBe(1);
    } finally {
      client.destroy();
      await expectAgentEmptied(agent);
      await local.close();
    }
  });

  it("an 8 MiB upload through a caller-owned agent still sends Expect: 100-continue and round-trips", async () => {
    const probe = await startExpectContinueProbe(motoEndpoint());
    const agent = new http.Agent({ keepAlive: true });
    const viaProbe = s3Client(new Handler({ httpAgent: agent }), { endpoint: probe.endpoint });
    const direct = s3Client(new Handler({}));
    try {
      const Bucket = uniqueName("sockeye-forms-big");
      const Body = randomBytes(8 * 1024 * 1024);
      await direct.send(new CreateBucketCommand({ Bucket }));
      await viaProbe.send(new PutObjectCommand({ Bucket, Key: "big", Body }));
      const upload = probe.exchanges.find((x) => x.head.startsWith("PUT "));
      expect(upload?.head).toMatch(/\r\nexpect: 100-continue(\r\n|$)/i);
      expect(upload?.bodyBytes).toBeGreaterThanOrEqual(Body.length);
      const got = await direct.send(new GetObjectCommand({ Bucket, Key: "big" }));
      expect((await sha256OfStream(got.Body as AsyncIterable<Uint8Array>)).hex).toBe(sha256(Body));
    } finally {
      viaProbe.destroy();
      direct.destroy();
      await probe.close();
    }
    await expectAgentEmptied(agent);
  });
});
