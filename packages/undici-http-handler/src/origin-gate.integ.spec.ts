/**
 * The per-origin queue under saturation, over http AND https on 127.0.0.1, counted at the server:
 *
 * - queued requests that time out (`socketAcquisitionTimeout`, `connectionTimeout`) or are aborted never close or
 *   open a connection, with the handler-owned dispatcher (the handler's FIFO) and with a caller's undici `Pool`
 *   (undici's queue: the request is dropped unsent when its turn comes, the connection kept);
 * - telemetry still reads the queue (queued count, oldest queued age, time in queue, `request:enqueued`);
 * - a `connectionTimeout` says truthfully whether the request was queued or still connecting;
 * - an abort during a TLS handshake closes the handshaking socket at once when no other request waits for it,
 *   and keeps it when one does.
 *
 * After each test: every promise settled, no uncaught exception or unhandled rejection, nothing in flight, no
 * deadline armed, and no connection left open at the server once the handlers are destroyed.
 */
import { once, setMaxListeners } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import type { PoolEvent } from "@sockeye/pool-monitor";
import { Pool } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CA, readAll, startSilentTcpServer, waitFor } from "../../node-http-handler/test/servers";
import { type BodyFaultServer, startBodyFaultServer } from "./body-fault-server.mock";
import { quiet, recordAsyncFaults, settle, turns } from "../test/async-faults";
import { UndiciHttpHandler } from "./undici-http-handler";

const { uncaught, unhandled } = recordAsyncFaults();

function leftovers(h: UndiciHttpHandler): { armed: number; inFlight: number } {
  return { armed: (h as any).scheduler.size, inFlight: h.getPoolStats().totals.inFlight };
}

const QUEUED = 10;

