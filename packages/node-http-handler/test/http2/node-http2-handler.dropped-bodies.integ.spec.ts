/**
 * Issue 36's HTTP/2 cells, through `handle()` and through a real `S3Client`: default options (4 sessions) against a
 * loopback server that announces 4 streams per session, 16 responses whose body the caller drops with no reference
 * kept, a full garbage collection, then one more request. Sockeye's `NodeHttp2Handler` serves it (at once when the
 * small bodies were received in full, else once the collected bodies are reclaimed: their streams reset with CANCEL),
 * counts the reclaimed bodies in `getPoolStats()` and on the `sockeye:body:reclaimed` channel, and leaves nothing in
 * flight; upstream's never serves it (bounded by an abort). A body the caller holds is never touched: read after many
 * collections and other traffic, it reads in full, byte-exact.
 *
 * The 32 MiB bodies come from a flow-controlled route (`/paced`, as real servers send); `/large` queues the unread
 * rest on the connection, so Node's server refuses new streams there: a dropped body reclaimed frees that too.
 * Real servers on 127.0.0.1; `gc()` through `collectGarbage()` (the flag is set at run time).
 */
import { GetObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttp2Handler as UpstreamNodeHttp2Handler } from "@smithy/node-http-handler";
import type { HttpRequest } from "@smithy/protocol-http";
import type { PoolStats } from "@sockeye/pool-monitor";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  collectUntil,
  collectUntilSettled,
  digest,
  dropResponses,
  listenReclaims,
} from "../../../pool-monitor/test/dropped-bodies";
import { collectGarbage } from "../../../pool-monitor/test/heap-after-gc";
import { NodeHttp2Handler } from "../../src/index";
import { CA, type H2TestServer, h2Request, startH2Server, waitFor } from "./h2-servers";

const KIB = 1024;
const MIB = 1024 * KIB;
const SESSIONS = 4;
const STREAMS = 4;
const DROPPED = SESSIONS * STREAMS;

let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server({ settings: { maxConcurrentStreams: STREAMS } });
});
afterAll(async () => {
  await server.close();
});

function request(path: string): HttpRequest {
  return h2Request(server, path);
}

/** What `/large` and `/paced` send: "abcdefghij" repeated. */
function expected(size: number): { sha: string; bytes: number } {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i < size; i++) bytes[i] = 97 + (i % 10);
  return { sha: createHash("sha256").update(bytes).digest("hex"), bytes: size };
}

function originStats(stats: PoolStats) {
  return stats.origins.find((o) => o.origin === `https://localhost:${server.port}`);
}

function newHandler(options: Record<string, unknown> = {}): NodeHttp2Handler {
  return new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA }, ...options });
}

const CELLS = [
  // Received in full into the body's buffer: the stream closed and freed its slot at once, nothing to reclaim.
  { label: "1 KiB", size: KIB, path: `/large?bytes=${KIB}`, reclaimed: 0 },
  // Still on the wire: each pins its stream slot until its body is collected and reclaimed.
  { label: "32 MiB", size: 32 * MIB, path: `/paced?bytes=${32 * MIB}`, reclaimed: DROPPED },
];

