/**
 * One unread HTTP/2 response body (issue 36, item 2), Sockeye's `NodeHttp2Handler` side by side with upstream's
 * (`@smithy/node-http-handler` 4.14.2), default options (4 sessions) against loopback servers that announce 4
 * streams per session. A 32 MiB body is left unread while other requests go to the same origin:
 *
 * - a flow-controlled server (`/paced`): Node's client returns connection-level credit as DATA arrives, so only the
 *   unread stream waits and the other streams of the same session complete, on both handlers;
 * - a server that queues the unread remainder on its connection (`/large`, Node's server past `maxSessionMemory`)
 *   refuses every new stream there with ENHANCE_YOUR_CALM: upstream's requests fail, Sockeye's run on another session.
 *
 * Then the unread body is read in full: it only waited. Every wait is bounded, so a regression fails rather than hangs.
 */
import { NodeHttp2Handler as UpstreamNodeHttp2Handler } from "@smithy/node-http-handler";
import type { HttpRequest, HttpResponse } from "@smithy/protocol-http";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler } from "../../src/index";
import { CA, type H2TestServer, h2Request, outcome, readBody, startH2Server, waitFor } from "./h2-servers";

const BIG = 32 * 1024 * 1024;
const BOUND_MS = 5000;

type Handler = NodeHttp2Handler | UpstreamNodeHttp2Handler;

let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server({ settings: { maxConcurrentStreams: 4 } });
});
afterAll(async () => {
  await server.close();
});

function get(path: string, body?: unknown): HttpRequest {
  return h2Request(server, path, body === undefined ? {} : { method: "POST", body });
}

/** `promise`, or a rejection once `ms` passed (so that a stall fails the test instead of hanging it). */
function bounded<T>(promise: Promise<T>, ms = BOUND_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

/** Sends `path` and reads the body (bounded). */
async function fetchText(handler: Handler, path: string): Promise<string> {
  const { response } = await bounded(handler.handle(get(path)));
  return bounded(readBody(response.body));
}

/**
 * Sends `path` and resolves with the response, its body unread, once the body's flow-control window is full. Flow
 * control holds the rest at the server: what the client buffers stays within a few windows.
 */
async function unread(handler: Handler, path: string): Promise<HttpResponse> {
  const { response } = await bounded(handler.handle(get(path)));
  const body = response.body as Readable;
  await waitFor(() => body.readableLength >= 65535, BOUND_MS);
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(body.readableLength).toBeLessThan(512 * 1024);
  return response;
}

async function readAllBytes(body: Readable): Promise<number> {
  let n = 0;
  for await (const chunk of body) n += (chunk as Buffer).length;
  return n;
}

function newHandler(which: "sockeye" | "upstream", options: Record<string, unknown> = {}): Handler {
  const config = { nodeHttp2ConnectOptions: { ca: CA }, ...options };
  return which === "sockeye" ? new NodeHttp2Handler(config) : new UpstreamNodeHttp2Handler(config);
}

async function drained(handler: NodeHttp2Handler): Promise<void> {
  handler.destroy();
  await waitFor(() => handler.getPoolStats().totals.inFlight === 0 && server.sessionsOpen === 0, BOUND_MS);
}

describe("NodeHttp2Handler: one unread 32 MiB body (issue 36)", () => {
  it.each(["sockeye", "upstream"] as const)(
    "%s: a flow-controlled server keeps the other streams of the same session flowing; the unread body reads in full",
    async (which) => {
      const handler = newHandler(which);
      const accepted = server.sessionsAccepted;
      try {
        const big = await unread(handler, `/paced?bytes=${BIG}`);
        // Concurrent and then sequential streams, while the big one still waits for its reader.
        const concurrent = await Promise.all([1, 2, 3].map(() => fetchText(handler, "/echo")));
        for (const text of concurrent) expect(JSON.parse(text).path).toBe("/echo");
        for (let i = 0; i < 5; i++) expect(await fetchText(handler, "/large?bytes=100000")).toHaveLength(100000);
        expect(server.sessionsAccepted - accepted).toBe(1);
        expect(await bounded(readAllBytes(big.body as Readable), 20_000)).toBe(BIG);
      } finally {
        if (handler instanceof NodeHttp2Handler) await drained(handler);
        else handler.destroy();
      }
    },
    30_000
  );

  it("sockeye: a server that refuses new streams while the body is unread: they run on another session", async () => {
    const handler = newHandler("sockeye") as NodeHttp2Handler;
    const accepted = server.sessionsAccepted;
    try {
      const big = await unread(handler, `/large?bytes=${BIG}`);
      const concurrent = await Promise.all([1, 2, 3].map(() => fetchText(handler, "/echo")));
      for (const text of concurrent) expect(JSON.parse(text).path).toBe("/echo");
      for (let i = 0; i < 5; i++) expect(await fetchText(handler, "/large?bytes=100000")).toHaveLength(100000);
      expect(server.sessionsAccepted - accepted).toBe(2);
      expect(await bounded(readAllBytes(big.body as Readable), 20_000)).toBe(BIG);
      // Its stream ended: the first session takes streams again (first fit), no third session.
      for (let i = 0; i < 5; i++) expect(JSON.parse(await fetchText(handler, "/echo")).path).toBe("/echo");
      expect(server.sessionsAccepted - accepted).toBe(2);
    } finally {
      await drained(handler);
    }
  }, 30_000);

  it("upstream: the same server refuses the next streams and upstream's requests fail", async () => {
    const handler = newHandler("upstream");
    try {
      const big = await unread(handler, `/large?bytes=${BIG}`);
      const results = await Promise.all([1, 2, 3].map(() => outcome(fetchText(handler, "/echo"))));
      for (const result of results) {
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.error.message).toContain("NGHTTP2_ENHANCE_YOUR_CALM");
      }
      (big.body as Readable).destroy();
    } finally {
      handler.destroy();
    }
  }, 30_000);

  it("sockeye: with one session, a refused request waits for it and runs once the unread body was read", async () => {
    const handler = newHandler("sockeye", { maxSessionsPerOrigin: 1 }) as NodeHttp2Handler;
    try {
      const big = await unread(handler, `/large?bytes=${BIG}`);
      const small = handler.handle(get("/echo"));
      // Refused once, then it waits for the session (counted queued) instead of failing.
      await waitFor(() => handler.getPoolStats().totals.queued === 1, BOUND_MS);
      expect(handler.getPoolStats().origins[0].http2?.streamsRefused).toBe(1);
      expect(await bounded(readAllBytes(big.body as Readable), 20_000)).toBe(BIG);
      const { response } = await bounded(small);
      expect(JSON.parse(await readBody(response.body)).path).toBe("/echo");
    } finally {
      await drained(handler);
    }
  }, 30_000);
});

