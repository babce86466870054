/**
 * Faults over http AND https on 127.0.0.1, side by side with @smithy/undici-http-handler 3.2.4 (and Sockeye's
 * NodeHttpHandler where error shapes are compared): reset before the response and mid-body, abort during the
 * upload and during the TCP / TLS connect, destroy under load. After each fault: every promise settled, no
 * unhandled rejection, scheduler armed 0, in flight 0, abort-signal listeners 0, and — counted on the server —
 * no connection left open once the handlers are destroyed.
 */
import { getEventListeners, setMaxListeners } from "node:events";
import { Readable } from "node:stream";
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  CA,
  readAll,
  requestTo,
  startServer,
  startSilentTcpServer,
  type TestServer,
  waitFor,
} from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

type Settled = { ok: true; value: any } | { ok: false; error: any };

async function settle<T>(p: Promise<T>): Promise<Settled> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

const quiet = { debug() {}, info() {}, error() {}, trace() {}, warn() {} };

/** Internal counters of a Sockeye handler that must be zero once every request settled. */
function leftovers(h: UndiciHttpHandler): { armed: number; inFlight: number } {
  return { armed: (h as any).scheduler.size, inFlight: h.getPoolStats().totals.inFlight };
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

for (const kind of ["http", "https"] as const) {
  describe(`faults over ${kind}, side by side with @smithy/undici-http-handler`, () => {
    let server: TestServer;
    const handlers: Array<{ destroy(): void }> = [];
    function sockeye(options: Record<string, unknown> = {}): UndiciHttpHandler {
      const h = new UndiciHttpHandler({ httpsAgent: { ca: CA }, logger: quiet as any, ...options });
      handlers.push(h);
      return h;
    }
    function smithy(): SmithyUndiciHttpHandler {
      const h = new SmithyUndiciHttpHandler({ dispatcher: { connect: { ca: CA } } } as any);
      handlers.push(h);
      return h;
    }
    beforeAll(async () => {
      server = await startServer(kind);
    });
    afterEach(async () => {
      // Nothing left open on the server once every handler of the test is destroyed.
      for (const h of handlers.splice(0)) h.destroy();
      await waitFor(() => server.openConnections === 0, "every connection closed after destroy()");
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    });
    afterAll(async () => {
      await server.close();
    });

    it("reset before the response: TimeoutError ECONNRESET as NodeHttpHandler; upstream rejects too", async () => {
      const mine = sockeye();
      const node = new NodeHttpHandler({ httpsAgent: { ca: CA } });
      handlers.push(node);
      const [a, b, c] = await Promise.all([
        settle(mine.handle(requestTo(server, { path: "/reset" }))),
        settle(node.handle(requestTo(server, { path: "/reset" }))),
        settle(smithy().handle(requestTo(server, { path: "/reset" }))),
      ]);
      expect([a.ok, b.ok, c.ok]).toEqual([false, false, false]);
      expect([(a as any).error.name, (a as any).error.code]).toEqual(["TimeoutError", "ECONNRESET"]);
      expect([(b as any).error.name, (b as any).error.code]).toEqual(["TimeoutError", "ECONNRESET"]);
      expect(mine.getPoolStats().origins[0].requests.failed).toBe(1);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });

    it("reset mid-body: the body stream errors (ECONNRESET) for both; nothing in flight", async () => {
      const mine = sockeye();
      const results: Settled[] = [];
      for (const h of [mine, smithy()]) {
        const { response } = await h.handle(requestTo(server, { path: "/reset-mid-body" }));
        expect(response.statusCode).toBe(200);
        results.push(await settle(readAll(response.body)));
      }
      expect(results.map((r) => r.ok)).toEqual([false, false]);
      expect((results[0] as any).error.code).toBe("ECONNRESET");
      await waitFor(() => mine.getPoolStats().totals.inFlight === 0, "request closed");
      expect(mine.getPoolStats().origins[0].requests.failed).toBe(1);
      expect(leftovers(mine).armed).toBe(0);
    });

    it("abort during the upload: AbortError with the reason as cause; the server sees the connection end", async () => {
      const mine = sockeye();
      const results: Settled[] = [];
      for (const h of [mine, smithy()]) {
        const controller = new AbortController();
        // A body that sends one chunk and then stalls: the request is mid-upload when the signal fires.
        const body = new Readable({ read() {} });
        body.push(Buffer.alloc(4096, 1));
        const firstChunk = new Promise((resolve) => server.events.once("first-chunk", resolve));
        const pending = settle(
          h.handle(
            requestTo(server, {
              method: "PUT",
              path: "/stream-sink",
              body,
              headers: { "transfer-encoding": "chunked" },
            }),
            { abortSignal: controller.signal }
          )
        );
        await firstChunk;
        controller.abort(new Error("stop uploading"));
        results.push(await pending);
        expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      }
      expect(results.map((r) => r.ok)).toEqual([false, false]);
      expect((results[0] as any).error.name).toBe("AbortError");
      expect((results[0] as any).error.cause.message).toBe("stop uploading");
      // Upstream rejects too (with its own shape: the reason itself, name "Error").
      expect(mine.getPoolStats().origins[0].requests.aborted).toBe(1);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
    });

    it(`abort during the ${kind === "https" ? "TLS handshake" : "TCP connect"}: AbortError at once; the connecting socket closed at once`, async () => {
      const silent = await startSilentTcpServer();
      try {
        const mine = sockeye({ connectionTimeout: 5000 });
        // Upstream with a short connect timeout: it does not act on the abort while connecting (below).
        const upstream = new SmithyUndiciHttpHandler({ dispatcher: { connect: { ca: CA, timeout: 300 } } } as any);
        handlers.push(upstream);
        const target = kind === "https" ? { protocol: "https:", hostname: "127.0.0.1", port: silent.port } : server;
        const order: string[] = [];
        const results: Settled[] = [];
        for (const [label, h] of [
          ["sockeye", mine],
          ["upstream", upstream],
        ] as const) {
          const controller = new AbortController();
          const pending = settle(
            (h as UndiciHttpHandler).handle(requestTo(target), { abortSignal: controller.signal })
          ).then((r) => {
            order.push(label);
            return r;
          });
          if (kind === "https") {
            // TCP accepted by a server that never answers the ClientHello: the TLS handshake is in progress.
            await waitFor(() => silent.openConnections === 1, "TCP connection accepted");
          } else if (h === mine) {
            // Microtasks only (no I/O turn), so the TCP connect the pool started cannot have completed yet.
            for (let i = 0; i < 1000 && (mine as any).lastState?.attemptsOpen !== 1; i++) await Promise.resolve();
            expect((mine as any).lastState.attemptsOpen).toBe(1);
          }
          controller.abort(new Error("stop connecting"));
          if (h === mine) {
            results.push(await pending);
            expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
            // The connecting socket is closed by the abort itself (no other request waits for it), not left to the
            // 5 s connect timeout or to destroy().
            if (kind === "https") await waitFor(() => silent.openConnections === 0, "handshaking socket closed", 500);
            mine.destroy();
          } else {
            results.push(await pending);
          }
          expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
        }
        expect(results.map((r) => r.ok)).toEqual([false, false]);
        expect((results[0] as any).error.name).toBe("AbortError");
        expect((results[0] as any).error.cause.message).toBe("stop connecting");
        expect(mine.getPoolStats().origins[0].requests.aborted).toBe(1);
        if (kind === "https") {
          // @smithy/undici-http-handler 3.2.4 leaves the abort to undici, which only sees it once connected: the
          // promise settles on the connect timeout instead (undici's 10 s default; 300 ms here).
          expect((results[1] as any).error.message).toMatch(/Connect Timeout/);
        }
        expect(order).toEqual(["sockeye", "upstream"]);
      } finally {
        await silent.close();
      }
    });

    it("destroy under load: every request rejects HandlerDestroyedError (ERR_HANDLER_DESTROYED) as NodeHttpHandler's; nothing leaks", async () => {
      const mine = sockeye({ httpAgent: { maxSockets: 4 }, httpsAgent: { ca: CA, maxSockets: 4 } });
      const node = new NodeHttpHandler({ httpAgent: { maxSockets: 4 }, httpsAgent: { ca: CA, maxSockets: 4 } });
      handlers.push(node);
      const controller = new AbortController();
      setMaxListeners(0, controller.signal);
      const load = (h: { handle: UndiciHttpHandler["handle"] }) =>
        Array.from({ length: 30 }, () =>
          settle(h.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal }))
        );
      // A response whose body is still streaming when destroy() runs fails with the same error.
      const streaming = await mine.handle(requestTo(server, { path: "/stall-body" }));
      const minePending = load(mine);
      const nodePending = load(node);
      await waitFor(() => mine.getPoolStats().origins[0]?.active === 4, "four busy connections");
      await waitFor(() => server.received.filter((r) => r.url === "/never").length >= 7, "requests on the server");
      mine.destroy();
      node.destroy();
      const [mineResults, nodeResults, body] = await Promise.all([
        Promise.all(minePending),
        Promise.all(nodePending),
        settle(readAll(streaming.response.body)),
      ]);
      const shapes = (rs: Settled[]) => rs.map((r) => (r.ok ? "resolved" : `${r.error.name}/${r.error.code}`));
      expect(new Set(shapes(mineResults))).toEqual(new Set(["HandlerDestroyedError/ERR_HANDLER_DESTROYED"]));
      expect(new Set(shapes(nodeResults))).toEqual(new Set(["HandlerDestroyedError/ERR_HANDLER_DESTROYED"]));
      // The streaming body fails as NodeHttpHandler's does ("aborted", ECONNRESET), the destroy as its cause.
      expect([(body as any).error?.name, (body as any).error?.message, (body as any).error?.code]).toEqual([
        "Error",
        "aborted",
        "ECONNRESET",
      ]);
      expect([(body as any).error.cause?.name, (body as any).error.cause?.code]).toEqual([
        "HandlerDestroyedError",
        "ERR_HANDLER_DESTROYED",
      ]);
      // Where each was: 3 on connections (the 4th holds the streaming body), the rest still queued.
      const messages = mineResults.map((r) => (r as any).error.message as string);
      expect(messages.filter((m) => m.includes("while the request was in flight"))).toHaveLength(3);
      expect(messages.filter((m) => m.includes("waiting for a free connection (maxSockets=4"))).toHaveLength(27);
      // One error object per request (the SDK decorates each rejection).
      expect(new Set(mineResults.map((r) => (r as any).error)).size).toBe(30);
      expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
      expect((mine as any).scheduler.ticking).toBe(false);
      expect(mine.getPoolStats().origins[0].requests.failed).toBe(31);
    });
  });
}