describe(`NodeHttp2Handler: ${DROPPED} responses dropped unread on ${SESSIONS} sessions × ${STREAMS} streams`, () => {
  for (const cell of CELLS) {
    it(`${cell.label}: the next request is served after gc(); ${cell.reclaimed} bodies reclaimed, counted and announced`, async () => {
      const handler = newHandler();
      const reclaims = listenReclaims();
      try {
        await dropResponses(handler, () => request(cell.path), DROPPED);
        const next = handler.handle(request(cell.path));
        expect(await collectUntilSettled(next, 50)).toBe(true);
        const { response } = await next;
        expect(await digest(response.body)).toEqual(expected(cell.size));
        await collectUntil(() => originStats(handler.getPoolStats())?.bodiesReclaimed, cell.reclaimed);
        const o = originStats(handler.getPoolStats());
        expect(o?.bodiesReclaimed).toBe(cell.reclaimed);
        expect(o?.requests.started).toBe(DROPPED + 1);
        expect(o?.http2?.sessionsOpen).toBeLessThanOrEqual(SESSIONS);
        expect(reclaims.events).toEqual(
          Array(cell.reclaimed).fill({ type: "body:reclaimed", origin: `https://localhost:${server.port}` })
        );
        // Nothing left: no request in flight, no deadline armed, no stream open on the server.
        await waitFor(() => handler.getPoolStats().totals.inFlight === 0 && server.openStreams === 0);
        expect((handler as any).pool.sharedScheduler.size).toBe(0);
      } finally {
        reclaims.stop();
        handler.destroy();
      }
    }, 60_000);
  }

  it("a held body is never reclaimed: read after many gc() and other traffic, it reads in full, byte-exact", async () => {
    const handler = newHandler();
    try {
      const size = 32 * MIB;
      const { response } = await handler.handle(request(`/paced?bytes=${size}`));
      const held: Readable = response.body;
      for (let i = 0; i < 10; i++) {
        await collectGarbage();
        // Other traffic on the same session meanwhile.
        const { response: other } = await handler.handle(request(`/large?bytes=${KIB}`));
        expect(await digest(other.body)).toEqual(expected(KIB));
      }
      expect(await digest(held)).toEqual(expected(size));
      expect(originStats(handler.getPoolStats())?.bodiesReclaimed).toBe(0);
      await waitFor(() => handler.getPoolStats().totals.inFlight === 0);
    } finally {
      handler.destroy();
    }
  }, 60_000);

  it("destroying a body, or leaving a for await early, resets its stream at once; an error reaches the body's listener", async () => {
    const handler = newHandler();
    try {
      const path = `/paced?bytes=${32 * MIB}`;
      const first = (await handler.handle(request(path))).response.body as Readable;
      await waitFor(() => server.openStreams === 1);
      first.destroy();
      await waitFor(() => server.openStreams === 0 && handler.getPoolStats().totals.inFlight === 0);
      const second = (await handler.handle(request(path))).response.body as Readable;
      const seen: Error[] = [];
      second.on("error", (error) => seen.push(error));
      second.destroy(new Error("caller gave up"));
      await waitFor(() => server.openStreams === 0 && handler.getPoolStats().totals.inFlight === 0);
      expect(seen.map((e) => e.message)).toEqual(["caller gave up"]);
      const third = (await handler.handle(request(path))).response.body as Readable;
      for await (const chunk of third) {
        expect((chunk as Buffer).length).toBeGreaterThan(0);
        break;
      }
      await waitFor(() => server.openStreams === 0 && handler.getPoolStats().totals.inFlight === 0);
      expect(originStats(handler.getPoolStats())?.bodiesReclaimed).toBe(0);
    } finally {
      handler.destroy();
    }
  }, 30_000);

  it("a dropped body on a session that refuses new streams: once reclaimed, the waiting request is served", async () => {
    const handler = newHandler({ maxSessionsPerOrigin: 1 });
    try {
      await dropResponses(handler, () => request(`/large?bytes=${32 * MIB}`), 1);
      const next = handler.handle(request(`/large?bytes=${KIB}`));
      expect(await collectUntilSettled(next, 50)).toBe(true);
      const { response } = await next;
      expect(await digest(response.body)).toEqual(expected(KIB));
      const o = originStats(handler.getPoolStats());
      expect(o?.bodiesReclaimed).toBe(1);
      // Node's server never takes back the memory of the reset stream's queued body: the session that still refuses
      // once its last stream ended is retired, and a fresh one serves the request.
      expect(o?.http2?.sessionsCreated).toBe(2);
    } finally {
      handler.destroy();
    }
  }, 60_000);
});

