/**
 * `unreadBodyTimeout` on the three Sockeye handlers, one table, real loopback servers (`holding-server.ts`; `/big` is
 * 1 MiB, more than the socket buffers and HTTP/2's stream window take) and one connection (HTTP/2: one stream slot):
 * a body handed out and never read is destroyed at the deadline, its connection (stream slot) goes to the request
 * waiting behind it, and a later read (the SDK's `transformToString()`, `for await`) fails with the one-line error
 * naming the option; a body whose reading started in time is never touched, however slowly it is read. Under
 * vitest's default fake timers (as users run them) the deadline fires exactly when the fake clock reaches it, and
 * more unread bodies add no timer.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { sdkStreamMixin } from "@smithy/core/serde";
import { isSockeyeTimeoutError, type PoolStats } from "@sockeye/pool-monitor";
import type { Readable } from "node:stream";
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

interface Lane {
  name: string;
  h2: boolean;
  prefix: string;
  make(options: object): Handler;
}

const LANES: Lane[] = [
  {
    name: "NodeHttpHandler",
    h2: false,
    prefix: "@sockeye/node-http-handler",
    make: (o) => new NodeHttpHandler({ httpAgent: { maxSockets: 1 }, ...o }) as unknown as Handler,
  },
  {
    name: "UndiciHttpHandler",
    h2: false,
    prefix: "@sockeye/undici-http-handler",
    make: (o) => new UndiciHttpHandler({ httpAgent: { maxSockets: 1 }, ...o }) as unknown as Handler,
  },
  {
    name: "NodeHttp2Handler",
    h2: true,
    prefix: "@sockeye/node-http-handler",
    make: (o) => new NodeHttp2Handler({ maxSessionsPerOrigin: 1, ...o } as never) as unknown as Handler,
  },
];

const capture = processFaultCapture();
let h1: HoldingServer;
let h2c: HoldingServer;
beforeAll(async () => {
  capture.install();
  h1 = await startHoldingServer("http1");
  h2c = await startHoldingServer("h2c", 1);
});
afterAll(async () => {
  capture.uninstall();
  await h1.close();
  await h2c.close();
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
  const server = () => (lane.h2 ? h2c : h1);

  it("destroys a body nobody reads at the deadline, frees its connection for the next request; a later read errors", async () => {
    const s = server();
    const handler = lane.make({ unreadBodyTimeout: 200 });
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
    // HTTP/2: only the stream was reset; the session serves on.
    if (lane.h2) expect(stats.http2?.sessionsCreated).toBe(1);
  });

  it("never fires once reading started, however slowly the rest is read", async () => {
    const s = server();
    const handler = lane.make({ unreadBodyTimeout: 100 });
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
    const handler = lane.make({ unreadBodyTimeout: 1000 });
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
