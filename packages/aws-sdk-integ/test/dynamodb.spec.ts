/**
 * DynamoDB (JSON 1.0 protocol) through each handler under test, against moto: table and item operations, then
 * 500 concurrent GetItem calls squeezed through 10 sockets, where the agent's queue must visibly be used (sampled
 * from the agent itself and, for Sockeye, from `getPoolStats()`, whose counters must account for every request).
 */
import http from "node:http";
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectAgentEmptied } from "./support/agent-emptied.js";
import { type AgentQueueSample, sampleAgentQueue } from "./support/agent-queue-sampler.js";
import { dynamoDbClient, motoEndpoint, uniqueName } from "./support/aws-clients.js";
import { HANDLERS_UNDER_TEST, type HandlerInstance } from "./support/handlers-under-test.js";
import { expectRequestTotals, poolStatsOf } from "./support/pool-stats-of.js";
import { RecordingLogger } from "./support/recording-logger.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

const CONCURRENT = 500;
const MAX_SOCKETS = 10;
/** The handler-owned-agent variant only needs to prove the options reach the agent; a smaller burst queues too. */
const SMALLER_BURST = 100;

describe.each(HANDLERS_UNDER_TEST)("DynamoDB through the $name NodeHttpHandler", ({ NodeHttpHandler }) => {
  let handler: HandlerInstance;
  let client: DynamoDBClient;
  const TableName = uniqueName("sockeye-ddb");

  beforeAll(async () => {
    handler = new NodeHttpHandler({});
    client = dynamoDbClient(handler);
    const created = await client.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [
          { AttributeName: "pk", AttributeType: "S" },
          { AttributeName: "sk", AttributeType: "N" },
        ],
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        BillingMode: "PAY_PER_REQUEST",
      })
    );
    expect(created.TableDescription?.TableName).toBe(TableName);
  });

  afterAll(() => {
    client?.destroy();
  });

  it("PutItem then GetItem returns the item", async () => {
    await client.send(
      new PutItemCommand({
        TableName,
        Item: { pk: { S: "single" }, sk: { N: "1" }, note: { S: "ünïcödé ✓" }, n: { N: "42" } },
      })
    );
    const got = await client.send(
      new GetItemCommand({ TableName, Key: { pk: { S: "single" }, sk: { N: "1" } }, ConsistentRead: true })
    );
    expect(got.$metadata.httpStatusCode).toBe(200);
    expect(got.Item).toEqual({ pk: { S: "single" }, sk: { N: "1" }, note: { S: "ünïcödé ✓" }, n: { N: "42" } });
  });

  it("BatchWriteItem writes 25 items and Query reads them back in key order", async () => {
    const written = await client.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [TableName]: Array.from({ length: 25 }, (_, i) => ({
            PutRequest: { Item: { pk: { S: "batch" }, sk: { N: String(i) }, v: { S: `value-${i}` } } },
          })),
        },
      })
    );
    expect(written.UnprocessedItems ?? {}).toEqual({});
    const queried = await client.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: "pk = :pk AND sk >= :from",
        ExpressionAttributeValues: { ":pk": { S: "batch" }, ":from": { N: "5" } },
      })
    );
    expect(queried.Count).toBe(20);
    expect(queried.Items?.map((item) => Number(item.sk?.N))).toEqual(Array.from({ length: 20 }, (_, i) => i + 5));
  });

  /** `count` GetItem calls at once; every answer must carry the item asked for. */
  async function getItemsConcurrently(target: DynamoDBClient, count: number): Promise<void> {
    const results = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        target.send(new GetItemCommand({ TableName, Key: { pk: { S: "batch" }, sk: { N: String(i % 25) } } }))
      )
    );
    expect(results).toHaveLength(count);
    results.forEach((result, i) => {
      expect(result.Item?.v?.S).toBe(`value-${i % 25}`);
    });
  }

  it(`${CONCURRENT} concurrent GetItem through a caller-owned agent with maxSockets ${MAX_SOCKETS} all succeed and queue`, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
    // A long burst may trip the socket-usage warning (upstream's fires after 3 s); keep it off the test output.
    const limitedHandler = new NodeHttpHandler({ httpAgent: agent, logger: new RecordingLogger() });
    const limited = dynamoDbClient(limitedHandler);
    const stats = poolStatsOf(limitedHandler);
    const sampler = sampleAgentQueue(agent, stats);
    let sample: AgentQueueSample;
    try {
      await getItemsConcurrently(limited, CONCURRENT);
      sample = sampler.stop();
      expect(sample.maxQueued).toBeGreaterThan(0);
      expect(sample.maxInUse).toBeLessThanOrEqual(MAX_SOCKETS);
      expect(sample.maxInUseWhileQueued).toBe(MAX_SOCKETS);
      if (stats !== undefined) {
        // Sockeye's telemetry sees the caller's agent queue too, and accounts for every request exactly once.
        expect(sample.maxStatsQueued).toBeGreaterThan(0);
        expect(sample.maxStatsActive).toBeLessThanOrEqual(MAX_SOCKETS);
        const all = { started: CONCURRENT, completed: CONCURRENT, failed: 0, aborted: 0, timedOut: 0 };
        await expectRequestTotals(stats, all);
      }
    } finally {
      sampler.stop();
      limited.destroy();
    }
    // client.destroy() destroys the handler, which (as upstream does) destroys even a caller-owned agent.
    await expectAgentEmptied(agent);
  });

  it(`${SMALLER_BURST} concurrent GetItem through httpAgent options { maxSockets: ${MAX_SOCKETS} } all succeed and queue`, async () => {
    const ownHandler = new NodeHttpHandler({ httpAgent: { maxSockets: MAX_SOCKETS }, logger: new RecordingLogger() });
    const limited = dynamoDbClient(ownHandler);
    // The handler builds its agent lazily on the first http request; make one so it exists before the burst.
    await limited.send(new GetItemCommand({ TableName, Key: { pk: { S: "batch" }, sk: { N: "0" } } }));
    const agent = (ownHandler.httpHandlerConfigs() as { httpAgent?: http.Agent }).httpAgent;
    expect(agent).toBeInstanceOf(http.Agent);
    expect(agent!.maxSockets).toBe(MAX_SOCKETS);
    const stats = poolStatsOf(ownHandler);
    const sampler = sampleAgentQueue(agent!, stats);
    try {
      await getItemsConcurrently(limited, SMALLER_BURST);
      const sample = sampler.stop();
      expect(sample.maxQueued).toBeGreaterThan(0);
      expect(sample.maxInUseWhileQueued).toBe(MAX_SOCKETS);
      if (stats !== undefined) {
        expect(sample.maxStatsQueued).toBeGreaterThan(0);
        const n = SMALLER_BURST + 1;
        await expectRequestTotals(stats, { started: n, completed: n, failed: 0, aborted: 0, timedOut: 0 });
        const snapshot = stats();
        expect(snapshot.origins.map((o) => [o.origin, o.maxSockets])).toEqual([[motoEndpoint(), MAX_SOCKETS]]);
        expect(snapshot.totals.inFlight).toBe(0);
      }
    } finally {
      sampler.stop();
    }
    limited.destroy();
    await expectAgentEmptied(agent!);
  });
});
