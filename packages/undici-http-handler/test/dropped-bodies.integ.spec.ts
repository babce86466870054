/**
 * Issue 36's table, through `handle()`: a pool of 4 connections, four responses whose body the caller drops with no
 * reference kept, a full garbage collection, then one more request. Sockeye's `NodeHttpHandler` and
 * `UndiciHttpHandler` serve it (at once when the small bodies were received in full, else once the collected bodies
 * are reclaimed), count the reclaimed bodies in `getPoolStats()` and on the `sockeye:body:reclaimed` channel, and
 * leave nothing behind; upstream's `NodeHttpHandler` never serves it (bounded by an abort). A body the caller holds
 * is never touched: read after many collections and other traffic, it reads in full, byte-exact.
 *
 * Real servers on 127.0.0.1; `gc()` through `collectGarbage()` (the flag is set at run time).
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Readable } from "node:stream";
import { NodeHttpHandler as SmithyNodeHttpHandler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import type { PoolStats, SaturationReport } from "@sockeye/pool-monitor";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeHttpHandler } from "../../node-http-handler/src/index";
import { activeResources } from "../../node-http-handler/test/active-resources";
import {
  collectUntil,
  collectUntilSettled,
  digest,
  dropResponses,
  listenReclaims,
} from "../../pool-monitor/test/dropped-bodies";
import { collectGarbage } from "../../pool-monitor/test/heap-after-gc";
import { UndiciHttpHandler } from "../src/index";
import { waitFor } from "./telemetry-rig";

const KIB = 1024;
const MIB = 1024 * KIB;
const POOL = 4;

/** The bytes served for `/bytes/<n>`: a pattern, so a byte out of place changes the digest. */
function payload(size: number): Buffer {
  const bytes = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >>> 8)) & 0xff;
  return bytes;
}

const PAYLOADS = new Map<number, Buffer>();
function payloadOf(size: number): Buffer {
  let bytes = PAYLOADS.get(size);
  if (bytes === undefined) PAYLOADS.set(size, (bytes = payload(size)));
  return bytes;
}

