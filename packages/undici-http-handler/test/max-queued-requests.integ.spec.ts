/**
 * `maxQueuedRequests` on the three Sockeye handlers, one table, real loopback servers that hold every request
 * (`holding-server.ts`): a request that would wait beyond the bound rejects at once (a rejection of `handle()`, never
 * a throw) with a one-line `QueueFullError` naming the option and the queue length, opens nothing, is counted in
 * `requests.queueFull` (and `failed`), and the queued ones are served when the slots free. Through a real `S3Client`
 * with the SDK's standard retry strategy (3 attempts), the rejection is final after one attempt.
 */
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { HttpRequest } from "@smithy/protocol-http";
import { isQueueFullError, type PoolStats } from "@sockeye/pool-monitor";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler, NodeHttpHandler } from "../../node-http-handler/src/index";
import { processFaultCapture } from "../../node-http-handler/test/process-fault-capture";
import { type HoldingServer, startHoldingServer } from "./holding-server";
import { UndiciHttpHandler } from "../src/index";

interface Handler {
  handle(request: HttpRequest, options?: object): Promise<{ response: { statusCode: number; body: any } }>;
  destroy(): void;
  getPoolStats(): PoolStats;
}

/** Connections (HTTP/2: stream slots of the one session) per origin. */
const SLOTS = 2;
const MAX_QUEUED = 3;

interface Lane {
  name: string;
  h2: boolean;
  /** What the message says a request waits for. */
  waitsFor: string;
  make(options: object): Handler;
}

const LANES: Lane[] = [
  {
    name: "NodeHttpHandler",
    h2: false,
    waitsFor: "socket",
    make: (o) => new NodeHttpHandler({ httpAgent: { maxSockets: SLOTS }, ...o }) as unknown as Handler,
  },
  {
    name: "UndiciHttpHandler",
    h2: false,
    waitsFor: "connection",
    make: (o) => new UndiciHttpHandler({ httpAgent: { maxSockets: SLOTS }, ...o }) as unknown as Handler,
  },
  {
    name: "NodeHttp2Handler",
    h2: true,
    waitsFor: "stream slot",
    make: (o) => new NodeHttp2Handler({ maxSessionsPerOrigin: 1, ...o } as never) as unknown as Handler,
  },
];

const capture = processFaultCapture();
let h1: HoldingServer;
let h2c: HoldingServer;
beforeAll(async () => {
  capture.install();
  h1 = await startHoldingServer("http1");
  h2c = await startHoldingServer("h2c", SLOTS);
});
afterAll(async () => {
  capture.uninstall();
  await h1.close();
  await h2c.close();
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  expect(capture.take()).toEqual({ uncaught: [], unhandled: [] });
});

function get(server: HoldingServer, path = "/"): HttpRequest {
  return new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port: server.port, method: "GET", path });
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !predicate(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!predicate()) throw new Error(`timed out waiting for ${what}`);
}

async function drain(body: any): Promise<string> {
  let text = "";
  for await (const chunk of body) text += chunk;
  return text;
}

/** The body of `response`, read as soon as it comes. */
async function text(response: Promise<{ response: { body: any } }>): Promise<string> {
  return drain((await response).response.body);
}

/** A handler of `lane` with one warm connection (HTTP/2: its session ready, stream limit known). */
async function warmHandler(lane: Lane, server: HoldingServer, options: object): Promise<Handler> {
  const handler = lane.make(options);
  cleanups.push(() => handler.destroy());
  const first = handler.handle(get(server));
  await until(() => server.held === 1, "the warm-up request");
  server.release();
  await drain((await first).response.body);
  // Its stream or socket is given back a moment after the body's end.
  await until(() => handler.getPoolStats().origins[0]?.inFlight === 0, "the warm-up request's end");
  return handler;
}

