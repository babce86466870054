/**
 * `socketTimeout` on real loopback http and https servers (127.0.0.1, port 0), through every kind of dispatcher:
 * the handler-owned undici 7 `Agent` (request-body progress observed: undici's own timeouts off), an undici 7 `Agent`
 * passed as `dispatcher` (undici 7's native callbacks), an undici 7 `Agent` behind a plain wrapper (the controller
 * API on undici 7, which reports no request-body progress: undici's headersTimeout stays the backstop of the wait
 * for headers) and, on Node >= 22.19, an undici 8 `Agent` passed as `dispatcher`.
 *
 *   /stall-headers   the request is read, no response (until the socket closes)
 *   /stall-body      200, content-length 100, 10 bytes, then silence
 *   /trickle         200, 8 chunks of 5 bytes, one every TIMEOUT / 3 ms (the whole body takes ~2.7 × TIMEOUT)
 *   /upload          reads the request body to its end, then 200 with its length
 *   /no-read         never reads the request body, never answers (the upload stalls once the buffers are full)
 *   /dynamo…         the first request of each path stalls before headers; the next gets a DynamoDB `{}`
 *
 * After each case: every promise settled, nothing armed on the handler's scheduler, no connection left open.
 * Whether the scheduler (not undici's fast timers) fired is told by the cause: undici's own timeout errors are
 * instances of its error classes; the scheduler's cause is a plain `Error` with undici's code.
 */
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { HttpRequest } from "@smithy/protocol-http";
import { once } from "node:events";
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { Readable } from "node:stream";
import * as undici7 from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CA, KEY, readAll, waitFor } from "../../node-http-handler/test/servers";
import type { DispatcherLike } from "./dispatcher-like";
import { UndiciHttpHandler } from "./undici-http-handler";

const TIMEOUT = 150;
const MESSAGE = `@sockeye/undici-http-handler - the request socket timed out after ${TIMEOUT} ms of inactivity (configured by client requestHandler).`;
const quiet = { debug() {}, info() {}, error() {}, trace() {}, warn() {} };
const [major, minor] = process.versions.node.split(".").map(Number);
const UNDICI_8_RUNS = major > 22 || (major === 22 && minor >= 19);

const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => uncaught.push(error);
beforeAll(() => {
  process.on("uncaughtException", onUncaught);
  process.on("unhandledRejection", onUncaught);
});
afterAll(() => {
  process.off("uncaughtException", onUncaught);
  process.off("unhandledRejection", onUncaught);
});

interface StallServer {
  protocol: "http:" | "https:";
  port: number;
  readonly open: number;
  readonly requests: Map<string, number>;
  /** Resumes the `/no-read` requests: a paused server socket does not see the client's close until it reads. */
  readAgain(): void;
  close(): Promise<void>;
}

