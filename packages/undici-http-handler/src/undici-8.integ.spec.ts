/**
 * Caller dispatchers from undici 8 (the `undici-8` devDependency alias, undici@8.13.1), over http AND https on
 * 127.0.0.1: an `Agent` and a `Pool` passed as `dispatcher` carry requests (bodies, abort at each phase, a failing
 * body, `destroy()`), and an aborted request waiting in undici 8's queue costs no connection. undici 8 needs
 * Node >= 22.19: on older Node the suite is skipped, visibly (its name says why); CI runs it on Node 22 and 24
 * (scripts/test-other-nodes.sh). The same cases run with undici 7's `Agent` and `Pool` as a control.
 */
import { setMaxListeners } from "node:events";
import { HttpRequest } from "@smithy/protocol-http";
import * as undici7 from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CA, readAll, waitFor } from "../../node-http-handler/test/servers";
import { type BodyFaultServer, startBodyFaultServer } from "./body-fault-server.mock";
import type {
  Agent as Agent8,
  Client as Client8,
  EnvHttpProxyAgent as EnvHttpProxyAgent8,
  Pool as Pool8,
  ProxyAgent as ProxyAgent8,
} from "undici-8";
import type { DispatcherLike } from "./dispatcher-like";
import { quiet, recordAsyncFaults, settle } from "../test/async-faults";
import { UndiciHttpHandler } from "./undici-http-handler";
import type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";

/** Compile-time (the package typecheck): the option's type takes undici 7 and undici 8 dispatchers as they are. */
type Accepts<T extends NonNullable<UndiciHttpHandlerOptions["dispatcher"]>> = T;
export type DispatchersAccepted = [
  Accepts<Agent8>,
  Accepts<Pool8>,
  Accepts<Client8>,
  Accepts<ProxyAgent8>,
  Accepts<EnvHttpProxyAgent8>,
  Accepts<undici7.Agent>,
  Accepts<undici7.Pool>,
  Accepts<undici7.ProxyAgent>,
];

const [major, minor] = process.versions.node.split(".").map(Number);
const UNDICI_8_RUNS = major > 22 || (major === 22 && minor >= 19);

const { uncaught } = recordAsyncFaults();

type UndiciModule = {
  Agent: new (options?: any) => DispatcherLike;
  Pool: new (origin: string, options?: any) => DispatcherLike;
};