let server: http.Server;
let port = 0;
const open = new Set<Socket>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    const size = Number(/^\/bytes\/(\d+)/.exec(req.url ?? "")?.[1] ?? 2);
    res.writeHead(200, { "content-length": size, "content-type": "application/octet-stream" });
    res.end(payloadOf(size));
  });
  server.on("connection", (socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function request(size: number): HttpRequest {
  return new HttpRequest({
    protocol: "http:",
    hostname: "127.0.0.1",
    port,
    method: "GET",
    path: `/bytes/${size}`,
    headers: { host: `127.0.0.1:${port}` },
  });
}

type Sockeye = NodeHttpHandler | UndiciHttpHandler;

const SOCKEYE: Record<string, (options?: object) => Sockeye> = {
  NodeHttpHandler: (options) => new NodeHttpHandler({ httpAgent: { maxSockets: POOL }, ...options }),
  UndiciHttpHandler: (options) => new UndiciHttpHandler({ httpAgent: { maxSockets: POOL }, ...options }),
};

/** Sends `count` requests and returns their bodies (kept out of the caller's frame, as `dropResponses`). */
async function holdBodies(handler: Sockeye, size: number, count: number): Promise<Readable[]> {
  const outputs = await Promise.all(Array.from({ length: count }, () => handler.handle(request(size))));
  return outputs.map(({ response }) => response.body as Readable);
}

function expected(size: number): { sha: string; bytes: number } {
  return { sha: createHash("sha256").update(payloadOf(size)).digest("hex"), bytes: size };
}

/** Deadlines armed on the handler's scheduler (`NodeHttpHandler`: its runtime's). */
function armedDeadlines(handler: Sockeye): number {
  const scheduler =
    handler instanceof NodeHttpHandler ? (handler as any).runtime.hostScheduler : (handler as any).scheduler;
  return scheduler.size;
}

function originStats(stats: PoolStats) {
  return stats.origins.find((o) => o.origin === `http://127.0.0.1:${port}`);
}

const CELLS = [
  // Received in full into the body's buffer: the connection went back to the pool at once, nothing to reclaim.
  { label: "1 KiB", size: KIB, reclaimed: 0 },
  // Still on the wire: each pins its connection until its body is collected and reclaimed.
  { label: "32 MiB", size: 32 * MIB, reclaimed: POOL },
];

for (const [name, create] of Object.entries(SOCKEYE)) {
  describe(`${name}: four responses dropped unread on a pool of ${POOL}`, () => {
    for (const cell of CELLS) {
      it(`${cell.label}: the next request is served after gc(); ${cell.reclaimed} bodies reclaimed, counted and announced`, async () => {
        const before = activeResources();
        const handler = create();
        const reclaims = listenReclaims();
        try {
          await dropResponses(handler, () => request(cell.size), POOL);
          const next = handler.handle(request(cell.size));
          expect(await collectUntilSettled(next, 50)).toBe(true);
          const { response } = await next;
          expect(await digest(response.body)).toEqual(expected(cell.size));
          await collectUntil(() => originStats(handler.getPoolStats())?.bodiesReclaimed, cell.reclaimed);
          const o = originStats(handler.getPoolStats());
          expect(o?.bodiesReclaimed).toBe(cell.reclaimed);
          expect(o?.requests.started).toBe(POOL + 1);
          expect(reclaims.events).toEqual(
            Array(cell.reclaimed).fill({ type: "body:reclaimed", origin: `http://127.0.0.1:${port}` })
          );
          // Nothing left: no request in flight, no deadline armed, at most the pool's connections open.
          expect(handler.getPoolStats().totals.inFlight).toBe(0);
          expect(armedDeadlines(handler)).toBe(0);
          expect(open.size).toBeLessThanOrEqual(POOL);
        } finally {
          reclaims.stop();
          handler.destroy();
        }
        // The pool's sockets close with the handler (undici closes its own asynchronously); no ref'd timer is left.
        await waitFor(
          () => open.size === 0,
          () => `${open.size} connections still open after destroy()`
        );
        expect(activeResources().timers).toBeLessThanOrEqual(before.timers);
      });
    }

    it("the saturation episode the reclaim ends says so: unconsumed_bodies, then a recovery naming the reclaimed bodies", async () => {
      const reports: SaturationReport[] = [];
      const handler = create({
        socketMonitor: "interval",
        // The held bodies count as unread (100 ms without progress) well before a growth window (5 samples of 100 ms)
        // could name the episode's cause pool capacity instead.
        saturation: { sampleIntervalMs: 100, windowSamples: 5, unconsumedBodyMs: 100 },
        onSaturation: (report: SaturationReport) => reports.push(report),
        onRecovery: (report: SaturationReport) => reports.push(report),
        logger: { warn() {}, info() {}, debug() {}, error() {} },
      });
      try {
        // Held at first (so they pin their sockets and are reported), then dropped. Filled by a helper: a suspended
        // async frame can keep the last value it iterated alive.
        const held = await holdBodies(handler, 32 * MIB, POOL);
        const queued = Promise.all([handler.handle(request(KIB)), handler.handle(request(KIB))]);
        // If an assertion below fails, destroy() rejects them: not an unhandled rejection on top.
        queued.catch(() => {});
        for (let i = 0; i < 100 && reports.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
        expect(reports[0]).toMatchObject({ cause: "unconsumed_bodies", reclaimed: 0 });
        held.length = 0;
        expect(await collectUntilSettled(queued, 50)).toBe(true);
        for (const { response } of await queued) expect(await digest(response.body)).toEqual(expected(KIB));
        await collectUntil(() => originStats(handler.getPoolStats())?.bodiesReclaimed, POOL);
        for (let i = 0; i < 100 && !reports.some((r) => r.state === "ok"); i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const recovery = reports.find((r) => r.state === "ok");
        expect(recovery).toMatchObject({ previousCause: "unconsumed_bodies", reclaimed: POOL });
        expect(recovery?.message).toContain(`${POOL} responses were dropped unread; their connections were reclaimed.`);
      } finally {
        handler.destroy();
      }
    });

    it("a held body is never reclaimed: read after many gc() and other traffic, it reads in full, byte-exact", async () => {
      const handler = create();
      try {
        const size = 32 * MIB;
        const { response } = await handler.handle(request(size));
        const held: Readable = response.body;
        for (let i = 0; i < 10; i++) {
          await collectGarbage();
          // Other traffic on the pool's other connections meanwhile.
          const { response: other } = await handler.handle(request(KIB));
          expect(await digest(other.body)).toEqual(expected(KIB));
        }
        expect(await digest(held)).toEqual(expected(size));
        expect(originStats(handler.getPoolStats())?.bodiesReclaimed).toBe(0);
        expect(handler.getPoolStats().totals.inFlight).toBe(0);
      } finally {
        handler.destroy();
      }
    });
  });
}

describe(`upstream @smithy/node-http-handler: four responses dropped unread on a pool of ${POOL}`, () => {
  for (const cell of CELLS) {
    it(`${cell.label}: the next request is never served, even after gc() (aborted after 1 s)`, async () => {
      const handler = new SmithyNodeHttpHandler({ httpAgent: { maxSockets: POOL } } as any);
      try {
        await dropResponses(handler, () => request(cell.size), POOL);
        const next = handler.handle(request(cell.size), { abortSignal: AbortSignal.timeout(1000) as any });
        await collectGarbage();
        await expect(next).rejects.toMatchObject({ name: "AbortError" });
      } finally {
        handler.destroy();
      }
    });
  }
});
