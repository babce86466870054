/**
 * Safe with every input: what a caller can put in an `HttpRequest` (protocol spellings, header names and values,
 * credentials, `content-length` against the body, a spent body stream, `servername`), tried on the three Sockeye
 * handlers and side by side with upstream `@smithy/node-http-handler` 4.14.2 (`NodeHttpHandler`, `NodeHttp2Handler`) and
 * `@smithy/undici-http-handler` 3.2.4, against raw recording servers (`raw-recorder.ts`) that show what reached the
 * wire.
 *
 * Sockeye's rule for each: a bad input is a one-line error naming it, before any connection is opened (or, for a body
 * stream that turns out short or long, the request is cut off with no byte past its declared length); nothing hangs;
 * nothing is sent in clear text that asked for TLS; the caller's credentials are the ones sent. The peers' rows record
 * what they do, where that is why the rule exists.
 */
import {
  NodeHttp2Handler as SmithyNodeHttp2Handler,
  NodeHttpHandler as SmithyNodeHttpHandler,
} from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler, NodeHttpHandler } from "../../node-http-handler/src/index";
import { activeResources } from "../../node-http-handler/test/active-resources";
import { processFaultCapture } from "../../node-http-handler/test/process-fault-capture";
import {
  type H2Recorder,
  headerValues,
  type RawRecorder,
  startH2Recorder,
  startRawRecorder,
} from "../../node-http-handler/test/raw-recorder";
import { CA, waitFor } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "../src/index";

type LaneKey = "sockeye-node" | "sockeye-undici" | "sockeye-h2" | "smithy-node" | "smithy-undici" | "smithy-h2";

interface AnyHandler {
  handle(request: HttpRequest, options?: object): Promise<{ response: { statusCode: number; body?: unknown } }>;
  destroy(): void;
}

interface Lane {
  key: LaneKey;
  sockeye: boolean;
  h2: boolean;
  /** The handler, trusting the fixture CA; `agent` adds Node agent options (Sockeye's node and undici handlers). */
  make(agent?: Record<string, unknown>): AnyHandler;
}

const LANES: Lane[] = [
  {
    key: "sockeye-node",
    sockeye: true,
    h2: false,
    make: (agent) => new NodeHttpHandler({ httpsAgent: { ca: CA, ...agent }, httpAgent: { ...agent } }),
  },
  {
    key: "sockeye-undici",
    sockeye: true,
    h2: false,
    make: (agent) => new UndiciHttpHandler({ httpsAgent: { ca: CA, ...agent }, httpAgent: { ...agent } }),
  },
  {
    key: "sockeye-h2",
    sockeye: true,
    h2: true,
    make: (agent) =>
      new NodeHttp2Handler({
        nodeHttp2ConnectOptions: {
          ca: CA,
          ...(typeof agent?.servername === "string" ? { servername: agent.servername } : {}),
        },
        ...(agent?.maxSockets ? { maxSessionsPerOrigin: agent.maxSockets as number } : {}),
      }),
  },
  {
    key: "smithy-node",
    sockeye: false,
    h2: false,
    make: () => new SmithyNodeHttpHandler({ httpsAgent: { ca: CA } }) as unknown as AnyHandler,
  },
  {
    key: "smithy-undici",
    sockeye: false,
    h2: false,
    make: () => new SmithyUndiciHttpHandler({ dispatcher: { connect: { ca: CA } } } as never) as unknown as AnyHandler,
  },
  {
    key: "smithy-h2",
    sockeye: false,
    h2: true,
    make: () => new SmithyNodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } } as never) as unknown as AnyHandler,
  },
];
const SOCKEYE = LANES.filter((l) => l.sockeye);

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

/** Upper bound for a request to settle; a passing run never waits for it. */
const CAP_MS = 1500;

/** A secret header a request carries, to look for in clear text on the wire. */
const TOKEN = "IQoJb3JpZ2luX2VjEJr-session-token";
/** A SigV4 Authorization value, the caller's credentials. */
const SIGV4 = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261207/us-east-1/s3/aws4_request, Signature=abc123";

const capture = processFaultCapture();
beforeAll(() => capture.install());
afterAll(() => capture.uninstall());

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  // No handler crashed the process and nothing was left unhandled, whatever the test asserted.
  expect(capture.take()).toEqual({ uncaught: [], unhandled: [] });
});

