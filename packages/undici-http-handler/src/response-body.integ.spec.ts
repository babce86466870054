/**
 * Response bodies that fail, over http AND https on 127.0.0.1, side by side with Sockeye's NodeHttpHandler and
 * @smithy/node-http-handler 4.14.2:
 *
 * - a body that errors before anyone reads it (reset mid-body, abort after the headers, `destroy()`, a truncated
 *   `Connection: close` response) never raises an uncaught exception, and the error still reaches whoever reads
 *   later: the SDK's stream collector, an async iterator, `pipeline()`;
 * - the error a reader gets has NodeHttpHandler's shape for every way the connection can end mid-body
 *   (`Error("aborted")`, `code: "ECONNRESET"`), so the SDK retries it the same way;
 * - after each case: promises settled, nothing in flight, no deadline armed, and the server's connection count.
 */
import { pipeline } from "node:stream/promises";
import { Writable } from "node:stream";
import { NodeHttpHandler as SmithyNodeHttpHandler, streamCollector } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CA, readAll, waitFor } from "../../node-http-handler/test/servers";
import { type BodyFaultServer, startBodyFaultServer } from "./body-fault-server.mock";
import { quiet, recordAsyncFaults, settle, turns } from "../test/async-faults";
import { UndiciHttpHandler } from "./undici-http-handler";

type Handler = { handle: UndiciHttpHandler["handle"]; destroy(): void };

const { uncaught, unhandled } = recordAsyncFaults();

function shape(error: any): [string, string, string | undefined] {
  return [error?.name, error?.message, error?.code];
}

function leftovers(h: UndiciHttpHandler): { armed: number; inFlight: number } {
  return { armed: (h as any).scheduler.size, inFlight: h.getPoolStats().totals.inFlight };
}