function suite(label: string, load: () => Promise<UndiciModule>): void {
  for (const kind of ["http", "https"] as const) {
    describe(`${label} dispatchers over ${kind}`, () => {
      let server: BodyFaultServer;
      let lib: UndiciModule;
      const handlers: UndiciHttpHandler[] = [];
      const request = (path: string) =>
        new HttpRequest({
          protocol: server.protocol,
          hostname: server.hostname,
          port: server.port,
          method: "GET",
          path,
          headers: { host: `${server.hostname}:${server.port}` },
        });
      const origin = () => `${server.protocol}//${server.hostname}:${server.port}`;
      function make(which: "Agent" | "Pool", connections?: number): UndiciHttpHandler {
        const options = { connect: { ca: CA }, ...(connections !== undefined ? { connections } : {}) };
        const dispatcher = which === "Agent" ? new lib.Agent(options) : new lib.Pool(origin(), options);
        // Typed structurally: an undici 8 (or 7) dispatcher is accepted as is.
        const h = new UndiciHttpHandler({ dispatcher, logger: quiet as any });
        handlers.push(h);
        return h;
      }
      beforeAll(async () => {
        lib = await load();
        server = await startBodyFaultServer(kind);
      });
      beforeEach(() => {
        uncaught.length = 0;
      });
      afterEach(async () => {
        server.release();
        for (const h of handlers.splice(0)) h.destroy();
        await waitFor(() => server.openConnections === 0, "every connection closed");
        expect(uncaught).toEqual([]);
      });
      afterAll(async () => {
        await server?.close();
      });

      for (const which of ["Agent", "Pool"] as const) {
        it(`${which}: requests and bodies; abort while waiting for headers and mid-body; a failing body`, async () => {
          const h = make(which);
          const before = server.connections;
          const { response } = await h.handle(request("/ok"));
          expect(response.statusCode).toBe(200);
          expect((await readAll(response.body)).toString()).toBe("ok");
          // A large body read slowly: paused and resumed through the controller, every byte in order.
          const big = await h.handle(request("/big"));
          const chunks: Buffer[] = [];
          for await (const chunk of big.response.body) {
            chunks.push(chunk);
            if (chunks.length % 8 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
          }
          const all = Buffer.concat(chunks);
          expect(all.length).toBe(4 * 1024 * 1024);
          expect(all[123_457]).toBe(123_457 & 255);
          // Abort while the server holds the request.
          const c1 = new AbortController();
          const held = settle(h.handle(request("/hold"), { abortSignal: c1.signal }));
          await waitFor(() => server.held === 1, "held");
          c1.abort(new Error("stop"));
          expect([((await held) as any).error.name, ((await held) as any).error.cause.message]).toEqual([
            "AbortError",
            "stop",
          ]);
          // Abort mid-body: NodeHttpHandler's body error.
          const c2 = new AbortController();
          const stalled = await h.handle(request("/stall"), { abortSignal: c2.signal });
          const reading = settle(readAll(stalled.response.body));
          c2.abort();
          const r = (await reading) as any;
          expect([r.error.name, r.error.message, r.error.code]).toEqual(["Error", "aborted", "ECONNRESET"]);
          // A body cut short.
          const cut = await h.handle(request("/fin-close"));
          const rc = (await settle(readAll(cut.response.body))) as any;
          expect([rc.error.message, rc.error.code]).toEqual(["aborted", "ECONNRESET"]);
          expect(server.connections - before).toBeGreaterThanOrEqual(1);
          expect(h.getPoolStats().totals.inFlight).toBe(0);
        });

        it(`${which}: aborted requests queued in undici's queue cost no connection`, async () => {
          const h = make(which, 1);
          const before = server.connections;
          const held = settle(h.handle(request("/hold")).then(({ response }) => readAll(response.body)));
          await waitFor(() => server.held === 1, "the connection holds a request");
          const controller = new AbortController();
          setMaxListeners(0, controller.signal);
          const queued = Array.from({ length: 5 }, () =>
            settle(h.handle(request("/ok"), { abortSignal: controller.signal }))
          );
          await new Promise((resolve) => setTimeout(resolve, 20));
          controller.abort();
          for (const q of await Promise.all(queued)) expect((q as any).error.name).toBe("AbortError");
          server.release();
          expect((await held).ok).toBe(true);
          const after = await h.handle(request("/ok"));
          await readAll(after.response.body);
          expect(server.connections - before).toBe(1);
        });

        it(`${which}: destroy() rejects in-flight requests with HandlerDestroyedError and destroys the dispatcher`, async () => {
          const h = make(which);
          const held = settle(h.handle(request("/hold")));
          await waitFor(() => server.held === 1, "held");
          h.destroy();
          const r = (await held) as any;
          expect([r.error.name, r.error.code]).toEqual(["HandlerDestroyedError", "ERR_HANDLER_DESTROYED"]);
        });
      }
    });
  }
}

suite("undici 7 (control)", async () => undici7 as unknown as UndiciModule);

/** A plain object in front of an undici 7 dispatcher: not an undici 7 instance, so it gets the controller API. */
function plain(inner: DispatcherLike): DispatcherLike {
  return {
    dispatch: (options, handler) => inner.dispatch(options, handler),
    close: () => inner.close(),
    destroy: (error) => inner.destroy(error),
  };
}

suite("undici 7 through a plain wrapper (controller API on undici 7)", async () => ({
  Agent: function Agent(options?: any) {
    return plain(new undici7.Agent(options) as unknown as DispatcherLike);
  } as unknown as UndiciModule["Agent"],
  Pool: function Pool(origin: string, options?: any) {
    return plain(new undici7.Pool(origin, options) as unknown as DispatcherLike);
  } as unknown as UndiciModule["Pool"],
}));

if (UNDICI_8_RUNS) {
  // A variable specifier: on Node < 22.19 the module is never resolved.
  const name = "undici-8";
  suite("undici 8", async () => (await import(name)) as UndiciModule);
} else {
  describe.skip(`undici 8 dispatchers (skipped: undici 8 needs Node >= 22.19; this is Node ${process.versions.node})`, () => {
    it("runs on Node 22 and 24 (scripts/test-other-nodes.sh)", () => {});
  });
}
