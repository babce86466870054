/**
 * The two bounds of a handler's resources, on the three Sockeye handlers, one table, real loopback servers that hold
 * every request until released (`holding-server.ts`; `/big` is 1 MiB, more than the socket buffers and HTTP/2's
 * stream window take):
 *
 * - `maxQueuedRequests`: a request that would wait beyond the bound rejects at once (a rejection of `handle()`, never
 *   a throw) with a one-line `QueueFullError` naming the option and the queue length, opens nothing, is counted in
 *   `requests.queueFull` (and `failed`), and the queued ones are served when the slots free. Through a real
 *   `S3Client` with the SDK's standard retry strategy (3 attempts), the rejection is final after one attempt.
 * - `unreadBodyTimeout` (one connection; HTTP/2: one stream slot): a body handed out and never read is destroyed at
 *   the deadline, its connection (stream slot) goes to the request waiting behind it, and a later read (the SDK's
 *   `transformToString()`, `for await`) fails with the one-line error naming the option; a body whose reading
 *   started in time is never touched, however slowly it is read. Under vitest's default fake timers (as users run
 *   them) the deadline fires exactly when the fake clock reaches it, and another unread body adds no timer.
 */
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { sdkStreamMixin } from "@smithy/core/serde";
import { HttpRequest } from "@smithy/protocol-http";
import { isQueueFullError, isSockeyeTimeoutError, type PoolStats } from "@sockeye/pool-monitor";
import type { Readable } from "node:stream";
import { Agent, type Dispatcher, setGlobalDispatcher } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { NodeHttp2Handler, NodeHttpHandler } from "../../node-http-handler/src/index";
import { processFaultCapture } from "../../node-http-handler/test/process-fault-capture";
import { BIG_BODY_BYTES, type HoldingServer, startHoldingServer } from "./holding-server";
import { UndiciHttpHandler } from "../src/index";

// Captured before any test fakes them: the test's own waits turn the real event loop.
const realSetTimeout = globalThis.setTimeout;

interface Handler {
  handle(request: HttpRequest, options?: object): Promise<{ response: { statusCode: number; body: Readable } }>;
  destroy(): void;
  getPoolStats(): PoolStats;
}

/** Connections (HTTP/2: stream slots of the one session) per origin in the `maxQueuedRequests` rows. */
const SLOTS = 2;
const MAX_QUEUED = 3;

interface Lane {
  name: string;
  h2: boolean;
  prefix: string;
  /** What the queue-full message says a request waits for. */
  waitsFor: string;
  /** A handler with `slots` connections (HTTP/2: one session; the server announces the stream slots). */
  make(slots: number, options: object): Handler;
}

const LANES: Lane[] = [
  {
    name: "NodeHttpHandler",
    h2: false,
    prefix: "@sockeye/node-http-handler",
    waitsFor: "socket",
    make: (slots, o) => new NodeHttpHandler({ httpAgent: { maxSockets: slots }, ...o }) as unknown as Handler,
  },
  {
    name: "UndiciHttpHandler",
    h2: false,
    prefix: "@sockeye/undici-http-handler",
    waitsFor: "connection",
    make: (slots, o) => new UndiciHttpHandler({ httpAgent: { maxSockets: slots }, ...o }) as unknown as Handler,
  },
  {
    name: "NodeHttp2Handler",
    h2: true,
    prefix: "@sockeye/node-http-handler",
    waitsFor: "stream slot",
    make: (_slots, o) => new NodeHttp2Handler({ maxSessionsPerOrigin: 1, ...o } as never) as unknown as Handler,
  },
];

const capture = processFaultCapture();
let h1: HoldingServer;
/** Announces `SLOTS` streams per session. */
let h2c: HoldingServer;
/** Announces one stream per session. */
let h2cOne: HoldingServer;
beforeAll(async () => {
  capture.install();
  h1 = await startHoldingServer("http1");
  h2c = await startHoldingServer("h2c", SLOTS);
  h2cOne = await startHoldingServer("h2c", 1);
});
afterAll(async () => {
  capture.uninstall();
  await Promise.all([h1.close(), h2c.close(), h2cOne.close()]);
});

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const fn of cleanups.splice(0).reverse()) await fn();
  expect(capture.take()).toEqual({ uncaught: [], unhandled: [] });
});

