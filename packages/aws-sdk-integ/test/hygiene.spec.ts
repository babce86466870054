/**
 * Nothing outlives `client.destroy()`: after real traffic (successes, a queued burst, an 8 MiB 100-continue upload,
 * aborts, thrown and warn-only timeouts), every TCP socket is closed, no ref'd timer is left
 * (`process.getActiveResourcesInfo()` counts back to the snapshot) and no timer at all created during the test is
 * still alive (async_hooks; this also catches unref'd timers). Sockeye runs once per `socketMonitor` mode.
 * Unhandled rejections fail the file.
 */
import { once } from "node:events";
import { randomBytes } from "node:crypto";
import http from "node:http";
import { CreateTableCommand, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand, SendMessageCommand } from "@aws-sdk/client-sqs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { expectAgentEmptied } from "./support/agent-emptied.js";
import { dynamoDbClient, s3Client, sqsClient, uniqueName } from "./support/aws-clients.js";
import { HANDLERS_UNDER_TEST, type HandlerOptions } from "./support/handlers-under-test.js";
import { expectResourcesBackTo, resourceCounts } from "./support/resource-counts.js";
import { sha256, sha256OfStream } from "./support/sha256.js";
import { type SlowServer, startSlowServer } from "./support/slow-server.js";
import { type TimerTracker, trackTimers } from "./support/timer-tracker.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

type Mode = HandlerOptions["socketMonitor"];
const variants = HANDLERS_UNDER_TEST.flatMap((h) =>
  (h.name === "sockeye" ? (["interval", "per-request", "off"] as Mode[]) : [undefined]).map((socketMonitor) => ({
    ...h,
    socketMonitor,
    label: socketMonitor === undefined ? h.name : `${h.name} (socketMonitor: "${socketMonitor}")`,
  }))
);

const TableName = uniqueName("sockeye-hygiene");
const getItem = (pk: string): GetItemCommand => new GetItemCommand({ TableName, Key: { pk: { S: pk } } });

describe.each(variants)("hygiene of the $label NodeHttpHandler", ({ NodeHttpHandler, socketMonitor }) => {
  let slow: SlowServer;
  let tracker: TimerTracker | undefined;
  /** Every timeout option armed, so each per-request deadline kind exists and must be cleaned up. */
  const options = (extra: HandlerOptions = {}): HandlerOptions => ({
    connectionTimeout: 2_000,
    requestTimeout: 10_000,
    socketTimeout: 10_000,
    ...(socketMonitor === undefined ? {} : { socketMonitor }),
    ...extra,
  });

  beforeAll(async () => {
    slow = await startSlowServer(650);
    const setup = dynamoDbClient(new NodeHttpHandler({}));
    try {
      await setup
        .send(
          new CreateTableCommand({
            TableName,
            AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
            KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
            BillingMode: "PAY_PER_REQUEST",
          })
        )
        .catch((error: Error) => {
          if (error.name !== "ResourceInUseException") throw error; // made by an earlier variant
        });
      await setup.send(new PutItemCommand({ TableName, Item: { pk: { S: "p" }, v: { S: "ok" } } }));
    } finally {
      setup.destroy();
    }
  });
  afterEach(() => {
    tracker?.stop();
    tracker = undefined;
  });
  afterAll(async () => {
    await slow?.close();
  });

  it("S3, DynamoDB (a queued burst) and SQS traffic, then destroy(): no socket, no timer left", async () => {
    const before = resourceCounts();
    tracker = trackTimers();
    const handler = new NodeHttpHandler(options({ httpAgent: { maxSockets: 4 } }));
    const s3 = s3Client(handler);
    const dynamo = dynamoDbClient(handler);
    const sqs = sqsClient(handler);

    const Bucket = uniqueName("sockeye-hygiene");
    await s3.send(new CreateBucketCommand({ Bucket }));
    const big = randomBytes(8 * 1024 * 1024);
    await s3.send(new PutObjectCommand({ Bucket, Key: "big", Body: big }));
    const got = await s3.send(new GetObjectCommand({ Bucket, Key: "big" }));
    expect((await sha256OfStream(got.Body as AsyncIterable<Uint8Array>)).hex).toBe(sha256(big));

    const items = await Promise.all(Array.from({ length: 40 }, () => dynamo.send(getItem("p"))));
    expect(items.every((r) => r.Item?.v?.S === "ok")).toBe(true);

    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-hygiene") }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: "m" }));
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages).toHaveLength(1);

    s3.destroy();
    dynamo.destroy();
    sqs.destroy();
    await expectResourcesBackTo(before);
    await tracker.expectAllGone();
  });

  it("aborted, timed-out and warn-only requests, then destroy(): no socket, no timer left", async () => {
    const before = resourceCounts();
    tracker = trackTimers();
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} };
    const throwing = dynamoDbClient(new NodeHttpHandler(options({ throwOnRequestTimeout: true, logger })), {
      endpoint: slow.endpoint,
      maxAttempts: 1,
    });
    const warning = dynamoDbClient(new NodeHttpHandler(options({ requestTimeout: 300, logger })), {
      endpoint: slow.endpoint,
      maxAttempts: 1,
    });

    const controller = new AbortController();
    const arrived = once(slow.events, "request").then(() => controller.abort());
    const aborted = throwing.send(getItem("x"), { abortSignal: controller.signal });
    await expect(aborted).rejects.toMatchObject({ name: "AbortError" });
    await arrived;

    await expect(throwing.send(getItem("x"), { requestTimeout: 250 })).rejects.toMatchObject({ name: "TimeoutError" });

    const slowAnswer = await warning.send(getItem("x"));
    expect(slowAnswer.$metadata.httpStatusCode).toBe(200);
    expect(warnings).toEqual([
      expect.stringContaining("[WARN] a request has exceeded the configured 300 ms requestTimeout"),
    ]);

    throwing.destroy();
    warning.destroy();
    await expectResourcesBackTo(before);
    await tracker.expectAllGone();
  });

  it("a caller-owned agent: destroy() empties it and leaves no timer", async () => {
    const before = resourceCounts();
    tracker = trackTimers();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 3 });
    const dynamo = dynamoDbClient(new NodeHttpHandler(options({ httpAgent: agent })));
    const items = await Promise.all(Array.from({ length: 20 }, () => dynamo.send(getItem("p"))));
    expect(items.every((r) => r.Item?.v?.S === "ok")).toBe(true);
    dynamo.destroy();
    await expectAgentEmptied(agent);
    await expectResourcesBackTo(before);
    await tracker.expectAllGone();
  });
});