/** A recorder for `lane` (HTTP/1.1 raw, or HTTP/2), closed after the test. */
async function recorderFor(lane: Lane, tls: boolean): Promise<Target> {
  if (lane.h2) {
    const r = await startH2Recorder({ tls });
    cleanups.push(() => r.close());
    return { kind: "h2", port: r.port, h2: r };
  }
  const r = await startRawRecorder({ tls });
  cleanups.push(() => r.close());
  return { kind: "h1", port: r.port, h1: r };
}

type Target = { kind: "h1"; port: number; h1: RawRecorder } | { kind: "h2"; port: number; h2: H2Recorder };

/** Connections (HTTP/1.1) or sessions (HTTP/2) the target accepted. */
function accepted(t: Target): number {
  return t.kind === "h1" ? t.h1.connections.length : t.h2.sessions;
}

/** Requests (HTTP/1.1) or streams (HTTP/2) the target received, as header lists and bodies. */
function received(t: Target): { headers: [string, string][]; body: Buffer }[] {
  return t.kind === "h1" ? t.h1.requests : t.h2.streams;
}

interface Outcome {
  state: "resolved" | "rejected" | "pending";
  status?: number;
  error?: { name: string; code?: unknown; message: string };
}

/** A request to 127.0.0.1:`port`; `fields` override (a raw `protocol` is set after construction, unnormalised). */
function request(port: number, tls: boolean, fields: Record<string, unknown> = {}): HttpRequest {
  const { protocol, headers, ...rest } = fields;
  const hostname =
    typeof fields.hostname === "string" && !/[\r\n]/.test(fields.hostname) ? fields.hostname : "127.0.0.1";
  const req = new HttpRequest({
    protocol: tls ? "https:" : "http:",
    hostname: "127.0.0.1",
    port,
    method: "PUT",
    path: "/object",
    // As the SDK sends it: the Host header names the request's host.
    headers: { host: `${hostname}:${port}`, "x-amz-security-token": TOKEN, ...(headers as object) },
    ...rest,
  });
  if ("protocol" in fields) (req as { protocol: unknown }).protocol = protocol;
  return req;
}

/** Records how `promise` (a `handle()` call) settles into `outcome`; the returned promise never rejects. */
function recordOutcome(promise: Promise<unknown>, outcome: Outcome): Promise<void> {
  return promise.then(
    () => {
      outcome.state = "resolved";
    },
    (error: Error & { code?: unknown }) => {
      outcome.state = "rejected";
      outcome.error = { name: error.name, code: error.code, message: error.message };
    }
  );
}

/** The request bytes a recorder received so far (HTTP/1: raw connections; HTTP/2: stream bodies). */
function bytesReceived(target: Target): string {
  return target.kind === "h1"
    ? Buffer.concat(target.h1.connections.map((c) => c.raw)).toString("latin1")
    : Buffer.concat(target.h2.streams.map((s) => s.body)).toString("latin1");
}

/**
 * The server never got a whole request (HTTP/1: no request parsed, the connection closed; HTTP/2: the stream reset
 * without END_STREAM), and once `handler` is destroyed no socket or timer is left beyond `before`.
 */
async function expectCutOffAndReleased(
  target: Target,
  handler: AnyHandler,
  before: ReturnType<typeof activeResources>
): Promise<void> {
  if (target.kind === "h1") {
    expect(target.h1.requests).toHaveLength(0);
    await waitFor(() => target.h1.connections.every((c) => c.closed), "the client to close", CAP_MS);
  } else {
    await waitFor(() => target.h2.streams.every((s) => s.rstCode !== -1), "the stream to close", CAP_MS);
    // Node's close(CANCEL) would end the request side first: the server would take the cut body for a whole one.
    for (const s of target.h2.streams) expect([s.ended, s.rstCode > 0]).toEqual([false, true]);
  }
  handler.destroy();
  await waitFor(
    () => {
      const now = activeResources();
      return now.handles <= before.handles && now.timers <= before.timers;
    },
    "the handler's sockets and timers to go",
    CAP_MS
  );
}