for (const kind of ["http", "https"] as const) {
  describe(`the per-origin queue under saturation, over ${kind}`, () => {
    let server: BodyFaultServer;
    const handlers: Array<{ destroy(): void }> = [];
    const request = (path: string) =>
      new HttpRequest({
        protocol: server.protocol,
        hostname: server.hostname,
        port: server.port,
        method: "GET",
        path,
        headers: { host: `${server.hostname}:${server.port}` },
      });
    function sockeye(options: Record<string, unknown> = {}): UndiciHttpHandler {
      const h = new UndiciHttpHandler({
        httpAgent: { maxSockets: 2 },
        httpsAgent: { ca: CA, maxSockets: 2 },
        logger: quiet as any,
        ...options,
      });
      handlers.push(h);
      return h;
    }
    beforeAll(async () => {
      server = await startBodyFaultServer(kind);
    });
    beforeEach(() => {
      uncaught.length = 0;
      unhandled.length = 0;
    });
    afterEach(async () => {
      server.release();
      for (const h of handlers.splice(0)) h.destroy();
      await waitFor(() => server.openConnections === 0, "every connection closed");
      await turns(2);
      expect(uncaught).toEqual([]);
      expect(unhandled).toEqual([]);
    });
    afterAll(async () => {
      await server.close();
    });

    /** Two held requests fill the pool; returns their (pending) outcomes. */
    async function saturate(h: UndiciHttpHandler): Promise<Array<Promise<unknown>>> {
      const held = [0, 1].map(() => settle(h.handle(request("/hold")).then(({ response }) => readAll(response.body))));
      await waitFor(() => server.held === 2, "both connections holding a request");
      return held;
    }

    /** After the held requests complete: later requests reuse the two connections. */
    async function reuse(h: UndiciHttpHandler, held: Array<Promise<unknown>>): Promise<void> {
      server.release();
      for (const r of await Promise.all(held)) expect((r as any).ok).toBe(true);
      const later = await Promise.all([0, 1, 2, 3].map(() => settle(h.handle(request("/ok")))));
      for (const r of later) {
        expect(r.ok).toBe(true);
        await readAll((r as any).value.response.body);
      }
    }

    it("socketAcquisitionTimeout of queued requests closes and opens no connection; telemetry reads the queue", async () => {
      const mine = sockeye({ socketAcquisitionTimeout: 300 });
      const events: PoolEvent[] = [];
      mine.poolMonitor?.subscribe((e) => events.push(e));
      const before = server.connections;
      const held = await saturate(mine);
      const queued = Array.from({ length: QUEUED }, () => settle(mine.handle(request("/ok"))));
      await turns(2);
      const during = mine.getPoolStats().origins[0];
      expect(during.queued).toBe(QUEUED);
      expect(during.oldestQueuedMs).toBeGreaterThan(0);
      expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(QUEUED);
      const results = await Promise.all(queued);
      for (const r of results) {
        expect([(r as any).error?.name, (r as any).error?.code]).toEqual(["TimeoutError", "ETIMEDOUT"]);
        expect((r as any).error.message).toContain("for a free connection (maxSockets=2");
      }
      expect(mine.getPoolStats().origins[0].queued).toBe(0);
      await reuse(mine, held);
      expect(server.connections - before).toBe(2);
      const stats = mine.getPoolStats().origins[0];
      expect(stats.sockets.created).toBe(2);
      expect(stats.requests).toMatchObject({ started: 2 + QUEUED + 4, timedOut: QUEUED, completed: 6 });
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });

    it("aborted queued requests close and open no connection; later requests wait their turn in order", async () => {
      const mine = sockeye();
      const before = server.connections;
      const held = await saturate(mine);
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const aborted = Array.from({ length: QUEUED }, () =>
        settle(mine.handle(request("/ok"), { abortSignal: controller.signal }))
      );
      // Two more that stay queued and are served once the pool frees.
      const waiting = [0, 1].map(() => settle(mine.handle(request("/ok"))));
      await turns(2);
      expect(mine.getPoolStats().origins[0].queued).toBe(QUEUED + 2);
      controller.abort(new Error("caller gave up"));
      for (const r of await Promise.all(aborted)) {
        expect([(r as any).error?.name, (r as any).error?.cause?.message]).toEqual(["AbortError", "caller gave up"]);
      }
      expect(mine.getPoolStats().origins[0].queued).toBe(2);
      await reuse(mine, held);
      for (const r of await Promise.all(waiting)) expect(r.ok).toBe(true);
      expect(server.connections - before).toBe(2);
      // Only the requests that were sent reached the server.
      expect(server.requests.get("/ok")).toBe(2 + 4 + (server.requests.get("/ok")! - 6));
      const stats = mine.getPoolStats().origins[0];
      expect(stats.requests.aborted).toBe(QUEUED);
      expect(stats.queueWaitMs.count).toBe(2 + 2 + 4);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });

    it("telemetry: false: the queue works the same (aborted queued requests cost no connection)", async () => {
      const mine = sockeye({ telemetry: false });
      const before = server.connections;
      const held = await saturate(mine);
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const aborted = Array.from({ length: QUEUED }, () =>
        settle(mine.handle(request("/ok"), { abortSignal: controller.signal }))
      );
      await turns(2);
      controller.abort();
      for (const r of await Promise.all(aborted)) expect((r as any).error?.name).toBe("AbortError");
      await reuse(mine, held);
      expect(server.connections - before).toBe(2);
    });

    it("requests queued when the dispatcher is rebuilt (updateHttpClientConfig) are sent through the new one", async () => {
      const mine = sockeye();
      const held = await saturate(mine);
      const queued = [0, 1, 2].map(() => settle(mine.handle(request("/ok"))));
      await turns(2);
      expect(mine.getPoolStats().origins[0].queued).toBe(3);
      mine.updateHttpClientConfig(kind === "https" ? "httpsAgent" : "httpAgent", {
        ...(kind === "https" ? { ca: CA } : {}),
        maxSockets: 4,
      });
      // The next handle() builds the new dispatcher; the two held ones still count against the limit.
      const next = settle(mine.handle(request("/ok")));
      for (const r of await Promise.all([...queued, next])) expect(r.ok).toBe(true);
      server.release();
      for (const r of await Promise.all(held)) expect((r as any).ok).toBe(true);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });

    it("a caller's undici Pool: aborted requests in undici's queue cost no connection either", async () => {
      const pool = new Pool(`${server.protocol}//${server.hostname}:${server.port}`, {
        connections: 2,
        connect: { ca: CA },
      });
      const mine = sockeye({ dispatcher: pool });
      const before = server.connections;
      const held = await saturate(mine);
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const aborted = Array.from({ length: QUEUED }, () =>
        settle(mine.handle(request("/ok"), { abortSignal: controller.signal }))
      );
      await turns(2);
      controller.abort(new Error("caller gave up"));
      for (const r of await Promise.all(aborted)) expect((r as any).error?.name).toBe("AbortError");
      await reuse(mine, held);
      expect(server.connections - before).toBe(2);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });

    it("connectionTimeout while queued says so (maxSockets, queue length), as NodeHttpHandler's does", async () => {
      const mine = sockeye({
        connectionTimeout: 300,
        httpAgent: { maxSockets: 1 },
        httpsAgent: { ca: CA, maxSockets: 1 },
      });
      const node = new NodeHttpHandler({
        connectionTimeout: 300,
        httpAgent: { maxSockets: 1 },
        httpsAgent: { ca: CA, maxSockets: 1 },
        logger: quiet as any,
      });
      handlers.push(node);
      const before = server.connections;
      const heldMine = settle(mine.handle(request("/hold")));
      const heldNode = settle(node.handle(request("/hold")));
      await waitFor(() => server.held === 2, "one held request per handler");
      const [a, b] = await Promise.all([settle(mine.handle(request("/ok"))), settle(node.handle(request("/ok")))]);
      expect((a as any).error.name).toBe("TimeoutError");
      expect((a as any).error.message).toContain("within the configured timeout of 300 ms.");
      expect((a as any).error.message).toContain(
        "The request was still waiting for a free connection (maxSockets=1, 1 queued)."
      );
      expect((b as any).error.message).toContain("The request was still waiting for a free socket");
      server.release();
      expect((await heldMine).ok).toBe(true);
      expect((await heldNode).ok).toBe(true);
      expect(server.connections - before).toBe(2);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });
  });
}

