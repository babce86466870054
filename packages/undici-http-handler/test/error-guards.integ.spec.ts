/**
 * The public error guards of `@sockeye/pool-monitor` (re-exported by both handler packages) recognise the errors
 * real requests fail with on every handler (NodeHttpHandler, NodeHttp2Handler, UndiciHttpHandler): each deadline
 * (with the deadline it names), an abort (with the signal's reason as `cause`), `destroy()`. The errors keep their
 * upstream shape (`name`, `code`); the guards read only the brand. Real loopback servers (port 0), real timers with
 * short deadlines; every promise settles and every server closes.
 */
import {
  isSockeyeAbortError as nodeIsAbort,
  isSockeyeTimeoutError as nodeIsTimeout,
  NodeHttp2Handler,
  NodeHttpHandler,
} from "@sockeye/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import http from "node:http";
import http2 from "node:http2";
import type net from "node:net";
import { afterAll, beforeAll, describe, expect, test as it } from "vitest";
import { startSilentTcpServer } from "../../node-http-handler/test/servers";
import {
  isConnectionResetError,
  isHandlerDestroyedError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  sockeyeErrorKind,
  UndiciHttpHandler,
} from "../src/index";
import { quiet, settle } from "./async-faults";

type Handler = {
  handle(request: HttpRequest, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
  destroy(): void;
};

interface Holding {
  port: number;
  close(): Promise<void>;
}

/** An HTTP/1.1 server that reads each request and never answers. */
async function holdingHttpServer(): Promise<Holding> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req) => req.resume());
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A cleartext HTTP/2 server that accepts each stream and never answers. */
async function holdingH2cServer(): Promise<Holding> {
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createServer();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
    s.on("error", () => {});
  });
  server.on("stream", (stream) => {
    stream.on("error", () => {});
    stream.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: async () => {
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function get(protocol: "http:" | "https:", port: number): HttpRequest {
  return new HttpRequest({
    protocol,
    hostname: "127.0.0.1",
    port,
    method: "GET",
    path: "/hold",
    headers: { host: `127.0.0.1:${port}` },
  });
}

/** Runs `fn` with a handler built by `make`, destroys it, and returns the settled outcome of `fn`'s promise. */
async function failureOf(
  make: () => Handler,
  fn: (h: Handler) => Promise<unknown>
): Promise<Error & { code?: string; deadline?: string }> {
  const handler = make();
  try {
    const outcome = await settle(fn(handler));
    expect(outcome.ok, "the request must fail").toBe(false);
    return (outcome as { error: Error & { code?: string } }).error;
  } finally {
    handler.destroy();
  }
}

/**
 * A request to `port` aborted 50 ms in with an `Error` reason: its rejection is an abort whose `cause` is that reason,
 * recognised by this package's guards and by the other package's (another copy of `@sockeye/pool-monitor` here:
 * CommonJS vs ESM), since the brand is registered, not a module-local symbol or class.
 */
async function expectAbortGuarded(make: () => Handler, port: number): Promise<void> {
  const reason = new Error("caller gave up");
  const e = await failureOf(make, (h) => {
    const controller = new AbortController();
    const p = h.handle(get("http:", port), { abortSignal: controller.signal });
    setTimeout(() => controller.abort(reason), 50);
    return p;
  });
  expect(e.name).toBe("AbortError");
  expect(e.cause).toBe(reason);
  expect([isSockeyeAbortError(e), isSockeyeTimeoutError(e), isHandlerDestroyedError(e)]).toEqual([true, false, false]);
  expect([nodeIsAbort(e), nodeIsTimeout(e)]).toEqual([true, false]);
}

const HTTP1: Array<[string, (options: Record<string, unknown>) => Handler]> = [
  ["NodeHttpHandler", (o) => new NodeHttpHandler({ logger: quiet, ...o }) as Handler],
  ["UndiciHttpHandler", (o) => new UndiciHttpHandler({ logger: quiet, ...o }) as Handler],
];

let hold: Holding;
let holdH2: Holding;
let silent: Awaited<ReturnType<typeof startSilentTcpServer>>;

beforeAll(async () => {
  [hold, holdH2, silent] = await Promise.all([holdingHttpServer(), holdingH2cServer(), startSilentTcpServer()]);
});

afterAll(async () => {
  await Promise.all([hold.close(), holdH2.close(), silent.close()]);
});

describe.each(HTTP1)("%s: real failures pass the guards", (_name, make) => {
  it("requestTimeout (throwOnRequestTimeout): a timeout naming the request deadline, TimeoutError ETIMEDOUT", async () => {
    const e = await failureOf(
      () => make({ requestTimeout: 100, throwOnRequestTimeout: true }),
      (h) => h.handle(get("http:", hold.port))
    );
    expect([e.name, e.code]).toEqual(["TimeoutError", "ETIMEDOUT"]);
    expect(isSockeyeTimeoutError(e)).toBe(true);
    expect(e.deadline).toBe("request");
    expect([isSockeyeAbortError(e), isHandlerDestroyedError(e), isConnectionResetError(e)]).toEqual([
      false,
      false,
      false,
    ]);
  });

  it("socketTimeout: a timeout naming the idle deadline", async () => {
    const e = await failureOf(
      () => make({ socketTimeout: 100 }),
      (h) => h.handle(get("http:", hold.port))
    );
    expect(e.name).toBe("TimeoutError");
    expect(isSockeyeTimeoutError(e) && e.deadline).toBe("idle");
  });

  it("connectionTimeout (a TLS handshake that never completes): a timeout naming the connection deadline", async () => {
    const e = await failureOf(
      () => make({ connectionTimeout: 100 }),
      (h) => h.handle(get("https:", silent.port))
    );
    expect(e.name).toBe("TimeoutError");
    expect(isSockeyeTimeoutError(e) && e.deadline).toBe("connection");
  });

  it("socketAcquisitionTimeout: a timeout naming the acquisition deadline, ETIMEDOUT", async () => {
    const handler = make({ socketAcquisitionTimeout: 100, httpAgent: { maxSockets: 1 } });
    try {
      const first = settle(handler.handle(get("http:", hold.port)));
      const second = await settle(handler.handle(get("http:", hold.port)));
      const e = (second as { error: Error & { code?: string; deadline?: string } }).error;
      expect([e.name, e.code]).toEqual(["TimeoutError", "ETIMEDOUT"]);
      expect(isSockeyeTimeoutError(e) && e.deadline).toBe("acquisition");
      handler.destroy();
      const firstOutcome = (await first) as { ok: boolean; error?: unknown };
      expect(firstOutcome.ok).toBe(false);
      expect(isHandlerDestroyedError(firstOutcome.error)).toBe(true);
    } finally {
      handler.destroy();
    }
  });

  it("abort: an abort whose cause is the signal's reason", async () => {
    await expectAbortGuarded(() => make({}), hold.port);
  });

  it("destroy() in flight: a handler-destroyed error, HandlerDestroyedError ERR_HANDLER_DESTROYED", async () => {
    const e = await failureOf(
      () => make({}),
      (h) => {
        const p = h.handle(get("http:", hold.port));
        setTimeout(() => h.destroy(), 50);
        return p;
      }
    );
    expect([e.name, e.code]).toEqual(["HandlerDestroyedError", "ERR_HANDLER_DESTROYED"]);
    expect(isHandlerDestroyedError(e)).toBe(true);
    expect(sockeyeErrorKind(e)).toBe("handler_destroyed");
  });
});

describe("NodeHttp2Handler: real failures pass the guards", () => {
  const make = (o: Record<string, unknown>) => new NodeHttp2Handler({ logger: quiet, ...o }) as Handler;

  it("requestTimeout (stream inactivity, as upstream): a timeout naming the idle deadline", async () => {
    const e = await failureOf(
      () => make({ requestTimeout: 100 }),
      (h) => h.handle(get("http:", holdH2.port))
    );
    expect(e.name).toBe("TimeoutError");
    expect(isSockeyeTimeoutError(e) && e.deadline).toBe("idle");
  });

  it("connectionTimeout (a session whose TLS never completes): a timeout naming the connection deadline", async () => {
    const e = await failureOf(
      () => make({ connectionTimeout: 100 }),
      (h) => h.handle(get("https:", silent.port))
    );
    expect([e.name, e.code]).toEqual(["TimeoutError", "ETIMEDOUT"]);
    expect(isSockeyeTimeoutError(e) && e.deadline).toBe("connection");
  });

  it("abort: an abort whose cause is the signal's reason", async () => {
    await expectAbortGuarded(() => make({}), holdH2.port);
  });
});