/** Sends `req` through a new handler of `lane`, reads the body, destroys the handler, and reports how it ended. */
async function run(lane: Lane, req: HttpRequest, agent?: Record<string, unknown>): Promise<Outcome> {
  const handler = lane.make(agent);
  const outcome: Outcome = { state: "pending" };
  let promise: Promise<unknown> = Promise.resolve();
  try {
    promise = handler.handle(req).then(
      async ({ response }) => {
        const body = response.body as Readable | undefined;
        if (body !== undefined) for await (const _ of body);
        outcome.state = "resolved";
        outcome.status = response.statusCode;
      },
      (error: Error & { code?: unknown }) => {
        outcome.state = "rejected";
        outcome.error = { name: error.name, code: error.code, message: error.message };
      }
    );
  } catch (error) {
    outcome.state = "rejected";
    outcome.error = { name: "SYNC THROW", message: String(error) };
  }
  await waitFor(() => outcome.state !== "pending", "the request to settle", CAP_MS).catch(() => {});
  handler.destroy();
  if (outcome.state === "pending") {
    // Still pending: does destroy() settle it? (Recorded as pending either way: a hang is the finding.)
    await Promise.race([promise, new Promise((r) => setTimeout(r, 200))]);
  }
  return outcome;
}

/** Sockeye's shape of a refused input: a one-line `TypeError` with the given code (if any), naming `mention`. */
function expectRefused(outcome: Outcome, code: string | undefined, mention?: string): void {
  expect(outcome.state).toBe("rejected");
  expect(outcome.error?.name).toBe("TypeError");
  expect(outcome.error?.code).toBe(code);
  expect(outcome.error?.message).not.toMatch(/\n/);
  if (mention !== undefined) expect(outcome.error?.message).toContain(mention);
  expect(outcome.error?.message).not.toContain(TOKEN);
}

describe("credentials: exactly one Authorization header goes out, the caller's", () => {
  for (const lane of LANES) {
    for (const name of ["authorization", "Authorization", "AUTHORIZATION"]) {
      it(`${lane.key}: a ${name} header and user info on the request`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(
          lane,
          request(target.port, false, { headers: { [name]: SIGV4 }, username: "user", password: "pass" })
        );
        expect(outcome.state).toBe("resolved");
        const [sent] = received(target);
        expect(headerValues(sent, "authorization")).toEqual([SIGV4]);
      });
    }
    it(`${lane.key}: user info and no Authorization header`, async () => {
      const target = await recorderFor(lane, false);
      const outcome = await run(lane, request(target.port, false, { username: "user", password: "pa:ss" }));
      expect(outcome.state).toBe("resolved");
      const [sent] = received(target);
      // Basic credentials from the user info, as Node's `auth` option; upstream's HTTP/2 handler and
      // `@smithy/undici-http-handler` send none.
      expect(headerValues(sent, "authorization")).toEqual(
        lane.h2 || lane.key === "smithy-undici" ? [] : [`Basic ${Buffer.from("user:pa:ss").toString("base64")}`]
      );
    });
  }

  it("sockeye-h2: user info that looks like a host never changes where the session goes", async () => {
    const lane = LANES.find((l) => l.key === "sockeye-h2") as Lane;
    const target = await recorderFor(lane, false);
    const other = await recorderFor(lane, false);
    const outcome = await run(
      lane,
      request(target.port, false, { username: `x@127.0.0.1:${other.port}/`, password: "p" })
    );
    expect(outcome.state).toBe("resolved");
    expect(accepted(target)).toBe(1);
    expect(accepted(other)).toBe(0);
  });
});

describe("protocols: http: and https: in any letter case mean themselves; anything else is refused", () => {
  for (const lane of SOCKEYE) {
    for (const protocol of ["https:", "HTTPS:", "Https:"]) {
      it(`${lane.key}: ${JSON.stringify(protocol)} goes out over TLS`, async () => {
        const target = await recorderFor(lane, true);
        const outcome = await run(lane, request(target.port, true, { protocol }));
        expect(outcome).toMatchObject({ state: "resolved", status: 200 });
        expect(received(target)).toHaveLength(1);
      });
    }
    for (const protocol of ["HTTP:", "hTTp:"]) {
      it(`${lane.key}: ${JSON.stringify(protocol)} goes out as plain http`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(lane, request(target.port, false, { protocol }));
        expect(outcome).toMatchObject({ state: "resolved", status: 200 });
        expect(received(target)).toHaveLength(1);
      });
    }
    for (const protocol of ["https", "http", "", "ftp:", "HTTPS", "wss:", "https:/", " https:", undefined]) {
      it(`${lane.key}: ${String(JSON.stringify(protocol))} is a TypeError naming it; no connection`, async () => {
        const clear = await startRawRecorder();
        cleanups.push(() => clear.close());
        const outcome = await run(lane, request(clear.port, false, { protocol }));
        expectRefused(outcome, "ERR_INVALID_PROTOCOL", `invalid request protocol: ${String(JSON.stringify(protocol))}`);
        expect(clear.connections).toHaveLength(0);
      });
    }
  }

  it('smithy-node (why): "HTTPS:", "https", "" and "ftp:" go out in clear text, session token readable', async () => {
    const lane = LANES.find((l) => l.key === "smithy-node") as Lane;
    for (const protocol of ["HTTPS:", "https", "", "ftp:"]) {
      const clear = await startRawRecorder();
      cleanups.push(() => clear.close());
      await run(lane, request(clear.port, false, { protocol }));
      expect(clear.connections[0]?.raw.toString("latin1")).toContain(TOKEN);
    }
  });
});