describe("abort during a TLS handshake", () => {
  beforeEach(() => {
    uncaught.length = 0;
    unhandled.length = 0;
  });
  afterEach(() => {
    expect(uncaught).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it("closes the handshaking socket at once when no other request waits for it; the handler stays usable", async () => {
    const silent = await startSilentTcpServer();
    const mine = new UndiciHttpHandler({ httpsAgent: { ca: CA }, logger: quiet as any, connectionTimeout: 10_000 });
    try {
      const target = { protocol: "https:", hostname: "127.0.0.1", port: silent.port };
      const request = () =>
        new HttpRequest({ ...target, method: "GET", path: "/", headers: { host: `127.0.0.1:${silent.port}` } });
      const controller = new AbortController();
      const pending = settle(mine.handle(request(), { abortSignal: controller.signal }));
      await waitFor(() => silent.openConnections === 1, "TCP accepted, TLS handshake in progress");
      controller.abort(new Error("stop"));
      const r = await pending;
      expect((r as any).error.name).toBe("AbortError");
      // Closed by the abort itself: no destroy(), long before the 10 s connect timeout.
      await waitFor(() => silent.openConnections === 0, "handshaking socket closed", 1000);
      expect(silent.connections).toBe(1);
      const origin = mine.getPoolStats().origins[0];
      expect(origin.sockets.closed.aborted).toBe(1);
      expect(origin.sockets.errors).toBe(0);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
      // A later request opens a new connection attempt.
      const again = new AbortController();
      const second = settle(mine.handle(request(), { abortSignal: again.signal }));
      await waitFor(() => silent.connections === 2, "a new connection attempt");
      again.abort();
      await second;
      await waitFor(() => silent.openConnections === 0, "closed again", 1000);
    } finally {
      mine.destroy();
      await silent.close();
    }
  });

  it("keeps the handshaking socket when another request waits for it, and closes it when that one goes too", async () => {
    const silent = await startSilentTcpServer();
    const mine = new UndiciHttpHandler({
      httpsAgent: { ca: CA, maxSockets: 1 },
      logger: quiet as any,
      connectionTimeout: 10_000,
    });
    try {
      const request = () =>
        new HttpRequest({
          protocol: "https:",
          hostname: "127.0.0.1",
          port: silent.port,
          method: "GET",
          path: "/",
          headers: { host: `127.0.0.1:${silent.port}` },
        });
      const first = new AbortController();
      const second = new AbortController();
      const a = settle(mine.handle(request(), { abortSignal: first.signal }));
      await waitFor(() => silent.openConnections === 1, "TLS handshake in progress");
      const b = settle(mine.handle(request(), { abortSignal: second.signal }));
      await turns(1);
      expect(mine.getPoolStats().origins[0].queued).toBe(1);
      first.abort();
      expect(((await a) as any).error.name).toBe("AbortError");
      await turns(5);
      // The second request now waits for that connection: kept, and no second connection opened.
      expect([silent.openConnections, silent.connections]).toEqual([1, 1]);
      second.abort();
      expect(((await b) as any).error.name).toBe("AbortError");
      await waitFor(() => silent.openConnections === 0, "handshaking socket closed", 1000);
      expect(silent.connections).toBe(1);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    } finally {
      mine.destroy();
      await silent.close();
    }
  });
});

describe("the gate's direct pool", () => {
  it("dispatches to the origin's pool directly, and through the Agent again once the Agent closed that pool", async () => {
    // The server closes idle connections at once: the Agent then closes and forgets the origin's pool.
    const server = http.createServer((req, res) => req.resume().on("end", () => res.end("ok")));
    server.keepAliveTimeout = 50;
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const h = new UndiciHttpHandler({ httpAgent: { maxSockets: 2 }, logger: quiet as any });
    const request = () => new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path: "/" });
    const gateOf = () => (h as any).gates.byOrigin.get(`http://127.0.0.1:${port}`);
    try {
      await readAll((await h.handle(request())).response.body);
      const first = gateOf().originPool;
      expect(first).toBeInstanceOf(Pool);
      await waitFor(() => first.closed === true, "the Agent closed the idle pool");
      const { response } = await h.handle(request());
      expect(response.statusCode).toBe(200);
      await readAll(response.body);
      expect(gateOf().originPool).toBeInstanceOf(Pool);
      expect(gateOf().originPool).not.toBe(first);
      expect(leftovers(h)).toEqual({ armed: 0, inFlight: 0 });
    } finally {
      h.destroy();
      server.closeAllConnections();
      server.close();
    }
  });
});
