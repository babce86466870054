/**
 * Real SDK retries: DynamoDB `GetItem` and S3 `ListObjectsV2` with the clients' DEFAULT retry settings (standard
 * strategy, 3 attempts), through a fault-injecting proxy on 127.0.0.1 in front of moto, for Sockeye's
 * `NodeHttpHandler` and `UndiciHttpHandler` and upstream `@smithy/node-http-handler` and
 * `@smithy/undici-http-handler`.
 *
 * Every fault mode runs transient (the first attempt faulted, then the proxy passes) and persistent (every attempt
 * faulted). The oracle is upstream `@smithy/node-http-handler`: each handler must be retried in as many attempts
 * (counted at the proxy and as `$metadata.attempts`) and end the same way (success after a transient fault, an
 * error after persistent ones). `@smithy/undici-http-handler`'s own divergences are recorded as they are.
 *
 * `SOCKEYE_RETRIES_PRINT=1` prints each observed result.
 */
import { CreateTableCommand, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { beforeAll, describe, expect, it } from "vitest";
import {
  createHandler,
  HANDLER_KEYS,
  type HandlerKey,
  type NeutralConfig,
} from "../../undici-http-handler/test/handler-matrix.js";
import { dynamoDbClient, motoEndpoint, s3Client, uniqueName } from "./support/aws-clients.js";
import { closedPort, type ProxyMode, startFaultProxy } from "./support/fault-proxy.js";
import { DIST_HANDLER_CLASSES } from "./support/handler-matrix-dist.js";
import type { HandlerInstance } from "./support/handlers-under-test.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";
import { type RetryFault, type RetryOutcome, retryExpectation } from "./support/retry-expectations.js";

failOnUnhandledRejections();

/** The handlers' socketTimeout for the `stall` mode (ms). */
const STALL_TIMEOUT_MS = 300;

const TableName = uniqueName("sockeye-retries");
const Bucket = uniqueName("sockeye-retries");

beforeAll(async () => {
  const handler = new NodeHttpHandler();
  const ddb = dynamoDbClient(handler);
  const s3 = s3Client(handler);
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      })
    );
    await ddb.send(new PutItemCommand({ TableName, Item: { pk: { S: "k" }, v: { S: "x".repeat(200) } } }));
    await s3.send(new CreateBucketCommand({ Bucket }));
    for (const Key of ["a", "b", "c"]) await s3.send(new PutObjectCommand({ Bucket, Key, Body: "hello" }));
  } finally {
    ddb.destroy();
    s3.destroy();
  }
});

type Service = "dynamodb" | "s3";

/** Sends the service's call through `handler` to `endpoint`; returns attempts and how it ended. */
async function call(service: Service, handler: HandlerInstance, endpoint: string): Promise<RetryOutcome> {
  const metadataOf = (x: unknown) => (x as { $metadata?: { attempts?: number } }).$metadata;
  const ended = (out: unknown): RetryOutcome => ({ ok: true, attempts: metadataOf(out)?.attempts ?? -1 });
  const failed = (error: unknown): RetryOutcome => {
    const e = error as Error & { code?: string };
    return { ok: false, attempts: metadataOf(e)?.attempts ?? -1, error: `${e.name}/${e.code ?? "-"}` };
  };
  if (service === "dynamodb") {
    const client = dynamoDbClient(handler, { endpoint });
    try {
      return await client.send(new GetItemCommand({ TableName, Key: { pk: { S: "k" } } })).then(ended, failed);
    } finally {
      client.destroy();
    }
  }
  const client = s3Client(handler, { endpoint });
  try {
    return await client.send(new ListObjectsV2Command({ Bucket })).then(ended, failed);
  } finally {
    client.destroy();
  }
}

const FAULTS: RetryFault[] = [
  "reset-before-response",
  "reset-mid-body-keep-alive",
  "reset-mid-body-close",
  "fin-mid-body-keep-alive",
  "fin-mid-body-close",
  "refuse",
  "stall",
];

for (const service of ["dynamodb", "s3"] as const) {
  describe.concurrent(`${service} with default retries through a fault proxy in front of moto`, () => {
    for (const fault of FAULTS) {
      // A refusal cannot be transient here (nothing listens, so nothing can let the 2nd attempt through).
      const persistences = fault === "refuse" ? (["persistent"] as const) : (["transient", "persistent"] as const);
      for (const persistence of persistences) {
        for (const key of HANDLER_KEYS) {
          const expected = retryExpectation(fault, persistence, key, service);
          const title = `${fault}, ${persistence} [${key}]`;
          it(title, async () => {
            const config: NeutralConfig = fault === "stall" ? { socketTimeout: STALL_TIMEOUT_MS } : {};
            const handler = createHandler(DIST_HANDLER_CLASSES, key as HandlerKey, config) as HandlerInstance;
            const proxy = await startFaultProxy(motoEndpoint());
            try {
              let endpoint = proxy.endpoint;
              if (fault === "refuse") {
                // Nothing listens: persistent refusals only (a proxy cannot refuse and still count).
                endpoint = `http://127.0.0.1:${await closedPort()}`;
              } else {
                const mode = fault as ProxyMode;
                proxy.plan(persistence === "transient" ? [mode] : [], persistence === "transient" ? "pass" : mode);
              }
              const outcome = await call(service, handler, endpoint);
              const proxied = fault === "refuse" ? undefined : proxy.requests();
              if (process.env.SOCKEYE_RETRIES_PRINT) {
                console.log(JSON.stringify({ service, fault, persistence, key, outcome, proxied }));
              }
              const want = expected;
              expect({ ...outcome, error: outcome.error ?? null }).toEqual({
                ok: want.ok,
                attempts: want.attempts,
                error: want.error ?? null,
              });
              // Every attempt reached the proxy (one request each).
              if (proxied !== undefined) expect(proxied).toBe(want.attempts);
            } finally {
              handler.destroy();
              await proxy.close();
            }
          });
        }
      }
    }
  });
}