describe("request line: a host name or path that would change the request's meaning is refused", () => {
  for (const lane of SOCKEYE) {
    for (const hostname of ["evil.example@127.0.0.1", "127.0.0.1/x", "127.0.0.1#x", "127.0.0.1 x", "127.0.0.1\r\nx"]) {
      it(`${lane.key}: hostname ${JSON.stringify(hostname)}`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(lane, request(target.port, false, { hostname }));
        expectRefused(outcome, undefined, "invalid request hostname");
        expect(accepted(target)).toBe(0);
      });
    }
    for (const path of ["/a b", "/a\r\nX-Injected: 1", "/a\u0000", "/\u20ac"]) {
      it(`${lane.key}: path ${JSON.stringify(path)} (the path is not shown)`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(lane, request(target.port, false, { path }));
        expectRefused(outcome, "ERR_UNESCAPED_CHARACTERS", "invalid request path");
        expect(outcome.error?.message).not.toContain(path.slice(1));
        expect(accepted(target)).toBe(0);
      });
    }
  }
});

describe("headers: an invalid name or value is a TypeError naming the header, before any connection", () => {
  const NAMES: [string, string][] = [
    ["x:a", "ERR_INVALID_HTTP_TOKEN"],
    ["x-a\r\ninjected", "ERR_INVALID_HTTP_TOKEN"],
    ["x a", "ERR_INVALID_HTTP_TOKEN"],
    ["", "ERR_INVALID_HTTP_TOKEN"],
    ["x(a)", "ERR_INVALID_HTTP_TOKEN"],
  ];
  const VALUES = ["a\r\nx-injected: 1", "a\nb", "a\rb", "a\u0000b", "a\u007fb", "\u20ac"];
  for (const lane of SOCKEYE) {
    for (const [name, code] of NAMES) {
      it(`${lane.key}: name ${JSON.stringify(name)}`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(lane, request(target.port, false, { headers: { [name]: "1" } }));
        expectRefused(outcome, code, `invalid request header name ${JSON.stringify(name)}`);
        expect(accepted(target)).toBe(0);
      });
    }
    for (const value of VALUES) {
      it(`${lane.key}: value ${JSON.stringify(value)} (not shown)`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(lane, request(target.port, false, { headers: { "x-meta": value } }));
        expectRefused(outcome, "ERR_INVALID_CHAR", 'invalid value of request header "x-meta"');
        expect(accepted(target)).toBe(0);
      });
    }
    it(`${lane.key}: an array value with a bad item`, async () => {
      const target = await recorderFor(lane, false);
      const outcome = await run(lane, request(target.port, false, { headers: { "x-meta": ["ok", "a\r\nb"] } }));
      expectRefused(outcome, "ERR_INVALID_CHAR", '"x-meta"');
      expect(accepted(target)).toBe(0);
    });
    it(`${lane.key}: a tab, Latin-1 and a long value go out unchanged`, async () => {
      const target = await recorderFor(lane, false);
      const values = { "x-tab": "a\tb", "x-latin1": "caf\u00e9", "x-long": "v".repeat(8000) };
      const outcome = await run(lane, request(target.port, false, { headers: values }));
      expect(outcome).toMatchObject({ state: "resolved", status: 200 });
      const [sent] = received(target);
      for (const [name, value] of Object.entries(values)) expect(headerValues(sent, name)).toEqual([value]);
    });
  }

  for (const name of ["connection", "Keep-Alive", "proxy-connection", "transfer-encoding", "upgrade", "te"]) {
    it(`sockeye-h2: HTTP/1.1 connection header ${JSON.stringify(name)} is refused before a session opens (upstream: after)`, async () => {
      const lane = LANES.find((l) => l.key === "sockeye-h2") as Lane;
      const target = await recorderFor(lane, true);
      const outcome = await run(lane, request(target.port, true, { headers: { [name]: "x" } }));
      expectRefused(outcome, "ERR_HTTP2_INVALID_CONNECTION_HEADERS", JSON.stringify(name));
      expect(accepted(target)).toBe(0);
    });
  }
  it("sockeye-h2: te: trailers is allowed", async () => {
    const lane = LANES.find((l) => l.key === "sockeye-h2") as Lane;
    const target = await recorderFor(lane, true);
    const outcome = await run(lane, request(target.port, true, { headers: { te: "trailers" } }));
    expect(outcome).toMatchObject({ state: "resolved", status: 200 });
  });

  it("smithy-h2 (why): on Node 20 a refused name leaves its promise pending, even after destroy(); a CR/LF value goes out", async () => {
    const lane = LANES.find((l) => l.key === "smithy-h2") as Lane;
    const target = await recorderFor(lane, true);
    // Node 22+ reports the session's protocol error (ERR_HTTP2_ERROR), so there upstream rejects.
    const refused = await run(lane, request(target.port, true, { headers: { "x:a": "1" } }));
    expect(refused.state).toBe(NODE_MAJOR < 22 ? "pending" : "rejected");
    // Sent, not refused by the client (Node's own HTTP/2 server then drops the field; an intermediary may not).
    const crlf = await run(lane, request(target.port, true, { headers: { "x-meta": "a\r\nb" } }));
    expect(crlf).toMatchObject({ state: "resolved", status: 200 });
  });
});