function get(server: HoldingServer, path = "/"): HttpRequest {
  return new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port: server.port, method: "GET", path });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}

async function until(predicate: () => boolean, what: string, capMs = 5000): Promise<void> {
  const end = performance.now() + capMs;
  while (!predicate()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
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
  const handler = lane.make(SLOTS, options);
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
      `${lane.prefix} - the request was rejected at once: ${MAX_QUEUED} requests already wait for a free ${lane.waitsFor} of this origin (maxQueuedRequests=${MAX_QUEUED}). Raise maxQueuedRequests or maxSockets, or lower concurrency.`
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

  it("a cold pool: requests that get a connection being opened (HTTP/2: a session's expected slots) are not waiting", async () => {
    const s = server();
    const handler = lane.make(SLOTS, { maxQueuedRequests: 0 });
    cleanups.push(() => handler.destroy());
    const first = Array.from({ length: SLOTS }, () => text(handler.handle(get(s))));
    await until(() => s.held === SLOTS, "the first requests");
    s.release();
    expect(await Promise.all(first)).toEqual(Array(SLOTS).fill("ok"));
    expect(handler.getPoolStats().origins[0].requests.queueFull).toBe(0);
  });

  it("updateHttpClientConfig() sets the bound for the requests started after it", async () => {
    const s = server();
    const handler = (await warmHandler(lane, s, {})) as Handler & {
      updateHttpClientConfig(k: string, v: unknown): void;
    };
    handler.updateHttpClientConfig("maxQueuedRequests", 1);
    const admitted = Array.from({ length: SLOTS + 1 }, () => text(handler.handle(get(s))));
    await until(() => s.held === SLOTS && handler.getPoolStats().origins[0].queued === 1, "a full queue");
    await expect(handler.handle(get(s))).rejects.toThrow(/\(maxQueuedRequests=1\)/);
    expect(() => handler.updateHttpClientConfig("maxQueuedRequests", -1)).toThrow(/maxQueuedRequests/);
    for (let served = 0; served < admitted.length; ) {
      await until(() => s.held > 0, "a held request");
      served += s.release();
    }
    expect(await Promise.all(admitted)).toEqual(Array(admitted.length).fill("ok"));
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

/** Swaps the global undici dispatcher slots for the test; `cleanups` puts the user's (or none) back. */
function setGlobal(dispatcher: Dispatcher): void {
  const g = globalThis as unknown as Record<symbol, unknown>;
  const slots = [Symbol.for("undici.globalDispatcher.1"), Symbol.for("undici.globalDispatcher.2")];
  const saved = slots.map((slot) => g[slot]);
  cleanups.push(() => {
    for (const [i, slot] of slots.entries()) g[slot] = saved[i];
  });
  setGlobalDispatcher(dispatcher);
}

describe("maxQueuedRequests on UndiciHttpHandler with a dispatcher it does not own (its queue is undici's)", () => {
  type Updatable = UndiciHttpHandler & { updateHttpClientConfig(k: string, v: unknown): void };

  /** The text of a response of `handler` to `get(h1)`, read as soon as it comes. */
  async function textOf(handler: UndiciHttpHandler): Promise<string> {
    return drain((await handler.handle(get(h1))).response.body);
  }

  /** Sends one request through `handler` and answers it. */
  async function served(handler: UndiciHttpHandler): Promise<string> {
    const response = textOf(handler);
    await until(() => h1.held === 1, "the request");
    h1.release();
    return response;
  }

  it("a caller's dispatcher: a bound through updateHttpClientConfig() is the constructor's one-line error, before and after the first request, and changes nothing", async () => {
    const dispatcher = new Agent({ connections: SLOTS });
    const handler = new UndiciHttpHandler({ dispatcher }) as Updatable;
    cleanups.push(() => handler.destroy());
    cleanups.push(() => h1.release());
    const error = "invalid option maxQueuedRequests: 1; expected no bound with a caller's dispatcher";
    expect(() => handler.updateHttpClientConfig("maxQueuedRequests", 1)).toThrow(error);
    expect(await served(handler)).toBe("ok");
    expect(() => handler.updateHttpClientConfig("maxQueuedRequests", 1)).toThrow(error);
    expect(() => handler.updateHttpClientConfig("maxQueuedRequests", 1)).toThrow(/^[^\n]*$/);
    expect(handler.httpHandlerConfigs().maxQueuedRequests).toBeUndefined();
    // Unbounded is what it is: accepted, and the caller's dispatcher still serves.
    handler.updateHttpClientConfig("maxQueuedRequests", Number.POSITIVE_INFINITY);
    expect(await served(handler)).toBe("ok");
  });

  it("a global dispatcher the user set is never bypassed nor silently unbounded: with a bound, handle() rejects with a one-line error naming the option and sends nothing", async () => {
    const global = new Agent({ connections: SLOTS });
    setGlobal(global);
    cleanups.push(() => global.close());
    const error =
      /invalid option maxQueuedRequests: 3; expected no bound while requests go through the global dispatcher the user set \(setGlobalDispatcher; [^\n]*\)/;
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} };
    const bounded = new UndiciHttpHandler({
      maxQueuedRequests: MAX_QUEUED,
      httpAgent: { maxSockets: SLOTS },
      logger,
    }) as Updatable;
    cleanups.push(() => bounded.destroy());
    cleanups.push(() => h1.release());
    const received = h1.received;
    for (let i = 0; i < 2; i++) await expect(bounded.handle(get(h1))).rejects.toThrow(error);
    expect(h1.received).toBe(received);
    // Without the bound, the same handler follows the global dispatcher.
    bounded.updateHttpClientConfig("maxQueuedRequests", undefined);
    expect(await served(bounded)).toBe("ok");
    expect(h1.received).toBe(received + 1);
    expect(warnings).toEqual([
      expect.stringContaining("httpAgent / httpsAgent options (maxSockets, TLS) do not apply"),
    ]);
    // While it follows it, a bound set later throws now and changes nothing.
    expect(() => bounded.updateHttpClientConfig("maxQueuedRequests", MAX_QUEUED)).toThrow(error);
    expect(await served(bounded)).toBe("ok");
    // Once the global dispatcher is undici's default again, the handler's own Agent and gate take the bound.
    setGlobalDispatcher(new Agent());
    bounded.updateHttpClientConfig("maxQueuedRequests", 0);
    const held = Array.from({ length: SLOTS }, () => textOf(bounded));
    await until(() => h1.held === SLOTS, "the requests holding every connection");
    await expect(bounded.handle(get(h1))).rejects.toSatisfy(isQueueFullError);
    h1.release();
    expect(await Promise.all(held)).toEqual(Array(SLOTS).fill("ok"));
  });
});

async function bytesOf(body: AsyncIterable<Buffer>): Promise<number> {
  let n = 0;
  for await (const chunk of body) n += chunk.length;
  return n;
}

/** The one-line error a later read gets. */
function unreadMessage(lane: Lane, ms: number): string {
  return `${lane.prefix} - the response body was not read within unreadBodyTimeout=${ms} ms, so it was destroyed and its connection freed.`;
}

/** `/big` answered and its response handed out (the server then holds nothing). */
async function bigResponse(handler: Handler, s: HoldingServer): Promise<Readable> {
  const pending = handler.handle(get(s, "/big"));
  await until(() => s.held === 1, "the /big request");
  s.release();
  return (await pending).response.body;
}

describe.each(LANES)("unreadBodyTimeout on $name", (lane) => {
  const server = () => (lane.h2 ? h2cOne : h1);

  it("destroys a body nobody reads at the deadline, frees its connection for the next request; a later read errors", async () => {
    const s = server();
    const handler = lane.make(1, { unreadBodyTimeout: 200 });
    cleanups.push(() => handler.destroy());
    const unread = await bigResponse(handler, s);
    const handedOutAt = performance.now();
    const next = handler.handle(get(s));
    await sleep(50);
    expect(s.held).toBe(0); // waits behind the unread body
    await until(() => s.held === 1, "the next request to get the connection");
    expect(performance.now() - handedOutAt).toBeGreaterThanOrEqual(190);
    s.release();
    const text = await sdkStreamMixin((await next).response.body).transformToString();
    expect(text).toBe("ok");
    // The SDK's reader (pipe + 'error'), then for await: both get the one-line error.
    const error = await sdkStreamMixin(unread)
      .transformToString()
      .then(
        () => undefined,
        (e: unknown) => e
      );
    expect((error as Error).message).toBe(unreadMessage(lane, 200));
    expect(isSockeyeTimeoutError(error) && error.deadline).toBe("unread_body");
    await expect(bytesOf(unread)).rejects.toThrow(unreadMessage(lane, 200));
    await until(() => handler.getPoolStats().origins[0].inFlight === 0, "both requests' end");
    const stats = handler.getPoolStats().origins[0];
    expect(stats.requests).toMatchObject({ started: 2, completed: 1, timedOut: 1 });
    // HTTP/2: only the stream was reset; the session serves on. Node 22's server (one stream per session here) may
    // still count the reset stream when the next one arrives and refuse it: that session is then retired ("local")
    // and a fresh one serves the request, which the assertions above already saw succeed.
    if (lane.h2) {
      const h2 = stats.http2;
      expect([1, 2]).toContain(h2?.sessionsCreated);
      expect(h2?.closed.local).toBe((h2?.sessionsCreated ?? 0) - 1);
      expect(h2?.sessionsOpen).toBe(1);
    }
  });

  it("never fires once reading started, however slowly the rest is read", async () => {
    const s = server();
    const handler = lane.make(1, { unreadBodyTimeout: 100 });
    cleanups.push(() => handler.destroy());
    const body = await bigResponse(handler, s);
    const chunks = body[Symbol.asyncIterator]();
    const first = await chunks.next();
    let n = (first.value as Buffer).length;
    await sleep(300);
    for (let c = await chunks.next(); !c.done; c = await chunks.next()) n += (c.value as Buffer).length;
    expect(n).toBe(BIG_BODY_BYTES);
    await until(() => handler.getPoolStats().origins[0].inFlight === 0, "the request's end");
    expect(handler.getPoolStats().origins[0].requests).toMatchObject({ completed: 1, timedOut: 0 });
  });

  it("under vitest's default fake timers: fires when the fake clock reaches it, on the handler's one timer", async () => {
    vi.useFakeTimers();
    const s = server();
    const handler = lane.make(1, { unreadBodyTimeout: 1000 });
    cleanups.push(() => handler.destroy());
    const unread = await bigResponse(handler, s);
    const timers = vi.getTimerCount();
    vi.advanceTimersByTime(999);
    await sleep(20);
    expect(handler.getPoolStats().origins[0].requests.timedOut).toBe(0);
    vi.advanceTimersByTime(1);
    await until(() => handler.getPoolStats().origins[0].inFlight === 0, "the unread request's end");
    expect(handler.getPoolStats().origins[0].requests.timedOut).toBe(1);
    await expect(sdkStreamMixin(unread).transformToString()).rejects.toThrow(unreadMessage(lane, 1000));
    // Another unread body: its deadline adds no native timer (the handler's scheduler has one).
    const again = await bigResponse(handler, s);
    expect(vi.getTimerCount()).toBeLessThanOrEqual(timers);
    vi.advanceTimersByTime(1000);
    await until(() => handler.getPoolStats().origins[0].requests.timedOut === 2, "the second unread body");
    await expect(bytesOf(again)).rejects.toThrow(unreadMessage(lane, 1000));
  });
});