describe.each(LANES)("maxQueuedRequests on $name", (lane) => {
  const server = () => (lane.h2 ? h2c : h1);

  it("rejects the request beyond the bound at once, opens nothing for it, counts it; the queued ones are served", async () => {
    const s = server();
    const handler = await warmHandler(lane, s, { maxQueuedRequests: MAX_QUEUED });
    const receivedBefore = s.received;
    // Each body is read as soon as its response comes (an unread one would keep its slot).
    const admitted = Array.from({ length: SLOTS + MAX_QUEUED }, () => text(handler.handle(get(s))));
    await until(() => s.held === SLOTS, "the requests holding every slot");
    let threw: unknown;
    let refused: Promise<unknown> | undefined;
    try {
      refused = handler.handle(get(s));
    } catch (error) {
      threw = error;
    }
    expect(threw).toBeUndefined();
    const error = await refused!.then(
      () => undefined,
      (e: unknown) => e
    );
    expect(isQueueFullError(error)).toBe(true);
    expect(error).toMatchObject({ name: "QueueFullError", code: "ERR_SOCKEYE_QUEUE_FULL" });
    expect((error as Error).message).toBe(
      `${lane.h2 || lane.name === "NodeHttpHandler" ? "@sockeye/node-http-handler" : "@sockeye/undici-http-handler"} - the request was rejected at once: ${MAX_QUEUED} requests already wait for a free ${lane.waitsFor} of this origin (maxQueuedRequests=${MAX_QUEUED}). Raise maxQueuedRequests or maxSockets, or lower concurrency.`
    );
    const stats = handler.getPoolStats().origins[0];
    expect(stats.requests).toMatchObject({ queueFull: 1, failed: 1 });
    expect(stats.queued).toBe(MAX_QUEUED);
    // The queue drains: every admitted request is served, none beyond the first SLOTS reached the server early.
    expect(s.received - receivedBefore).toBe(SLOTS);
    for (let served = 0; served < admitted.length; ) {
      await until(() => s.held > 0, "a held request");
      served += s.release();
    }
    expect(await Promise.all(admitted)).toEqual(Array(admitted.length).fill("ok"));
    expect(s.received - receivedBefore).toBe(admitted.length);
    // Room again: the next request waits as usual.
    const next = handler.handle(get(s));
    await until(() => s.held === 1, "the next request");
    s.release();
    expect(await drain((await next).response.body)).toBe("ok");
    await until(() => handler.getPoolStats().origins[0].inFlight === 0, "the last request's end");
    expect(handler.getPoolStats().origins[0].requests).toMatchObject({
      started: 1 + admitted.length + 1 + 1,
      completed: 1 + admitted.length + 1,
      failed: 1,
      queueFull: 1,
    });
  });

  it("0: a request never waits; unset: the queue is unbounded", async () => {
    const s = server();
    const strict = await warmHandler(lane, s, { maxQueuedRequests: 0 });
    const holding = Array.from({ length: SLOTS }, () => text(strict.handle(get(s))));
    await until(() => s.held === SLOTS, "the requests holding every slot");
    await expect(strict.handle(get(s))).rejects.toThrow(/0 requests already wait .*\(maxQueuedRequests=0\)/);
    s.release();
    await Promise.all(holding);

    const unbounded = await warmHandler(lane, s, {});
    const many = Array.from({ length: SLOTS + 20 }, () => text(unbounded.handle(get(s))));
    await until(() => s.held === SLOTS, "the requests holding every slot");
    expect(unbounded.getPoolStats().origins[0].queued).toBe(20);
    for (let served = 0; served < many.length; ) {
      await until(() => s.held > 0, "a held request");
      served += s.release();
    }
    await Promise.all(many);
    expect(unbounded.getPoolStats().origins[0].requests.queueFull).toBe(0);
  });

  it("an S3Client with the standard retry strategy gets the rejection after one attempt", async () => {
    const s = server();
    const handler = await warmHandler(lane, s, { maxQueuedRequests: MAX_QUEUED });
    const s3 = new S3Client({
      region: "us-east-1",
      endpoint: s.origin,
      forcePathStyle: true,
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
      requestHandler: handler as never,
      retryMode: "standard",
      maxAttempts: 3,
    });
    cleanups.push(() => s3.destroy());
    const startedBefore = handler.getPoolStats().origins[0].requests.started;
    const admitted = Array.from({ length: SLOTS + MAX_QUEUED }, async (_, i) => {
      const out = await s3.send(new GetObjectCommand({ Bucket: "bucket", Key: `k${i}` }));
      return out.Body?.transformToString();
    });
    await until(() => s.held === SLOTS && handler.getPoolStats().origins[0].queued === MAX_QUEUED, "a full queue");
    const error = await s3.send(new GetObjectCommand({ Bucket: "bucket", Key: "refused" })).then(
      () => undefined,
      (e: unknown) => e
    );
    expect(isQueueFullError(error)).toBe(true);
    expect((error as { $metadata?: { attempts?: number } }).$metadata?.attempts).toBe(1);
    expect(handler.getPoolStats().origins[0].requests).toMatchObject({
      started: startedBefore + SLOTS + MAX_QUEUED + 1,
      queueFull: 1,
    });
    for (let served = 0; served < admitted.length; ) {
      await until(() => s.held > 0, "a held request");
      served += s.release();
    }
    expect(await Promise.all(admitted)).toEqual(Array(admitted.length).fill("ok"));
  });
});