describe("content-length: a body that disagrees with it never leaves a second request or a hang", () => {
  const KNOWN: [string, () => unknown, string, number][] = [
    ["a string shorter than declared", () => "abc", "10", 3],
    ["a string longer than declared", () => "abc", "2", 3],
    ["a multi-byte string measured in characters", () => "\u00e9\u00e9\u00e9", "3", 6],
    ["a Buffer shorter than declared", () => Buffer.from("abc"), "10", 3],
    ["a Uint8Array longer than declared", () => new Uint8Array(4), "1", 4],
    ["no body with a length declared", () => undefined, "5", 0],
  ];
  for (const lane of SOCKEYE) {
    for (const [title, body, declared, actual] of KNOWN) {
      it(`${lane.key}: ${title} is a TypeError; nothing is sent`, async () => {
        const target = await recorderFor(lane, false);
        const outcome = await run(
          lane,
          request(target.port, false, { body: body(), headers: { "content-length": declared } })
        );
        expectRefused(outcome, "ERR_HTTP_CONTENT_LENGTH_MISMATCH", `says ${declared} bytes but its body has ${actual}`);
        expect(accepted(target)).toBe(0);
      });
    }
    it(`${lane.key}: a body of exactly the declared length (UTF-8) is sent`, async () => {
      const target = await recorderFor(lane, false);
      const outcome = await run(
        lane,
        request(target.port, false, { body: "\u00e9\u00e9\u00e9", headers: { "Content-Length": "6" } })
      );
      expect(outcome).toMatchObject({ state: "resolved", status: 200 });
      expect(received(target)[0].body.toString()).toBe("\u00e9\u00e9\u00e9");
    });
    it(`${lane.key}: content-length spellings that disagree, or not a number of bytes, are refused`, async () => {
      for (const headers of [
        { "content-length": "3", "Content-Length": "4" },
        { "content-length": "abc" },
        { "content-length": "-1" },
        { "content-length": "1.5" },
      ]) {
        const target = await recorderFor(lane, false);
        const outcome = await run(lane, request(target.port, false, { body: "abc", headers }));
        expectRefused(outcome, "ERR_HTTP_INVALID_HEADER_VALUE", "content-length");
        expect(accepted(target)).toBe(0);
      }
    });
    it(`${lane.key}: a stream that ends short fails the request; the connection is not left waiting`, async () => {
      const target = await recorderFor(lane, false);
      const outcome = await run(
        lane,
        request(target.port, false, { body: Readable.from([Buffer.from("abc")]), headers: { "content-length": "10" } })
      );
      expect(outcome.state).toBe("rejected");
      expect(outcome.error?.code).toBe("ERR_HTTP_CONTENT_LENGTH_MISMATCH");
      if (target.kind === "h1") {
        // No whole request reached the server; the connection was closed, not left waiting for 7 more bytes.
        expect(target.h1.requests).toHaveLength(0);
        await waitFor(() => target.h1.connections.every((c) => c.closed), "the client to close", CAP_MS);
      } else {
        // The stream (if its HEADERS went out before the reset) was reset, never completed.
        await waitFor(() => target.h2.streams.every((s) => s.rstCode !== -1), "the stream to close", CAP_MS);
        for (const s of target.h2.streams) expect(s.rstCode).not.toBe(0);
      }
    });
    it(`${lane.key}: a stream that runs past its length is cut off before the extra bytes (no smuggled request)`, async () => {
      const target = await recorderFor(lane, false);
      const outcome = await run(
        lane,
        request(target.port, false, { body: smugglingBody(), headers: { "content-length": "3" } })
      );
      expect(outcome.state).toBe("rejected");
      expect(outcome.error?.code).toBe("ERR_HTTP_CONTENT_LENGTH_MISMATCH");
      expect(outcome.error?.message).toMatch(/^@sockeye\/[a-z0-9-]+ - the request body stream /);
      if (target.kind === "h1") {
        const raw = Buffer.concat(target.h1.connections.map((c) => c.raw)).toString("latin1");
        expect(raw).not.toContain("smuggled");
        expect(target.h1.requests.map((r) => r.target)).not.toContain("/smuggled");
        await waitFor(() => target.h1.connections.every((c) => c.closed), "the client to close", CAP_MS);
      } else {
        for (const s of target.h2.streams) expect(s.body.length).toBeLessThanOrEqual(3);
      }
    });
    it(`${lane.key}: a stream of exactly its length is sent`, async () => {
      const target = await recorderFor(lane, false);
      const body = Readable.from([Buffer.from("ab"), Buffer.from("c")]);
      const outcome = await run(lane, request(target.port, false, { body, headers: { "content-length": "3" } }));
      expect(outcome).toMatchObject({ state: "resolved", status: 200 });
      expect(received(target)[0].body.toString()).toBe("abc");
    });
  }

  it("smithy-node (why): a stream past its length puts a second request on the connection", async () => {
    const lane = LANES.find((l) => l.key === "smithy-node") as Lane;
    const target = await recorderFor(lane, false);
    await run(lane, request(target.port, false, { body: smugglingBody(), headers: { "content-length": "3" } }));
    if (target.kind !== "h1") throw new Error("unreachable");
    await waitFor(() => target.h1.requests.length >= 2, "the smuggled request", CAP_MS);
    expect(target.h1.requests.map((r) => r.target)).toEqual(["/object", "/smuggled"]);
  });
});

