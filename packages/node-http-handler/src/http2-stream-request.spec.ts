/**
 * Http2StreamRequest's one way out under deadlines, with fake timers (an explicit `toFake` list: the scheduler's one
 * timer, the session pool's `setImmediate` and the monotonic clock; never `nextTick`, which Node's networking needs) and real
 * loopback servers (HTTP/2 over TLS, or a TCP server that never answers the TLS handshake). Fake time moves only
 * through `vi.advanceTimersByTimeAsync`; `until` polls real I/O on the real timer. Each test makes two causes meet in
 * one scheduler wake-up (two deadlines; a deadline and the handler's `destroy()` called from inside it) and asserts
 * that every request is counted once in `getStats().origins[0].requests`, tells the pool once, and leaves no deadline,
 * watch or session behind.
 */
import { HttpRequest } from "@smithy/protocol-http";
import type { PoolEvent } from "@sockeye/pool-monitor";
import net from "node:net";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CA, type H2TestServer, inFlight, outcome, type Pool, readBody, startH2Server } from "../test/http2/h2-servers";
import { NodeHttp2Handler, type NodeHttp2HandlerOptions } from "./index";

const FAKE: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: [
    "setTimeout",
    "clearTimeout",
    "setInterval",
    "clearInterval",
    "setImmediate",
    "clearImmediate",
    "performance",
  ],
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The real `setTimeout`, captured before any test fakes it. */
const realSetTimeout = globalThis.setTimeout;

/** Real-time poll for loopback I/O (on the real timer, whatever is faked). */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => realSetTimeout(r, 5));
  if (!predicate()) throw new Error("condition not met");
}

/** A handler on fake time, with the pool's single way out recorded per request. */
function handler(options: NodeHttp2HandlerOptions) {
  const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA }, ...options });
  cleanups.push(() => h.destroy());
  const pool = (h as unknown as { pool: Pool }).pool;
  const finished = new Map<object, string[]>();
  const original = pool.streamFinished.bind(pool);
  vi.spyOn(pool, "streamFinished").mockImplementation((req) => {
    finished.set(req, [...(finished.get(req) ?? []), req.outcome ?? "failed"]);
    original(req);
  });
  /** Each request told the pool exactly once; the outcomes, sorted. */
  const toldOnce = (requests: number): string[] => {
    expect(finished.size).toBe(requests);
    for (const calls of finished.values()) expect(calls).toHaveLength(1);
    return [...finished.values()].map((calls) => calls[0]).sort();
  };
  return { h, pool, toldOnce };
}

function request(port: number, path: string, init: Partial<ConstructorParameters<typeof HttpRequest>[0]> = {}) {
  return new HttpRequest({
    protocol: "https:",
    hostname: "localhost",
    port,
    method: "GET",
    path,
    headers: {},
    ...init,
  });
}

/** A TCP server that accepts connections and never answers (a TLS handshake that never completes). */
async function silentTcp(): Promise<{ port: number; connections: number; open: number }> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    socket.resume(); // reads (and drops) the ClientHello, so the client's close is seen
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      })
  );
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return connections;
    },
    get open() {
      return sockets.size;
    },
  };
}

async function oneStreamServer(): Promise<H2TestServer> {
  const server = await startH2Server({ settings: { maxConcurrentStreams: 1 } });
  cleanups.push(() => server.close());
  return server;
}