async function startStallServer(kind: "http" | "https"): Promise<StallServer> {
  const sockets = new Set<net.Socket>();
  const requests = new Map<string, number>();
  const noRead = new Set<http.IncomingMessage>();
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = req.url ?? "/";
    const seen = (requests.get(path) ?? 0) + 1;
    requests.set(path, seen);
    if (path === "/stall-headers") return void req.resume();
    if (path === "/stall-body") {
      res.writeHead(200, { "content-length": "100" });
      return void res.write("0123456789");
    }
    if (path === "/trickle") {
      res.writeHead(200, { "content-length": "40" });
      let sent = 0;
      const next = () => {
        if (res.destroyed) return;
        res.write("abcde");
        if (++sent === 8) res.end();
        else setTimeout(next, TIMEOUT / 3);
      };
      return void setTimeout(next, TIMEOUT / 3);
    }
    if (path === "/upload") {
      let length = 0;
      req.on("data", (chunk: Buffer) => {
        length += chunk.length;
      });
      return void req.on("end", () => res.end(String(length)));
    }
    if (path === "/no-read") {
      noRead.add(req);
      return void req.pause();
    }
    if (path.startsWith("/dynamo")) {
      req.resume();
      if (seen === 1) return;
      return void res.writeHead(200, { "content-type": "application/x-amz-json-1.0" }).end("{}");
    }
    res.end("ok");
  };
  const server =
    kind === "https" ? https.createServer({ key: KEY, cert: CA }, onRequest) : http.createServer(onRequest);
  server.on(kind === "https" ? "secureConnection" : "connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    protocol: kind === "https" ? "https:" : "http:",
    port: (server.address() as net.AddressInfo).port,
    get open() {
      return sockets.size;
    },
    requests,
    readAgain() {
      for (const req of noRead) req.resume();
      noRead.clear();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}

type Settled = { ok: true; value: any } | { ok: false; error: any };
async function settle(p: Promise<unknown>): Promise<Settled> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

/** A request body of 8 chunks of 1 KiB, one every TIMEOUT / 3 ms: slower than the timeout in total, not per chunk. */
function slowUpload(): Readable {
  let pushed = 0;
  return new Readable({
    read() {
      setTimeout(() => this.push(++pushed > 8 ? null : Buffer.alloc(1024, 97)), TIMEOUT / 3);
    },
  });
}

/** A request body as fast as the socket takes it (64 KiB chunks, at most 1 GiB): it stalls when the server stops reading. */
function fastUpload(): Readable {
  const chunk = Buffer.alloc(64 * 1024, 98);
  let pushed = 0;
  return new Readable({
    read() {
      this.push(++pushed > 16 * 1024 ? null : chunk);
    },
  });
}

/** A plain object in front of an undici 7 dispatcher: not an undici 7 instance, so it gets the controller API. */
function plain(inner: DispatcherLike): DispatcherLike {
  return {
    dispatch: (options, handler) => inner.dispatch(options, handler),
    close: () => inner.close(),
    destroy: (error) => inner.destroy(error),
  };
}

type Setup = {
  label: string;
  /** Whether the wait for headers is timed by the scheduler (else undici's headersTimeout, the backstop). */
  headersOnScheduler: boolean;
  make: () => Promise<UndiciHttpHandler>;
};

const common = { socketTimeout: TIMEOUT, logger: quiet as any };
const setups: Setup[] = [
  {
    label: "the handler-owned undici 7 Agent",
    headersOnScheduler: true,
    make: async () => new UndiciHttpHandler({ ...common, httpsAgent: { ca: CA } }),
  },
  {
    label: "an undici 7 Agent as dispatcher",
    headersOnScheduler: true,
    make: async () => new UndiciHttpHandler({ ...common, dispatcher: new undici7.Agent({ connect: { ca: CA } }) }),
  },
  {
    label: "an undici 7 Agent behind a plain wrapper (controller API, no upload progress)",
    headersOnScheduler: false,
    make: async () =>
      new UndiciHttpHandler({
        ...common,
        dispatcher: plain(new undici7.Agent({ connect: { ca: CA } }) as unknown as DispatcherLike) as any,
      }),
  },
];
if (UNDICI_8_RUNS) {
  setups.push({
    label: "an undici 8 Agent as dispatcher",
    headersOnScheduler: true,
    make: async () => {
      const name = "undici-8"; // a variable specifier: never resolved on Node < 22.19
      const lib = (await import(name)) as { Agent: new (options: object) => DispatcherLike };
      return new UndiciHttpHandler({ ...common, dispatcher: new lib.Agent({ connect: { ca: CA } }) as any });
    },
  });
}

for (const kind of ["http", "https"] as const) {
  describe(`socketTimeout over ${kind}`, () => {
    let server: StallServer;
    beforeAll(async () => {
      server = await startStallServer(kind);
    });
    afterAll(async () => {
      await server.close();
    });

    for (const setup of setups) {
      describe(setup.label, () => {
        let h: UndiciHttpHandler;
        const request = (path: string, method = "GET", body?: Readable) =>
          new HttpRequest({
            protocol: server.protocol,
            hostname: "127.0.0.1",
            port: server.port,
            method,
            path,
            headers: { host: `127.0.0.1:${server.port}` },
            body,
          });
        beforeEach(async () => {
          uncaught.length = 0;
          h = await setup.make();
        });
        afterEach(async () => {
          expect((h as any).scheduler.size).toBe(0);
          expect(h.getPoolStats().totals.inFlight).toBe(0);
          h.destroy();
          await waitFor(() => server.open === 0, "every connection closed");
          expect(uncaught).toEqual([]);
        });

        it("a server that stalls before the headers: TimeoutError after the timeout, never before; the connection closed", async () => {
          const started = performance.now();
          const r = await settle(h.handle(request("/stall-headers")));
          const elapsed = performance.now() - started;
          expect(r.ok).toBe(false);
          const error = (r as { error: any }).error;
          expect([error.name, error.message]).toEqual(["TimeoutError", MESSAGE]);
          expect(error.cause.code).toBe("UND_ERR_HEADERS_TIMEOUT");
          expect(error.cause.constructor === Error).toBe(setup.headersOnScheduler);
          expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT - 1);
          await waitFor(() => server.open === 0, "the timed-out connection closed");
        });

        it("a server that stalls mid-body: the body fails with the TimeoutError, fired by the scheduler", async () => {
          const { response } = await h.handle(request("/stall-body"));
          expect(response.statusCode).toBe(200);
          const r = await settle(readAll(response.body));
          expect(r.ok).toBe(false);
          const error = (r as { error: any }).error;
          expect([error.name, error.message]).toEqual(["TimeoutError", MESSAGE]);
          expect(error.cause.code).toBe("UND_ERR_BODY_TIMEOUT");
          expect(error.cause.constructor).toBe(Error);
          await waitFor(() => server.open === 0, "the timed-out connection closed");
        });

        it("a body trickled slower than the timeout in total but faster per chunk completes", async () => {
          const started = performance.now();
          const { response } = await h.handle(request("/trickle"));
          const body = (await readAll(response.body)).toString();
          expect(body).toBe("abcde".repeat(8));
          expect(performance.now() - started).toBeGreaterThan(TIMEOUT * 2);
        });

        it("a slow but progressing upload (slower than the timeout in total) does not time out", async () => {
          const started = performance.now();
          const r = await settle(h.handle(request("/upload", "PUT", slowUpload())));
          expect(r.ok).toBe(true);
          const { response } = (r as { value: any }).value;
          expect(response.statusCode).toBe(200);
          expect((await readAll(response.body)).toString()).toBe(String(8 * 1024));
          expect(performance.now() - started).toBeGreaterThan(TIMEOUT * 2);
        });

        it("an upload the server stops reading times out (no progress for socketTimeout); the connection closed", async () => {
          const r = await settle(h.handle(request("/no-read", "PUT", fastUpload())));
          expect(r.ok).toBe(false);
          const error = (r as { error: any }).error;
          expect([error.name, error.message]).toEqual(["TimeoutError", MESSAGE]);
          expect(error.cause.code).toBe("UND_ERR_HEADERS_TIMEOUT");
          expect(error.cause.constructor === Error).toBe(setup.headersOnScheduler);
          server.readAgain();
          await waitFor(() => server.open === 0, "the timed-out connection closed");
        });
      });
    }

    it("the SDK retries it: a DynamoDB GetItem whose first attempt stalls before headers succeeds on the second", async () => {
      uncaught.length = 0;
      const path = `/dynamo-${kind}`;
      const handler = new UndiciHttpHandler({ ...common, httpsAgent: { ca: CA } });
      const client = new DynamoDBClient({
        endpoint: `${server.protocol}//127.0.0.1:${server.port}${path}`,
        region: "us-east-1",
        credentials: { accessKeyId: "a", secretAccessKey: "b" },
        requestHandler: handler,
        logger: quiet as any,
      });
      const out = await client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "a" } } }));
      expect(out.$metadata.attempts).toBe(2);
      expect(server.requests.get(`${path}/`)).toBe(2);
      expect((handler as any).scheduler.size).toBe(0);
      client.destroy();
      await waitFor(() => server.open === 0, "every connection closed");
      expect(uncaught).toEqual([]);
    });
  });
}
