/**
 * Many distinct origins, one loopback server: host names `bucket-<n>.s3.test` (as S3 virtual-hosted buckets, one host
 * name per bucket) that a custom `lookup` resolves to 127.0.0.1, so every origin is a pool of its own on the client
 * while one server answers them all.
 *
 * `startOkServer()` answers every HTTP/1.1 request `200 "ok"` and records nothing per request (the heap checks run
 * in the same process), and closes a connection after `keepAliveMs` of idleness (as S3 does after some seconds; 0:
 * never, and no `Keep-Alive` hint is sent, so only the client's own idle timeout closes it).
 */
import { expect } from "vitest";
import { once } from "node:events";
import http from "node:http";
import type { LookupAddress, LookupOptions } from "node:dns";
import type net from "node:net";
import { HttpRequest } from "@smithy/protocol-http";
import { heapUsedAfterGc } from "../../pool-monitor/test/heap-after-gc";

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for `net.connect()` / `tls.connect()` that resolves every host name to 127.0.0.1. */
export function loopbackLookup(_hostname: string, options: LookupOptions, callback: LookupCallback): void {
  if (options?.all) callback(null, [{ address: "127.0.0.1", family: 4 }]);
  else callback(null, "127.0.0.1", 4);
}

/** The host name of bucket `n`. */
export function bucketHost(n: number): string {
  return `bucket-${n}.s3.test`;
}

/** A GET of `path` on bucket `n`'s host name at `port`. */
export function bucketRequest(protocol: "http:" | "https:", n: number, port: number, path = "/"): HttpRequest {
  const hostname = bucketHost(n);
  return new HttpRequest({
    protocol,
    hostname,
    port,
    method: "GET",
    path,
    headers: { host: `${hostname}:${port}` },
  });
}

export interface OkServer {
  port: number;
  /** TCP connections open now. */
  readonly openConnections: number;
  close(): Promise<void>;
}

/** An http server on 127.0.0.1, port 0, answering `200 "ok"`; idle connections close after `keepAliveMs` (0: never). */
export async function startOkServer(keepAliveMs: number): Promise<OkServer> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
  });
  server.keepAliveTimeout = keepAliveMs;
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as net.AddressInfo).port,
    get openConnections() {
      return sockets.size;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Reads a response body to its end (a `Readable` or any async iterable). */
export async function drain(body: unknown): Promise<void> {
  for await (const _ of body as AsyncIterable<unknown>) {
    // discard
  }
}

/**
 * Sends one request to each of the buckets `from` .. `to - 1` through `handle`, `concurrency` at a time, reading
 * each body to its end; rejects on the first failure.
 */
export async function visitBuckets(
  handle: (request: HttpRequest) => Promise<{ response: { statusCode: number; body?: unknown } }>,
  request: (n: number) => HttpRequest,
  from: number,
  to: number,
  concurrency: number
): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const n = next++;
      const { response } = await handle(request(n));
      if (response.statusCode !== 200) throw new Error(`bucket ${n}: status ${response.statusCode}`);
      await drain(response.body);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, to - from) }, worker));
}

/**
 * Heap growth the many-origins checks allow between 300 and 1,200 origins: measurement noise only (tens of KB); one
 * structure kept per origin (a few hundred bytes each) exceeds it.
 */
export const HEAP_SLACK_BYTES = 96 * 1024;

/**
 * Bytes of heap retained by what `build()` returns: heap used after full GC while it is held, minus after
 * `release()` and letting it go. The two readings are taken back to back, so code the JIT compiled while `build()`
 * ran (a few hundred KB, more between runs than any per-origin figure here) is in both and cancels out. The second
 * reading is repeated (capped) until it stops falling, since a release may finish asynchronously (a dispatcher's
 * `destroy()`). The smallest of `runs` builds counts: a collection now and then leaves some floating garbage.
 */
export async function retainedHeap<T>(build: () => Promise<T>, release: (built: T) => void, runs = 2): Promise<number> {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const held = [await build()];
    const withIt = await heapUsedAfterGc();
    release(held.pop() as T);
    let without = await heapUsedAfterGc();
    // A release finishes over a few event-loop turns (sockets close, a dispatcher's destroy settles), later on a loaded
    // machine: keep reading, 5 ms apart, until three readings in a row fall by less than 4 KB.
    for (let reading = 0, still = 0; reading < 40 && still < 3; reading++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const next = await heapUsedAfterGc();
      still = next > without - 4096 ? still + 1 : 0;
      without = Math.min(without, next);
    }
    least = Math.min(least, withIt - without);
  }
  return least;
}

/**
 * Asserts that a handler that served `count` origins (`build(count)`, released by `release`) retains no more heap per
 * origin than measurement noise: one warm-up run, then 300 against 1,200 origins. The measurement must see the handler
 * at all (its 256 telemetry entries alone are far more than `HEAP_SLACK_BYTES`).
 */
export async function expectFlatHeapPerOrigin<T>(
  build: (count: number) => Promise<T>,
  release: (built: T) => void
): Promise<void> {
  const run = (count: number) => retainedHeap(() => build(count), release);
  await run(300); // warm-up
  const at300 = await run(300);
  const at1200 = await run(1200);
  expect(at300).toBeGreaterThan(256 * 1024);
  // A small constant over 900 more origins (~100 bytes an origin at most).
  expect(at1200 - at300, `${((at1200 - at300) / 900).toFixed(1)} bytes retained per origin`).toBeLessThan(
    HEAP_SLACK_BYTES
  );
}