describe("request body streams that cannot be sent are refused at once, naming the body", () => {
  for (const lane of SOCKEYE) {
    it(`${lane.key}: a destroyed stream`, async () => {
      const target = await recorderFor(lane, false);
      const body = new Readable({ read() {} });
      body.destroy();
      const outcome = await run(lane, request(target.port, false, { body }));
      expect(outcome.state).toBe("rejected");
      expect(outcome.error).toMatchObject({ code: "ERR_STREAM_DESTROYED" });
      expect(outcome.error?.message).toContain("the request body stream was destroyed before it was sent");
      expect(accepted(target)).toBe(0);
    });
    it(`${lane.key}: a stream already read to its end, with a length declared`, async () => {
      const target = await recorderFor(lane, false);
      const body = Readable.from([Buffer.from("abc")]);
      body.resume();
      await new Promise((resolve) => body.once("end", resolve));
      const outcome = await run(lane, request(target.port, false, { body, headers: { "content-length": "3" } }));
      expect(outcome.state).toBe("rejected");
      expect(outcome.error).toMatchObject({ code: "ERR_HTTP_CONTENT_LENGTH_MISMATCH" });
      expect(outcome.error?.message).toContain("already read to its end");
      expect(accepted(target)).toBe(0);
    });
    it(`${lane.key}: a stream destroyed while its request waited for a connection`, async () => {
      // One connection (HTTP/2: one session of one stream), held by a first request the server never answers.
      const target: Target = lane.h2
        ? { kind: "h2", port: 0, h2: await startH2Recorder({ tls: false, settings: { maxConcurrentStreams: 1 } }) }
        : { kind: "h1", port: 0, h1: await startRawRecorder({ answer: false }) };
      const port = target.kind === "h1" ? target.h1.port : target.h2.port;
      cleanups.push(() => (target.kind === "h1" ? target.h1.close() : target.h2.close()));
      const handler = lane.make({ maxSockets: 1 });
      cleanups.push(() => handler.destroy());
      const first = new AbortController();
      // HTTP/2: the recorder answers once the request body ends, and a small answer frees its stream at once: a
      // body that never ends holds the stream instead.
      const holdBody = lane.h2 ? new Readable({ read() {} }) : "x";
      const held = handler.handle(request(port, false, { body: holdBody, headers: { "x-hold": "1" } }), {
        abortSignal: first.signal,
      });
      held.catch(() => {});
      await waitFor(() => received(target).length === 1, "the first request to arrive", CAP_MS);
      const body = new Readable({ read() {} });
      const queued = handler.handle(request(port, false, { body }));
      const settled = queued.then(
        () => "resolved",
        (e: Error & { code?: string }) => e.code
      );
      body.destroy();
      first.abort();
      expect(await Promise.race([settled, new Promise((r) => setTimeout(() => r("pending"), CAP_MS))])).toBe(
        "ERR_STREAM_DESTROYED"
      );
    });
  }
});