describe("deadlines end a stream request once (fake timers)", () => {
  it("requestTimeout of the slot holder and of the waiting stream in one wake-up: each counted timedOut once, the slot passes on", async () => {
    const server = await oneStreamServer();
    vi.useFakeTimers(FAKE);
    const { h, pool, toldOnce } = handler({ requestTimeout: 1000, maxSessionsPerOrigin: 1 });
    const holding = outcome(h.handle(request(server.port, "/never")));
    const waiting = outcome(h.handle(request(server.port, "/never")));
    await until(() => server.openStreams === 1 && h.getPoolStats().totals.queued === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(inFlight(pool)).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    for (const result of await Promise.all([holding, waiting])) {
      expect(result).toMatchObject({ ok: false, error: { name: "TimeoutError" } });
    }
    await until(() => inFlight(pool) === 0 && server.openStreams === 0);
    expect(toldOnce(2)).toEqual(["timed_out", "timed_out"]);
    const stats = h.getPoolStats().origins[0];
    expect(stats.requests).toEqual({ started: 2, completed: 0, failed: 0, aborted: 0, timedOut: 2, queueFull: 0 });
    // The waiting one never held the slot.
    expect(stats.sockets.acquisitions).toBe(1);
    for (const session of stats.http2?.sessions ?? []) expect(session.activeStreams).toBe(0);
    expect(pool.sharedScheduler.size).toBe(0); // no idle watch, no request deadline
    // The slot serves the next stream (a fresh session: the silent one is retired at the next poll phase, an
    // immediate).
    await vi.advanceTimersByTimeAsync(1);
    const next = await h.handle(request(server.port, "/echo"));
    expect(await readBody(next.response.body)).toContain('"method":"GET"');
    await until(() => inFlight(pool) === 0);
    expect(h.getPoolStats().origins[0].requests.completed).toBe(1);
    h.destroy();
    expect(pool.sharedScheduler.size).toBe(0);
  });

  it("requestTimeout counts from handle(), its wait for a stream slot included: a request given its slot at 600 ms that hears nothing fails at 1000 ms, not 1600 ms (#34)", async () => {
    const server = await oneStreamServer();
    vi.useFakeTimers(FAKE);
    const { h, pool } = handler({ requestTimeout: 1000, maxSessionsPerOrigin: 1 });
    // The slot holder has no timeout of its own and is answered at 600 ms (the server's timer is fake too).
    const holding = h.handle(request(server.port, "/delay?ms=600"), { requestTimeout: 0 });
    let settled = false;
    const waiting = outcome(h.handle(request(server.port, "/never"))).finally(() => {
      settled = true;
    });
    await until(() => server.openStreams === 1 && h.getPoolStats().totals.queued === 1);
    await vi.advanceTimersByTimeAsync(600);
    await readBody((await holding).response.body);
    await until(() => server.paths.includes("/never"));
    // Its stream started at 600 ms: upstream arms stream.setTimeout() at handle() and getting a stream is no
    // activity of it, so the limit still counts from 0.
    await vi.advanceTimersByTimeAsync(399);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
    expect(await waiting).toMatchObject({ ok: false, error: { name: "TimeoutError" } });
    await until(() => inFlight(pool) === 0);
  });

  it("requestTimeout during an upload: TimeoutError, counted once, and the reset reaches the server (the next stream starts)", async () => {
    const server = await oneStreamServer();
    vi.useFakeTimers(FAKE);
    const { h, pool, toldOnce } = handler({ requestTimeout: 1000, maxSessionsPerOrigin: 1 });
    const body = new Readable({ read() {} });
    body.push("a");
    const uploading = outcome(h.handle(request(server.port, "/echo", { method: "POST", body })));
    await until(() => server.openStreams === 1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await uploading).toMatchObject({ ok: false, error: { name: "TimeoutError" } });
    // Before: the stream was destroyed before its RST_STREAM went out; the server kept it open.
    await until(() => inFlight(pool) === 0 && server.openStreams === 0);
    expect(toldOnce(1)).toEqual(["timed_out"]);
    expect(body.listenerCount("error")).toBe(0);
    await vi.advanceTimersByTimeAsync(1); // the silent session's verdict (an immediate)
    const next = await h.handle(request(server.port, "/echo"));
    expect(await readBody(next.response.body)).toContain('"method":"GET"');
    await until(() => inFlight(pool) === 0);
    expect(h.getPoolStats().origins[0].requests).toEqual({
      started: 2,
      completed: 1,
      failed: 0,
      aborted: 0,
      timedOut: 1,
      queueFull: 0,
    });
  });

  it("destroy() from a listener while a deadline fires: the timed-out request and the one waiting behind it end once each", async () => {
    const silent = await silentTcp();
    vi.useFakeTimers(FAKE);
    const { h, pool, toldOnce } = handler({
      requestTimeout: 1000,
      disableConcurrentStreams: true,
      maxIsolatedSessionsPerOrigin: 1,
    });
    const events: string[] = [];
    h.poolMonitor!.subscribe((event: PoolEvent) => {
      events.push(event.type);
      // Runs inside the expiring requestTimeout: its isolated session is being let go of.
      if (event.type === "connection:closed") h.destroy();
    });
    const connecting = outcome(h.handle(request(silent.port, "/")));
    const waiting = outcome(h.handle(request(silent.port, "/")));
    await until(() => silent.connections === 1);
    await until(() => silent.connections === 1 && h.getPoolStats().totals.queued === 1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await connecting).toMatchObject({ ok: false, error: { name: "TimeoutError" } });
    expect(await waiting).toMatchObject({ ok: false, error: { message: expect.stringMatching(/destroyed/) } });
    expect(toldOnce(2)).toEqual(["failed", "timed_out"]);
    const stats = h.getPoolStats().origins[0];
    expect(stats.requests).toEqual({ started: 2, completed: 0, failed: 1, aborted: 0, timedOut: 1, queueFull: 0 });
    // No session was opened for the waiting request after destroy(); the one that was is closed once.
    expect(stats.sockets.created).toBe(1);
    expect(stats.http2?.closed.local).toBe(1);
    expect(events.filter((e) => e === "connection:closed")).toHaveLength(1);
    expect(inFlight(pool)).toBe(0);
    expect(pool.sharedScheduler.size).toBe(0);
    expect(stats.http2?.isolatedSessionsOpen).toBe(0);
    expect(silent.connections).toBe(1);
    await until(() => silent.open === 0);
  });

  it("connectionTimeout and requestTimeout expire in one wake-up for a request on a connecting session: it ends once", async () => {
    const silent = await silentTcp();
    vi.useFakeTimers(FAKE);
    const { h, pool, toldOnce } = handler({
      requestTimeout: 1000,
      connectionTimeout: 1000,
      disableConcurrentStreams: true,
    });
    const result = outcome(h.handle(request(silent.port, "/")));
    await until(() => silent.connections === 1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await result).toMatchObject({ ok: false, error: { name: "TimeoutError" } });
    expect(toldOnce(1)).toHaveLength(1);
    const stats = h.getPoolStats().origins[0];
    const { started, completed, failed, aborted, timedOut } = stats.requests;
    expect(started).toBe(1);
    expect(completed + failed + aborted + timedOut).toBe(1);
    const closed = Object.values(stats.http2?.closed ?? {}).reduce((a, b) => a + b, 0);
    expect(closed).toBe(1);
    expect(stats.http2?.isolatedSessionsOpen).toBe(0);
    expect(inFlight(pool)).toBe(0);
    expect(pool.sharedScheduler.size).toBe(0);
    await until(() => silent.open === 0);
  });
});
