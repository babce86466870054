/**
 * Real AWS SDK v3 clients through `@sockeye/undici-http-handler` against moto: S3 (every body kind, an 8 MiB
 * PutObject whose `Expect: 100-continue` is removed and whose body goes out with the headers on the handler's
 * undici pool, as `@smithy/undici-http-handler` does; multipart upload with the raw commands, streamed downloads verified by SHA-256, the modelled 404),
 * DynamoDB and SQS; then the handler's pool telemetry, and client error shapes (refused connection, `destroy()` with
 * calls in flight: `HandlerDestroyedError`, never retried).
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { CreateTableCommand, GetItemCommand, PutItemCommand, QueryCommand } from "@aws-sdk/client-dynamodb";
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  PutObjectCommand,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from "@aws-sdk/client-sqs";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { afterAll, describe, expect, it } from "vitest";
import { dynamoDbClient, motoEndpoint, s3Client, sqsClient, uniqueName } from "./support/aws-clients.js";
import { startExpectContinueProbe } from "./support/expect-continue-probe.js";
import { sha256, sha256OfStream } from "./support/sha256.js";
import { startSlowServer } from "./support/slow-server.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

const MIB = 1024 * 1024;

describe("S3 through the Sockeye undici handler", () => {
  const handler = new UndiciHttpHandler({ requestTimeout: 60_000, throwOnRequestTimeout: true });
  const client = s3Client(handler);
  const Bucket = uniqueName("sockeye-undici-s3");
  afterAll(() => client.destroy());

  async function download(Key: string): Promise<{ hex: string; bytes: number }> {
    const got = await client.send(new GetObjectCommand({ Bucket, Key }));
    expect(got.$metadata.httpStatusCode).toBe(200);
    const body = got.Body as Readable;
    expect(body).toBeInstanceOf(Readable);
    const digest = await sha256OfStream(body);
    expect(body.readableEnded).toBe(true);
    return digest;
  }

  it("CreateBucket, then string, Buffer and Readable bodies round-trip", async () => {
    expect((await client.send(new CreateBucketCommand({ Bucket }))).$metadata.httpStatusCode).toBe(200);
    const text = `undici says hello ✓ ${"x".repeat(1000)}`;
    await client.send(new PutObjectCommand({ Bucket, Key: "s.txt", Body: text, ContentType: "text/plain" }));
    expect(await download("s.txt")).toEqual({ hex: sha256(text), bytes: Buffer.byteLength(text) });
    const bytes = randomBytes(300_000);
    await client.send(new PutObjectCommand({ Bucket, Key: "b.bin", Body: bytes }));
    expect(await download("b.bin")).toEqual({ hex: sha256(bytes), bytes: bytes.length });
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(130_000)];
    const whole = Buffer.concat(parts);
    await client.send(
      new PutObjectCommand({ Bucket, Key: "r.bin", Body: Readable.from(parts), ContentLength: whole.length })
    );
    expect(await download("r.bin")).toEqual({ hex: sha256(whole), bytes: whole.length });
  });

  it("PutObject of 8 MiB: the SDK's Expect: 100-continue is removed, the body sent at once; it round-trips", async () => {
    const bytes = randomBytes(8 * MIB);
    const probe = await startExpectContinueProbe(motoEndpoint());
    const viaProbe = s3Client(new UndiciHttpHandler({}), { endpoint: probe.endpoint });
    try {
      const put = await viaProbe.send(new PutObjectCommand({ Bucket, Key: "big.bin", Body: bytes }));
      expect(put.ETag).toMatch(/^"[0-9a-f]{32}"$/);
      const uploads = probe.exchanges.filter((x) => x.head.startsWith("PUT "));
      expect(uploads).toHaveLength(1);
      expect(uploads[0]!.head).not.toMatch(/\r\nexpect:/i);
      expect(uploads[0]!.sawContinue).toBe(false);
      expect(uploads[0]!.bodyBytes).toBeGreaterThanOrEqual(8 * MIB);
      expect(await download("big.bin")).toEqual({ hex: sha256(bytes), bytes: 8 * MIB });
      const head = await client.send(new HeadObjectCommand({ Bucket, Key: "big.bin" }));
      expect(head.ContentLength).toBe(8 * MIB);
    } finally {
      viaProbe.destroy();
      await probe.close();
    }
  });

  it("multipart upload (two 5 MiB parts, raw commands) round-trips", async () => {
    const Key = "multi.bin";
    const partBodies = [randomBytes(5 * MIB), randomBytes(5 * MIB)];
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
    expect(UploadId).toBeTruthy();
    const Parts = [];
    for (let i = 0; i < partBodies.length; i++) {
      const part = await client.send(
        new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: i + 1, Body: partBodies[i] })
      );
      Parts.push({ ETag: part.ETag, PartNumber: i + 1 });
    }
    await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts } }));
    const whole = Buffer.concat(partBodies);
    expect(await download(Key)).toEqual({ hex: sha256(whole), bytes: whole.length });
  });

  it("a missing key surfaces as NoSuchKey with httpStatusCode 404", async () => {
    const error = await client.send(new GetObjectCommand({ Bucket, Key: "nope" })).then(
      () => undefined,
      (e: unknown) => e
    );
    expect(error).toBeInstanceOf(NoSuchKey);
    expect((error as NoSuchKey).$metadata.httpStatusCode).toBe(404);
  });

  it("getPoolStats() reports moto's origin with every request completed and nothing in flight", async () => {
    const stats = handler.getPoolStats();
    const origin = new URL(motoEndpoint());
    expect(stats.origins.map((o) => o.origin)).toEqual([`http://${origin.hostname}:${origin.port}`]);
    const o = stats.origins[0]!;
    // A 404 is a completed HTTP exchange (the SDK turns it into NoSuchKey): nothing failed at the transport level.
    expect(o.requests.failed).toBe(0);
    expect(o.requests.completed).toBe(o.requests.started);
    expect(o.requests.started).toBeGreaterThanOrEqual(10);
    expect(o.inFlight).toBe(0);
    expect(o.sockets.created).toBeGreaterThanOrEqual(1);
  });
});

describe("DynamoDB and SQS through the Sockeye undici handler", () => {
  const handler = new UndiciHttpHandler({ connectionTimeout: 5_000, socketTimeout: 30_000 });
  const ddb = dynamoDbClient(handler);
  const sqs = sqsClient(handler);
  afterAll(() => {
    ddb.destroy();
    sqs.destroy();
  });

  it("DynamoDB: CreateTable, PutItem, GetItem, Query", async () => {
    const TableName = uniqueName("sockeye-undici-ddb");
    await ddb.send(
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
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: "p" }, sk: { N: String(i) }, v: { S: `v${i}` } } }))
      )
    );
    const got = await ddb.send(
      new GetItemCommand({ TableName, Key: { pk: { S: "p" }, sk: { N: "7" } }, ConsistentRead: true })
    );
    expect(got.Item?.v?.S).toBe("v7");
    const q = await ddb.send(
      new QueryCommand({
        TableName,
        KeyConditionExpression: "pk = :p",
        ExpressionAttributeValues: { ":p": { S: "p" } },
      })
    );
    expect(q.Count).toBe(20);
  });

  it("SQS: SendMessage, ReceiveMessage, DeleteMessage", async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-undici-sqs") }));
    const MessageBody = `hello ✓ ${"y".repeat(2000)}`;
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody }));
    expect(sent.MessageId).toMatch(/\S/);
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 })
    );
    expect(received.Messages).toHaveLength(1);
    expect(sha256(received.Messages![0]!.Body!)).toBe(sha256(MessageBody));
    const deleted = await sqs.send(
      new DeleteMessageCommand({ QueueUrl, ReceiptHandle: received.Messages![0]!.ReceiptHandle! })
    );
    expect(deleted.$metadata.httpStatusCode).toBe(200);
    expect(handler.getPoolStats().totals.inFlight).toBe(0);
  });

  it("destroy() with calls in flight and queued: each rejects HandlerDestroyedError once, not retried", async () => {
    const slow = await startSlowServer(30_000);
    const handler = new UndiciHttpHandler({ httpAgent: { maxSockets: 2 } });
    const client = dynamoDbClient(handler, { endpoint: slow.endpoint, maxAttempts: 3 });
    try {
      const calls = Array.from({ length: 5 }, () =>
        client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "x" } } })).then(
          () => undefined,
          (e: unknown) => e as Error & { code?: string; $metadata?: { attempts?: number } }
        )
      );
      // Two on the server (both sockets), three queued in the handler.
      await new Promise<void>((resolve) => {
        const check = () => (slow.received() >= 2 ? resolve() : slow.events.once("request", check));
        check();
      });
      handler.destroy();
      const errors = await Promise.all(calls);
      expect(errors.map((e) => [e?.name, e?.code, e?.$metadata?.attempts])).toEqual(
        Array.from({ length: 5 }, () => ["HandlerDestroyedError", "ERR_HANDLER_DESTROYED", 1])
      );
      expect(slow.received()).toBe(2);
      expect(handler.getPoolStats().totals.inFlight).toBe(0);
    } finally {
      client.destroy();
      await slow.close();
    }
  });

  it("a refused connection reaches the caller as ECONNREFUSED after the SDK's retries", async () => {
    const refused = dynamoDbClient(new UndiciHttpHandler({}), { endpoint: "http://127.0.0.1:9", maxAttempts: 2 });
    const error = await refused.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "x" } } })).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string; $metadata?: { attempts?: number } }
    );
    refused.destroy();
    expect(error?.code).toBe("ECONNREFUSED");
    expect(error?.$metadata?.attempts).toBe(2);
  });
});