describe("a request body stream destroyed mid-upload fails the request at once, with or without an error", () => {
  /** [title, a chunk reaches the server first, destroyed with an error, declared content-length] */
  const CASES: [string, boolean, boolean, string | undefined][] = [
    ["without an error, before its first chunk", false, false, undefined],
    ["without an error, after its first chunk", true, false, undefined],
    ["without an error, after its first chunk, with a content-length", true, false, "100"],
    ["with an error, before its first chunk", false, true, undefined],
    ["with an error, after its first chunk", true, true, undefined],
  ];

  /** Starts a request of `lane` whose body stream the server is receiving, then destroys that stream. */
  async function destroyMidUpload(lane: Lane, chunk: boolean, withError: boolean, length: string | undefined) {
    const target = await recorderFor(lane, false);
    const before = activeResources();
    const handler = lane.make();
    const body = new Readable({ read() {} });
    const headers = length === undefined ? {} : { "content-length": length };
    const outcome: Outcome = { state: "pending" };
    const settled = recordOutcome(handler.handle(request(target.port, false, { body, headers })), outcome);
    const sent = (): string => bytesReceived(target);
    await waitFor(
      () => (target.kind === "h1" ? accepted(target) : target.h2.streams.length) === 1,
      "the upload",
      CAP_MS
    );
    if (chunk) {
      body.push("first-chunk");
      await waitFor(() => sent().includes("first-chunk"), "the first chunk to arrive", CAP_MS);
    }
    const error = withError ? new Error("the source failed") : undefined;
    const destroyedAt = performance.now();
    body.destroy(error);
    await waitFor(() => outcome.state !== "pending", "the request to settle", CAP_MS).catch(() => {});
    return { target, handler, outcome, settled, error, settledMs: performance.now() - destroyedAt, before };
  }

  for (const lane of SOCKEYE) {
    for (const [title, chunk, withError, length] of CASES) {
      it(`${lane.key}: ${title}`, async () => {
        const run = await destroyMidUpload(lane, chunk, withError, length);
        const { target, outcome } = run;
        expect(outcome.state).toBe("rejected");
        expect(run.settledMs).toBeLessThan(CAP_MS);
        if (withError) expect(outcome.error?.message).toBe("the source failed");
        else {
          expect(outcome.error?.code).toBe("ERR_STREAM_PREMATURE_CLOSE");
          expect(outcome.error?.message).toMatch(
            /^@sockeye\/[a-z0-9-]+ - the request body stream was destroyed before its end, without an error; the request was cut off\.$/
          );
        }
        await expectCutOffAndReleased(target, run.handler, run.before);
      });
    }
  }

  for (const key of ["smithy-node", "smithy-h2"] as const) {
    it(`${key} (why): a body destroyed without an error leaves the request pending until destroy(); one with an error is uncaught`, async () => {
      const lane = LANES.find((l) => l.key === key) as Lane;
      const quiet = await destroyMidUpload(lane, true, false, undefined);
      expect(quiet.outcome.state).toBe("pending");
      quiet.handler.destroy();
      const failed = await destroyMidUpload(lane, true, true, undefined);
      expect(failed.outcome.state).toBe("pending");
      failed.handler.destroy();
      expect(capture.take().uncaught).toEqual([String(failed.error)]);
    });
  }

  it('smithy-undici (why): undici rejects at once, as an abort ("Request aborted")', async () => {
    const lane = LANES.find((l) => l.key === "smithy-undici") as Lane;
    const quiet = await destroyMidUpload(lane, true, false, undefined);
    expect(quiet.outcome).toMatchObject({
      state: "rejected",
      error: { name: "AbortError", message: "Request aborted" },
    });
    quiet.handler.destroy();
  });
});