for (const kind of ["http", "https"] as const) {
  describe(`response bodies that fail, over ${kind}`, () => {
    let server: BodyFaultServer;
    const handlers: Handler[] = [];
    const request = (path: string) =>
      new HttpRequest({
        protocol: server.protocol,
        hostname: server.hostname,
        port: server.port,
        method: "GET",
        path,
        headers: { host: `${server.hostname}:${server.port}` },
      });
    function sockeye(): UndiciHttpHandler {
      const h = new UndiciHttpHandler({ httpsAgent: { ca: CA }, logger: quiet as any });
      handlers.push(h);
      return h;
    }
    function node(): NodeHttpHandler {
      const h = new NodeHttpHandler({ httpsAgent: { ca: CA }, logger: quiet as any });
      handlers.push(h);
      return h;
    }
    function upstream(): SmithyNodeHttpHandler {
      const h = new SmithyNodeHttpHandler({ httpsAgent: { ca: CA } } as any);
      handlers.push(h as unknown as Handler);
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
      for (const h of handlers.splice(0)) h.destroy();
      await waitFor(() => server.openConnections === 0, "every connection closed");
      await turns(2);
      expect(uncaught).toEqual([]);
      expect(unhandled).toEqual([]);
    });
    afterAll(async () => {
      await server.close();
    });

    for (const path of ["/reset-mid", "/fin-close", "/reset-close", "/fin-chunked"]) {
      it(`${path}: an unread body that fails crashes nothing; the stream collector later gets NodeHttpHandler's error`, async () => {
        const mine = sockeye();
        const before = server.connections;
        const { response } = await mine.handle(request(path));
        expect(response.statusCode).toBe(200);
        // Nobody reads: the connection ends mid-body meanwhile.
        await waitFor(() => mine.getPoolStats().totals.inFlight === 0, "the request closed");
        await turns();
        expect(uncaught).toEqual([]);
        const late = await settle(streamCollector(response.body));
        expect(late.ok).toBe(false);
        expect(shape((late as any).error)).toEqual(["Error", "aborted", "ECONNRESET"]);
        expect((late as any).error.cause).toBeInstanceOf(Error);
        expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
        expect(mine.getPoolStats().origins[0].requests.failed).toBe(1);
        expect(server.connections - before).toBe(1);
      });

      it(`${path}: the body error has the shape of NodeHttpHandler's and @smithy/node-http-handler's`, async () => {
        const results = [];
        for (const h of [sockeye(), node(), upstream()]) {
          const { response } = await h.handle(request(path));
          results.push(shape(((await settle(readAll(response.body as any))) as any).error));
        }
        expect(results).toEqual([
          ["Error", "aborted", "ECONNRESET"],
          ["Error", "aborted", "ECONNRESET"],
          ["Error", "aborted", "ECONNRESET"],
        ]);
      });
    }

    it("abort after the headers, body unread: no crash; an async iterator and pipeline() later get the error", async () => {
      const mine = sockeye();
      const shapes = [];
      for (const reader of ["iterator", "pipeline"] as const) {
        const controller = new AbortController();
        const { response } = await mine.handle(request("/stall"), { abortSignal: controller.signal });
        controller.abort(new Error("caller gave up"));
        await turns();
        expect(uncaught).toEqual([]);
        const read =
          reader === "iterator"
            ? settle(readAll(response.body))
            : settle(pipeline(response.body, new Writable({ write: (_c, _e, cb) => cb() })));
        const r = await read;
        shapes.push(shape((r as any).error));
        expect((r as any).error.cause.name).toBe("AbortError");
        expect((r as any).error.cause.cause.message).toBe("caller gave up");
      }
      expect(shapes).toEqual([
        ["Error", "aborted", "ECONNRESET"],
        ["Error", "aborted", "ECONNRESET"],
      ]);
      expect(leftovers(mine)).toEqual({ armed: 0, inFlight: 0 });
      expect(mine.getPoolStats().origins[0].requests.aborted).toBe(2);
    });

    it("abort mid-body and destroy() mid-body: the same error as NodeHttpHandler's and upstream's", async () => {
      const abortShapes = [];
      const destroyShapes = [];
      for (const make of [sockeye, node, upstream]) {
        const h = make();
        const controller = new AbortController();
        const { response } = await h.handle(request("/stall"), { abortSignal: controller.signal });
        const reading = settle(readAll(response.body as any));
        await turns(1);
        controller.abort();
        abortShapes.push(shape(((await reading) as any).error));
        const other = make();
        const second = await other.handle(request("/stall"));
        const reading2 = settle(readAll(second.response.body as any));
        await turns(1);
        other.destroy();
        destroyShapes.push(shape(((await reading2) as any).error));
      }
      const expected = [
        ["Error", "aborted", "ECONNRESET"],
        ["Error", "aborted", "ECONNRESET"],
        ["Error", "aborted", "ECONNRESET"],
      ];
      expect(abortShapes).toEqual(expected);
      expect(destroyShapes).toEqual(expected);
    });

    it("destroy() with bodies unread: no crash; each later reader gets the error, its cause HandlerDestroyedError", async () => {
      const mine = sockeye();
      const bodies = [];
      for (let i = 0; i < 3; i++) bodies.push((await mine.handle(request("/stall"))).response.body);
      mine.destroy();
      await turns();
      expect(uncaught).toEqual([]);
      for (const body of bodies) {
        const r = await settle(streamCollector(body));
        expect(shape((r as any).error)).toEqual(["Error", "aborted", "ECONNRESET"]);
        expect((r as any).error.cause.name).toBe("HandlerDestroyedError");
      }
    });

    it("a body with an 'error' listener gets the error at once (as IncomingMessage)", async () => {
      const mine = sockeye();
      const { response } = await mine.handle(request("/reset-mid"));
      const seen: Error[] = [];
      response.body.on("error", (e: Error) => seen.push(e));
      await waitFor(() => seen.length === 1, "the error event");
      expect(shape(seen[0])).toEqual(["Error", "aborted", "ECONNRESET"]);
    });
  });
}
