/**
 * HTTP/2 faults side by side with upstream `NodeHttp2Handler` (`@smithy/node-http-handler` 4.14.2), over TLS
 * (`http2.createSecureServer`) AND cleartext h2c (`http2.createServer`, prior knowledge; both handlers support
 * `http:` origins). Each fault runs through upstream first, then Sockeye, against the same server; the outcome (the
 * `handle()` result and, when it resolved, the body read with `'data'`/`'end'` listeners as the SDK's stream
 * collector does) is reduced to plain data. Sockeye must match upstream, except for the differences listed in
 * `DIFFERENCES` (each one asserted exactly, and documented in docs/upstream-parity.md).
 *
 * After each run, counts: the `handle()` promise and the body settled (a hang fails the test), no listener left on
 * the abort signal, and after `destroy()` the server sees no session; for Sockeye also no handler-side session open,
 * no stream in flight, no deadline armed on the shared scheduler and nothing on the idle watch.
 */
import { NodeHttp2Handler as UpstreamNodeHttp2Handler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { getEventListeners } from "node:events";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler } from "../../src/index";
import { CA, type H2TestServer, startH2Server, waitFor } from "./h2-servers";

type Shape = { name: string; code?: string; message: string; cause?: { code?: string; message: string } };
type Outcome = { rejected: Shape } | { status: number; body: string } | { status: number; bodyError: Shape };

interface Fault {
  name: string;
  path: string;
  /** Builds the request body (a fresh one per run). */
  body?: () => Readable;
  /** Sends to a port nobody listens on. */
  refused?: boolean;
}

const FAULTS: Fault[] = [
  { name: "RST_STREAM before the response", path: "/rst" },
  { name: "RST_STREAM mid-body", path: "/rst-mid-body" },
  { name: "GOAWAY before the response", path: "/goaway" },
  { name: "GOAWAY mid-body", path: "/goaway-mid-body" },
  { name: "server dies with the stream open", path: "/die" },
  { name: "server dies mid-body", path: "/die-mid-body" },
  { name: "session closed mid-body (GOAWAY NO_ERROR + close)", path: "/close-mid-body" },
  { name: "refused connection", path: "/echo", refused: true },
  { name: "Readable request body", path: "/echo", body: () => Readable.from([Buffer.from("a"), Buffer.from("b")]) },
  {
    name: "Readable request body that fails",
    path: "/echo",
    body: () => {
      const body = new Readable({ read() {} });
      body.push("a");
      setTimeout(() => body.destroy(new Error("body failed")), 20);
      // Upstream has no error listener on the body: without this one its error would be an uncaught exception.
      body.on("error", () => {});
      return body;
    },
  },
];

/** A body cut mid-way, as Sockeye reports it. */
const CUT: Outcome = {
  status: 200,
  bodyError: { name: "Error", message: "HTTP/2 stream is abnormally aborted in mid-communication with result code 8." },
};

/** Where Sockeye deliberately differs: the exact outcome of each side. Everything else must be equal. */
const DIFFERENCES: Record<string, { upstream: Outcome; sockeye: Outcome }> = {
  // Node ends a body cut by a dying connection as if it were complete; upstream hands the truncated body on.
  "server dies mid-body": { upstream: { status: 200, body: "part" }, sockeye: CUT },
  "session closed mid-body (GOAWAY NO_ERROR + close)": {
    upstream: { status: 200, body: "part" },
    sockeye: CUT,
  },
  // Upstream opens the stream on the connecting session, so Node cancels it; Sockeye waits for SETTINGS first and
  // rejects with the connection error itself (the same code upstream carries as `cause`).
  "refused connection": {
    upstream: {
      rejected: {
        name: "Error",
        code: "ERR_HTTP2_STREAM_CANCEL",
        message: "The pending stream has been canceled (caused by: connect ECONNREFUSED 127.0.0.1:<port>)",
        cause: { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:<port>" },
      },
    },
    sockeye: { rejected: { name: "Error", code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:<port>" } },
  },
  // Upstream never listens to the body's errors: the stream waits for requestTimeout and then reports an abort
  // with code 0. Sockeye rejects at once with the body's own error.
  "Readable request body that fails": {
    upstream: {
      rejected: {
        name: "Error",
        message: "HTTP/2 stream is abnormally aborted in mid-communication with result code 0.",
      },
    },
    sockeye: { rejected: { name: "Error", message: "body failed" } },
  },
};

function shape(error: unknown, port: number): Shape {
  const e = error as Error & { code?: string; cause?: Error & { code?: string } };
  const clean = (m: unknown) => String(m).replaceAll(`:${port}`, ":<port>");
  const out: Shape = { name: e.name, message: clean(e.message) };
  if (e.code !== undefined) out.code = e.code;
  if (e.cause !== undefined) {
    out.cause = { message: clean(e.cause.message) };
    if (e.cause.code !== undefined) out.cause.code = e.cause.code;
  }
  return out;
}

/** Reads a body the way the SDK's stream collector does ('data' + 'end' / 'error'); rejects after 3 s (a hang). */
function collect(body: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const guard = setTimeout(() => reject(new Error("body hung")), 3000);
    body.on("data", (chunk: Buffer) => {
      text += chunk.toString();
    });
    body.on("end", () => {
      clearTimeout(guard);
      resolve(text);
    });
    body.on("error", (error) => {
      clearTimeout(guard);
      reject(error);
    });
  });
}

function withGuard<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error("handle() hung")), 3000)),
  ]);
}