describe("an upload cut off by the caller's abort or by requestTimeout never reaches the server as a whole request", () => {
  /** Starts a body-stream upload of `lane`, lets its first chunk arrive, then cuts it off by `how`. */
  async function cutMidUpload(lane: Lane, how: "abort" | "requestTimeout") {
    const target = await recorderFor(lane, false);
    const before = activeResources();
    // node:http's requestTimeout only warns unless throwOnRequestTimeout is set (as upstream's).
    const handler =
      lane.key === "sockeye-node" && how === "requestTimeout"
        ? new NodeHttpHandler({ throwOnRequestTimeout: true })
        : lane.make();
    const body = new Readable({ read() {} });
    const controller = new AbortController();
    const options = how === "abort" ? { abortSignal: controller.signal } : { requestTimeout: 100 };
    const outcome: Outcome = { state: "pending" };
    void recordOutcome(handler.handle(request(target.port, false, { body }), options), outcome);
    body.push("first-chunk");
    await waitFor(() => bytesReceived(target).includes("first-chunk"), "the first chunk to arrive", CAP_MS);
    if (how === "abort") controller.abort();
    await waitFor(() => outcome.state !== "pending", "the request to settle", CAP_MS).catch(() => {});
    return { target, handler, outcome, before };
  }

  for (const lane of SOCKEYE) {
    for (const how of ["abort", "requestTimeout"] as const) {
      it(`${lane.key}: ${how}`, async () => {
        const { target, handler, outcome, before } = await cutMidUpload(lane, how);
        expect(outcome).toMatchObject({
          state: "rejected",
          error: { name: how === "abort" ? "AbortError" : "TimeoutError" },
        });
        await expectCutOffAndReleased(target, handler, before);
      });
    }
  }

  it("smithy-h2 (why): an aborted upload ends the request side (END_STREAM) before its reset", async () => {
    const lane = LANES.find((l) => l.key === "smithy-h2") as Lane;
    const { target, handler, outcome } = await cutMidUpload(lane, "abort");
    expect(outcome.state).toBe("rejected");
    if (target.kind !== "h2") throw new Error("an h2 lane records on an h2 server");
    const { streams } = target.h2;
    await waitFor(() => streams.every((s) => s.rstCode !== -1), "the stream to close", CAP_MS);
    expect(streams.map((s) => s.ended)).toEqual([true]);
    handler.destroy();
  });
});

describe("servername: on UndiciHttpHandler as on NodeHttpHandler (the SNI name and the name the certificate is checked against)", () => {
  for (const lane of SOCKEYE) {
    it(`${lane.key}: a servername the certificate does not cover is refused, for a DNS host too`, async () => {
      const target = await recorderFor(lane, true);
      for (const hostname of ["localhost", "127.0.0.1"]) {
        const outcome = await run(lane, request(target.port, true, { hostname }), { servername: "wrong.example" });
        expect(outcome.state).toBe("rejected");
        expect(outcome.error?.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
      }
      expect(received(target)).toHaveLength(0);
    });
    it(`${lane.key}: a servername the certificate covers works for an IP host`, async () => {
      const target = await recorderFor(lane, true);
      const outcome = await run(lane, request(target.port, true), { servername: "localhost" });
      expect(outcome).toMatchObject({ state: "resolved", status: 200 });
    });
  }
});

/** "ab", then (a turn later) "c" followed by a whole second request: 3 bytes are declared. */
function smugglingBody(): Readable {
  return Readable.from(
    (async function* () {
      yield Buffer.from("ab");
      await new Promise((resolve) => setImmediate(resolve));
      yield Buffer.from("cGET /smuggled HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    })()
  );
}