describe(`upstream NodeHttp2Handler: ${DROPPED} responses dropped unread`, () => {
  /** Upstream, after one request (so that its session knows the server's stream limit: a stream opened beyond it
   * before the server's SETTINGS arrived is refused with REFUSED_STREAM). */
  async function upstreamHandler(): Promise<UpstreamNodeHttp2Handler> {
    const handler = new UpstreamNodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } } as any);
    const { response } = await handler.handle(request(`/large?bytes=${KIB}`));
    expect(await digest(response.body)).toEqual(expected(KIB));
    return handler;
  }

  it("1 KiB: the next request is served (Node frees a stream's slot at END_STREAM; upstream counts none)", async () => {
    const handler = await upstreamHandler();
    try {
      await dropResponses(handler, () => request(`/large?bytes=${KIB}`), DROPPED);
      const { response } = await handler.handle(request(`/large?bytes=${KIB}`), {
        abortSignal: AbortSignal.timeout(1000) as any,
      });
      expect(await digest(response.body)).toEqual(expected(KIB));
    } finally {
      handler.destroy();
    }
  }, 30_000);

  it(`32 MiB: the ${DROPPED} never all resolve, and the next request after gc() is not served (bounded at 1 s)`, async () => {
    const handler = await upstreamHandler();
    try {
      const signal = AbortSignal.timeout(1000);
      await expect(
        dropResponses(handler, () => request(`/paced?bytes=${32 * MIB}`), DROPPED, { abortSignal: signal })
      ).rejects.toMatchObject({
        name: "AbortError",
      });
      await collectGarbage();
      const next = handler.handle(request(`/large?bytes=${KIB}`), { abortSignal: AbortSignal.timeout(1000) as any });
      // Aborted while it waits, or refused by the server (ENHANCE_YOUR_CALM): never served.
      await expect(next).rejects.toBeInstanceOf(Error);
    } finally {
      handler.destroy();
    }
  }, 30_000);
});

describe("a real S3Client GetObjectCommand over NodeHttp2Handler, Body dropped", () => {
  /** Answers every GET like S3's GetObject: 200, object headers, the object's bytes (flow-controlled). */
  let s3: http2.Http2SecureServer;
  let endpoint = "";
  const OBJECT = 32 * MIB;
  beforeAll(async () => {
    const key = readFileSync(join(__dirname, "..", "fixtures", "localhost-key.pem"));
    s3 = http2.createSecureServer({ key, cert: CA, settings: { maxConcurrentStreams: STREAMS } });
    s3.on("stream", (stream) => {
      stream.on("error", () => {});
      stream.respond({
        ":status": 200,
        "content-type": "application/octet-stream",
        "content-length": String(OBJECT),
        etag: '"0123456789abcdef0123456789abcdef"',
        "last-modified": new Date(0).toUTCString(),
        "x-amz-request-id": "H2DROPPED",
      });
      const chunk = Buffer.alloc(64 * KIB, 120);
      let sent = 0;
      const more = (): void => {
        while (sent < OBJECT && !stream.destroyed) {
          sent += chunk.length;
          if (!stream.write(chunk)) return void stream.once("drain", more);
        }
        if (!stream.destroyed) stream.end();
      };
      more();
    });
    await new Promise<void>((resolve) => s3.listen(0, "127.0.0.1", resolve));
    endpoint = `https://localhost:${(s3.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => s3.close(resolve));
  });

  /** GetObject `count` times, keeping only the content length of each. */
  async function dropBodies(client: S3Client, count: number): Promise<void> {
    const lengths = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        client.send(new GetObjectCommand({ Bucket: "bucket", Key: `key-${i}` })).then((out) => out.ContentLength)
      )
    );
    expect(lengths).toEqual(Array(count).fill(OBJECT));
  }

  it(`${DROPPED} bodies dropped: the next GetObject is served after gc(), its Body read in full`, async () => {
    const handler = newHandler();
    const client = new S3Client({
      region: "us-east-1",
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: "AKIDH2DROPPED", secretAccessKey: "h2-dropped-secret" },
      requestHandler: handler,
      maxAttempts: 1,
    });
    try {
      await dropBodies(client, DROPPED);
      const next = client.send(new GetObjectCommand({ Bucket: "bucket", Key: "next" }));
      expect(await collectUntilSettled(next, 50)).toBe(true);
      const out = await next;
      expect((await out.Body!.transformToByteArray()).length).toBe(OBJECT);
      const reclaimed = () => handler.getPoolStats().origins.find((o) => o.origin === endpoint)?.bodiesReclaimed;
      await collectUntil(reclaimed, DROPPED);
      expect(reclaimed()).toBe(DROPPED);
    } finally {
      client.destroy();
      handler.destroy();
    }
  }, 60_000);
});