for (const tls of [true, false]) {
  describe(`NodeHttp2Handler faults vs upstream 4.14.2 (${tls ? "https, createSecureServer" : "cleartext h2c"})`, () => {
    let server: H2TestServer;
    let refusedPort = 0;
    beforeAll(async () => {
      server = await startH2Server({ tls });
      const closed = await startH2Server({ tls });
      refusedPort = closed.port;
      await closed.close();
    });
    afterAll(async () => {
      await server.close();
    });

    async function run(kind: "upstream" | "sockeye", fault: Fault): Promise<Outcome> {
      // requestTimeout leaves the connect and TLS handshake ample time on a loaded machine: the faults must win the race.
      const options = { nodeHttp2ConnectOptions: { ca: CA }, requestTimeout: 1000 };
      const handler =
        kind === "upstream" ? new UpstreamNodeHttp2Handler(options) : new NodeHttp2Handler(options as never);
      const controller = new AbortController();
      const port = fault.refused ? refusedPort : server.port;
      const body = fault.body?.();
      const request = new HttpRequest({
        protocol: server.protocol,
        hostname: "localhost",
        port,
        method: body ? "POST" : "GET",
        path: fault.path,
        headers: {},
        body,
      });
      let result: Outcome;
      try {
        const { response } = await withGuard(handler.handle(request, { abortSignal: controller.signal as never }));
        try {
          result = { status: response.statusCode, body: await collect(response.body) };
        } catch (error) {
          expect((error as Error).message).not.toMatch(/hung/);
          result = { status: response.statusCode, bodyError: shape(error, port) };
        }
      } catch (error) {
        expect((error as Error).message).not.toBe("handle() hung");
        result = { rejected: shape(error, port) };
      }
      if ("body" in result && fault.path === "/echo") result.body = JSON.parse(result.body).body;
      // Counts: nothing left on the signal once the stream closed; nothing open after destroy().
      await waitFor(() => getEventListeners(controller.signal, "abort").length === 0, 2000);
      handler.destroy();
      if (kind === "sockeye") {
        const h = handler as NodeHttp2Handler;
        const pool = (h as unknown as { pool: { sharedScheduler: { size: number } } }).pool;
        await waitFor(() => {
          const stats = h.getPoolStats();
          const http2 = stats.origins[0]?.http2;
          return stats.totals.inFlight === 0 && (http2?.sessionsOpen ?? 0) + (http2?.isolatedSessionsOpen ?? 0) === 0;
        }, 2000);
        expect(pool.sharedScheduler.size).toBe(0);
      }
      await waitFor(() => server.sessionsOpen === 0, 2000);
      return result;
    }

    it.each(FAULTS.map((f) => [f.name, f] as const))("%s", async (name, fault) => {
      const upstream = await run("upstream", fault);
      const sockeye = await run("sockeye", fault);
      const difference = DIFFERENCES[name];
      if (difference !== undefined) {
        expect(upstream).toEqual(difference.upstream);
        expect(sockeye).toEqual(difference.sockeye);
      } else {
        expect(sockeye).toEqual(upstream);
      }
      // Every fault has a definite outcome; only the plain Readable body succeeds.
      if (fault.name === "Readable request body") expect(sockeye).toEqual({ status: 200, body: "ab" });
      else expect("rejected" in sockeye || "bodyError" in sockeye).toBe(true);
    });
  });
}