describe("NodeHttp2Handler: a stream the server refuses (REFUSED_STREAM) before answering", () => {
  it("is placed again 3 times, then fails with the error upstream gives at once", async () => {
    const upstream = newHandler("upstream");
    const sockeye = newHandler("sockeye") as NodeHttp2Handler;
    try {
      let before = server.paths.length;
      const theirs = await outcome(bounded(upstream.handle(get("/refuse"))));
      expect(server.paths.length - before).toBe(1);
      before = server.paths.length;
      const ours = await outcome(bounded(sockeye.handle(get("/refuse"))));
      expect(server.paths.length - before).toBe(4);
      expect(sockeye.getPoolStats().origins[0].http2?.streamsRefused).toBe(4);
      expect(theirs.ok).toBe(false);
      expect(ours.ok).toBe(false);
      if (!theirs.ok && !ours.ok) {
        expect(ours.error.message).toBe(theirs.error.message);
        expect((ours.error as { code?: string }).code).toBe((theirs.error as { code?: string }).code);
      }
      // The refusing session serves the next request.
      expect(JSON.parse(await fetchText(sockeye, "/echo")).path).toBe("/echo");
    } finally {
      upstream.destroy();
      await drained(sockeye);
    }
  });

  const bodies: [string, number, () => unknown][] = [
    ["a string body", 4, () => "payload"],
    ["a Buffer body", 4, () => Buffer.from("payload")],
    ["a Readable body (consumed as it is sent)", 1, () => Readable.from([Buffer.from("payload")])],
  ];
  it.each(bodies)("with %s: sent %i time(s)", async (_name, times, body) => {
    const handler = newHandler("sockeye") as NodeHttp2Handler;
    try {
      const before = server.paths.length;
      const result = await outcome(bounded(handler.handle(get("/refuse", body()))));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toContain("NGHTTP2_REFUSED_STREAM");
      expect(server.paths.length - before).toBe(times);
      // Each refusal counted, sent again or not.
      expect(handler.getPoolStats().origins[0].http2?.streamsRefused).toBe(times);
    } finally {
      await drained(handler);
    }
  });

  // ENHANCE_YOUR_CALM does not promise the stream went unprocessed (RFC 9113 §8.7): only an idempotent method is resent.
  const calm: [string, number][] = [
    ["GET", 4],
    ["PUT", 4],
    ["POST", 1],
  ];
  it.each(calm)("refused with ENHANCE_YOUR_CALM, a %s request is sent %i time(s)", async (method, times) => {
    const handler = newHandler("sockeye") as NodeHttp2Handler;
    try {
      const before = server.paths.length;
      const request = h2Request(server, "/calm", method === "GET" ? {} : { method, body: "payload" });
      const result = await outcome(bounded(handler.handle(request)));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.message).toContain("NGHTTP2_ENHANCE_YOUR_CALM");
      expect(server.paths.length - before).toBe(times);
      expect(handler.getPoolStats().origins[0].http2?.streamsRefused).toBe(times);
    } finally {
      await drained(handler);
    }
  });
});
