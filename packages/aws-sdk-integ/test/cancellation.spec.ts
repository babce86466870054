/**
 * Cancellation and timeouts as a real client sees them, against a deliberately slow LOCAL endpoint (this process's
 * own http server on 127.0.0.1; moto answers too fast to be caught mid-request):
 * - `client.send(cmd, { abortSignal })` aborted while the request is at the server rejects with `AbortError` and the
 *   connection is torn down (also when aborted with a reason); an already-aborted signal sends nothing.
 * - a per-call `requestTimeout` with `throwOnRequestTimeout: true` rejects with `TimeoutError`, which the SDK's
 *   retry strategy treats as transient (it retries, like it does for upstream).
 */
import { once } from "node:events";
import { type DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { dynamoDbClient } from "./support/aws-clients.js";
import { HANDLERS_UNDER_TEST, type HandlerInstance, type HandlerOptions } from "./support/handlers-under-test.js";
import { poolStatsOf, type RequestTotals, requestTotals } from "./support/pool-stats-of.js";
import { type SlowServer, startSlowServer } from "./support/slow-server.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

const SERVER_DELAY_MS = 5_000;
const getItem = (): GetItemCommand => new GetItemCommand({ TableName: "t", Key: { pk: { S: "k" } } });

/** Settles `promise` and returns what it rejected with (fails the test if it resolved). */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; $metadata?: any }> {
  return promise.then(
    () => {
      throw new Error("expected a rejection, got a response");
    },
    (error: unknown) => error as Error
  );
}

async function until(condition: () => boolean, withinMs = 3_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(HANDLERS_UNDER_TEST)(
  "cancellation and timeouts through the $name NodeHttpHandler",
  ({ NodeHttpHandler }) => {
    let slow: SlowServer;
    const clients: DynamoDBClient[] = [];
    /** The handler behind the latest `client()`. */
    let handler: HandlerInstance;
    const client = (options: HandlerOptions, maxAttempts?: number): DynamoDBClient => {
      handler = new NodeHttpHandler(options);
      const c = dynamoDbClient(handler, { endpoint: slow.endpoint, maxAttempts });
      clients.push(c);
      return c;
    };
    /** Sockeye only: waits until the handler's request counters match `expected` (upstream has no counters). */
    const expectCounters = async (expected: Partial<RequestTotals>): Promise<void> => {
      const stats = poolStatsOf(handler);
      if (stats === undefined) return;
      const matches = (): boolean => {
        const totals = requestTotals(stats());
        return Object.entries(expected).every(([key, value]) => totals[key as keyof RequestTotals] === value);
      };
      await until(matches).catch(() => {
        expect(requestTotals(stats())).toMatchObject(expected);
      });
    };

    beforeAll(async () => {
      slow = await startSlowServer(SERVER_DELAY_MS);
    });
    afterEach(() => {
      for (const c of clients.splice(0)) c.destroy();
    });
    afterAll(async () => {
      await slow?.close();
    });

    it("an abortSignal fired while the request is at the server rejects with AbortError and drops the connection", async () => {
      const c = client({});
      const controller = new AbortController();
      const before = { received: slow.received(), abandoned: slow.abandoned() };
      const arrived = once(slow.events, "request").then(() => controller.abort());
      const error = await rejection(c.send(getItem(), { abortSignal: controller.signal }));
      await arrived;
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe("AbortError");
      expect(error.message).toBe("Request aborted");
      expect(slow.received() - before.received).toBe(1);
      await until(() => slow.abandoned() - before.abandoned === 1);
      await expectCounters({ started: 1, aborted: 1, completed: 0, timedOut: 0 });
    });

    it("an abort with a reason rejects with AbortError and the handler still drops the connection", async () => {
      // The SDK's retry middleware races the signal itself and rejects with its own AbortError (without `cause`),
      // so the handler's rejection is not the one the caller sees; it must still tear the request down and must
      // not surface as an unhandled rejection (checked for the whole file).
      const c = client({});
      const controller = new AbortController();
      const before = slow.abandoned();
      const arrived = once(slow.events, "request").then(() => controller.abort(new Error("user navigated away")));
      const error = await rejection(c.send(getItem(), { abortSignal: controller.signal }));
      await arrived;
      expect(error.name).toBe("AbortError");
      await until(() => slow.abandoned() - before === 1);
      await expectCounters({ started: 1, aborted: 1 });
    });

    it("an already-aborted signal rejects with AbortError without sending anything", async () => {
      const c = client({});
      const received = slow.received();
      const error = await rejection(c.send(getItem(), { abortSignal: AbortSignal.abort() }));
      expect(error.name).toBe("AbortError");
      expect(slow.received()).toBe(received);
      await expectCounters({ started: 0 });
    });

    it("a per-call requestTimeout with throwOnRequestTimeout rejects with TimeoutError (one attempt)", async () => {
      const c = client({ throwOnRequestTimeout: true }, 1);
      const before = { received: slow.received(), abandoned: slow.abandoned() };
      const error = await rejection(c.send(getItem(), { requestTimeout: 150 }));
      expect(error.name).toBe("TimeoutError");
      expect(error.code).toBe("ETIMEDOUT");
      expect(error.message).toContain("150 ms requestTimeout");
      expect(error.$metadata?.attempts).toBe(1);
      expect(slow.received() - before.received).toBe(1);
      await until(() => slow.abandoned() - before.abandoned === 1);
      await expectCounters({ started: 1, timedOut: 1, completed: 0, aborted: 0 });
    });

    it("the SDK retries a TimeoutError like any transient error (maxAttempts 2)", async () => {
      const c = client({ throwOnRequestTimeout: true }, 2);
      const received = slow.received();
      const error = await rejection(c.send(getItem(), { requestTimeout: 150 }));
      expect(error.name).toBe("TimeoutError");
      expect(error.$metadata?.attempts).toBe(2);
      expect(slow.received() - received).toBe(2);
      await expectCounters({ started: 2, timedOut: 2 });
    });
  }
);
