/**
 * Differential suite: every scenario of the table runs through upstream `NodeHttpHandler`
 * (`@smithy/node-http-handler` 4.14.2, the oracle) and through Sockeye's, against the SAME loopback http and https
 * servers. The observable outcome of each run is reduced to plain data and compared:
 *
 * - response: status, reason, headers (minus `date`), body bytes, or the body stream's error;
 * - error: name, code, message (package prefix normalised to `<pkg>`), cause;
 * - logger warnings (prefix normalised);
 * - what the server received: method, url, headers (minus host, connection and the run tag), body bytes.
 *
 * Scenarios where Sockeye departs from upstream on purpose (connectionTimeout over TLS, queued-request message,
 * failing Readable bodies, writeBody throwing, close without response) are covered in node-http-handler.integ.spec.ts
 * and kept out of this table.
 */
import { NodeHttpHandler as UpstreamNodeHttpHandler } from "@smithy/node-http-handler";
import type { HttpRequest } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Logger } from "@smithy/types";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  CA,
  closedPort,
  patternBytes,
  type ReceivedRequest,
  type RequestInit,
  readAll,
  requestTo,
  type ServerKind,
  sha256,
  startServer,
  startSilentTcpServer,
  type TestServer,
  waitFor,
} from "../test/servers";
import { NodeHttpHandler, type NodeHttpHandlerOptions } from "./index";

const KINDS: ServerKind[] = ["http", "https"];
const RUN_HEADER = "x-differential-run";

type Impl = "upstream" | "sockeye";
type Expected = "response" | "error";

interface ErrorShape {
  name: string;
  code: unknown;
  message: string;
  cause?: { name: string; message: string };
}

interface Outcome {
  response?: {
    statusCode: number;
    reason: string | undefined;
    headers: Record<string, string>;
    /** Small bodies as base64 (echo bodies decoded, see `bodyShape`), large ones as length + sha256. */
    body?: unknown;
    bodyError?: ErrorShape;
  };
  error?: ErrorShape;
  warnings: string[];
  received: {
    method: string;
    url: string;
    headers: Record<string, unknown>;
    body: string;
    bytesBeforeContinue?: number;
  } | null;
}

interface RunContext {
  server: TestServer;
  /** Resolves once the server has seen this run's request. */
  serverSawRequest(): Promise<void>;
  controller: AbortController;
}

interface Scenario {
  name: string;
  /**
   * Whether upstream answers with a response or an error (guards against two identical failures), per server kind
   * when they differ.
   */
  expect: Expected | Record<ServerKind, Expected>;
  options?: NodeHttpHandlerOptions;
  /** Built per run (bodies such as streams are single-use). */
  request: RequestInit | ((ctx: { port: number }) => RequestInit);
  handleOptions?: (ctx: RunContext) => HttpHandlerOptions;
  /** Runs alongside handle(), e.g. to abort once the server saw the request. */
  during?: (ctx: RunContext) => Promise<void>;
  /** Reads the body (default: to the end). */
  consume?: (body: IncomingMessage, ctx: RunContext) => Promise<Buffer>;
  /** Use a caller-owned keep-alive Agent instance (https: trusting the fixture) instead of Agent options. */
  externalAgent?: boolean;
  /** Use a duck-typed external agent: a plain object with only `addRequest` and `destroy`, wrapping a real Agent. */
  duckAgent?: boolean;
  /** Called on the new handler before handle(), e.g. to play the client's updateHttpClientConfig calls. */
  setup?: (handler: UpstreamNodeHttpHandler | NodeHttpHandler) => void;
  /** Do not give the handler a logger option (warnings then only reach a logger set by `setup`). */
  noLoggerOption?: boolean;
  /** Target a TCP server that accepts and never writes (over https: a TLS handshake that never completes). */
  silent?: boolean;
  /** Only run over these server kinds. */
  kinds?: ServerKind[];
  /**
   * A deliberate change (docs/upstream-parity.md) over https: upstream's one-off 100-continue agent drops the
   * httpsAgent `ca` and fails the TLS check; Sockeye's inherits it and gets this status from the server.
   */
  httpsContinueTrustsCa?: number;
  /** Target a port nobody listens on. */
  refused?: boolean;
  /** Abort before handle() is called. */
  preAbort?: boolean | string | Error;
}

const normalise = (text: string) => text.replace(/@(smithy|sockeye)\/node-http-handler/g, "<pkg>");

function errorShape(error: unknown): ErrorShape {
  const e = error as Error & { code?: unknown };
  const shape: ErrorShape = { name: e?.name, code: e?.code, message: normalise(String(e?.message)) };
  if (e?.cause !== undefined) {
    const cause = e.cause as Error;
    shape.cause = { name: cause?.name, message: String(cause?.message) };
  }
  return shape;
}

/**
 * Echo bodies mention the run tag and host, so they are decoded and stripped like `received`; other bodies are kept
 * as base64 up to 4 KiB, then summarised.
 */
function bodyShape(body: Buffer, headers: Record<string, string>): unknown {
  if (headers["x-echo"] === "1" && body.length > 0) {
    const echoed = JSON.parse(body.toString());
    return { ...echoed, headers: stripHeaders(echoed.headers) };
  }
  if (body.length <= 4096) return body.toString("base64");
  return { length: body.length, sha256: sha256(body) };
}

function stripHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!STRIPPED_RECEIVED_HEADERS.has(name)) out[name] = value;
  }
  return out;
}

const STRIPPED_RECEIVED_HEADERS = new Set(["host", "connection", RUN_HEADER]);

function receivedShape(rec: ReceivedRequest | undefined): Outcome["received"] {
  if (rec === undefined) return null;
  const body =
    rec.body.length <= 4096 ? rec.body.toString("base64") : `${rec.body.length} bytes, sha256 ${sha256(rec.body)}`;
  const shape: NonNullable<Outcome["received"]> = {
    method: rec.method,
    url: rec.url,
    headers: stripHeaders(rec.headers),
    body,
  };
  // Whether the client waited for 100 Continue: 0 when it did, the body size when it did not.
  if (rec.bytesBeforeContinue !== undefined) shape.bytesBeforeContinue = rec.bytesBeforeContinue;
  return shape;
}

const SCENARIOS: Scenario[] = [
  { name: "GET /echo", expect: "response", request: { path: "/echo" } },
  { name: "HEAD /echo", expect: "response", request: { method: "HEAD", path: "/echo" } },
  { name: "DELETE /echo", expect: "response", request: { method: "DELETE", path: "/echo" } },
  {
    name: "GET with path, sorted/escaped query, fragment and auth",
    expect: "response",
    request: {
      path: "/echo/a%20b",
      query: { z: "last", a: "x y", list: ["2", "1"], bare: null as unknown as string, empty: "", "k*": "(v)!" },
      fragment: "frag",
      username: "user",
      password: "pa:ss",
    },
  },
  { name: "GET with username only", expect: "response", request: { username: "only-user" } },
  {
    name: "POST string body with headers",
    expect: "response",
    request: { method: "POST", headers: { "content-type": "text/plain", "X-Custom": "v" }, body: "héllo wörld" },
  },
  { name: "PUT Buffer body", expect: "response", request: { method: "PUT", body: Buffer.from("buffer body") } },
  { name: "PUT empty Buffer body", expect: "response", request: { method: "PUT", body: Buffer.alloc(0) } },
  {
    name: "POST Uint8Array body",
    expect: "response",
    request: { method: "POST", body: new Uint8Array([0, 1, 2, 254, 255]) },
  },
  {
    name: "POST Uint8Array subarray view",
    expect: "response",
    request: { method: "POST", body: new Uint8Array([9, 8, 7, 6, 5, 4, 3, 2, 1]).subarray(2, 6) },
  },
  { name: "POST no body", expect: "response", request: { method: "POST" } },
  {
    name: "PUT Readable stream body (256 KiB)",
    expect: "response",
    request: () => ({
      method: "PUT",
      body: Readable.from(
        (function* () {
          const data = patternBytes(256 * 1024);
          for (let offset = 0; offset < data.length; offset += 16 * 1024)
            yield data.subarray(offset, offset + 16 * 1024);
        })()
      ),
    }),
  },
  { name: "POST {} body (TypeError)", expect: "error", request: { method: "POST", body: {} } },
  {
    name: "PUT Expect: 100-continue (checkContinue server)",
    expect: { http: "response", https: "error" },
    httpsContinueTrustsCa: 200,
    request: { method: "PUT", path: "/continue", headers: { Expect: "100-continue" }, body: "after continue" },
  },
  {
    name: "abort while waiting for 100 Continue",
    expect: "error",
    kinds: ["http"],
    request: { method: "PUT", path: "/continue-never", headers: { Expect: "100-continue" }, body: "held back" },
    handleOptions: (ctx) => ({ abortSignal: ctx.controller.signal as HttpHandlerOptions["abortSignal"] }),
    during: async (ctx) => {
      await ctx.serverSawRequest();
      ctx.controller.abort();
    },
  },
  {
    name: "requestTimeout throw while waiting for 100 Continue",
    expect: "error",
    kinds: ["http"],
    options: { requestTimeout: 200, throwOnRequestTimeout: true },
    request: { method: "PUT", path: "/continue-never", headers: { Expect: "100-continue" }, body: "held back" },
  },
  {
    name: "server answers 413 before reading a 1 MiB streamed body",
    expect: "response",
    request: () => ({
      method: "PUT",
      path: "/early-413",
      body: Readable.from(
        (function* () {
          const data = patternBytes(1 << 20);
          for (let offset = 0; offset < data.length; offset += 64 * 1024)
            yield data.subarray(offset, offset + 64 * 1024);
        })()
      ),
    }),
  },
  {
    name: "PUT Expect: 100-continue with an external agent (no wait)",
    expect: "response",
    externalAgent: true,
    request: { method: "PUT", path: "/continue", headers: { Expect: "100-continue" }, body: "sent at once" },
  },
  {
    name: "duck-typed external agent (only addRequest and destroy)",
    expect: "response",
    duckAgent: true,
    request: { method: "POST", body: "via duck" },
  },
  {
    name: "PUT expect: 100-continue answered 417",
    expect: { http: "response", https: "error" },
    httpsContinueTrustsCa: 417,
    request: { method: "PUT", path: "/expect-417", headers: { expect: "100-continue" }, body: "never sent" },
  },
  { name: "response with repeated headers", expect: "response", request: { path: "/repeat-headers" } },
  { name: "response with a custom reason", expect: "response", request: { path: "/reason" } },
  { name: "204 No Content", expect: "response", request: { method: "DELETE", path: "/status/204" } },
  { name: "404 with a body", expect: "response", request: { path: "/status/404" } },
  { name: "500 with a body", expect: "response", request: { method: "POST", path: "/status/500", body: "x" } },
  { name: "chunked response", expect: "response", request: { path: "/chunked" } },
  {
    name: "large response (1 MiB)",
    expect: "response",
    request: { path: "/large", query: { bytes: String(1 << 20) } },
  },
  { name: "server resets the connection", expect: "error", request: { path: "/reset" } },
  { name: "connection refused", expect: "error", refused: true, request: { path: "/echo" } },
  {
    name: "requestTimeout throw (per-request override)",
    expect: "error",
    options: { requestTimeout: 10_000, throwOnRequestTimeout: true },
    request: { path: "/never" },
    handleOptions: () => ({ requestTimeout: 200 }),
  },
  {
    name: "requestTimeout warn only",
    expect: "response",
    options: { requestTimeout: 200 },
    request: { path: "/delay", query: { ms: "400" } },
  },
  {
    name: "requestTimeout warn to the client logger (Symbol.for('logger'))",
    expect: "response",
    noLoggerOption: true,
    options: { requestTimeout: 100 },
    request: { path: "/delay", query: { ms: "250" } },
  },
  {
    name: "connectionTimeout with a fast server",
    expect: "response",
    options: { connectionTimeout: 300 },
    request: { path: "/delay", query: { ms: "100" } },
  },
  {
    name: "socketTimeout before the headers",
    expect: "error",
    options: { socketTimeout: 200 },
    request: { path: "/never" },
  },
  {
    name: "service default socket timeout during a stalled body",
    expect: "response",
    request: { path: "/stall-body" },
    setup: (handler) => handler.updateHttpClientConfig(Symbol.for("@smithy/defaultSocketTimeout") as any, 200 as any),
  },
  {
    // Upstream arms socket.setTimeout at the TCP connect, so a TLS handshake that never completes trips it.
    name: "socketTimeout while the server stays silent after the TCP connect",
    expect: "error",
    silent: true,
    options: { socketTimeout: 200 },
    request: { path: "/" },
  },
  {
    name: "socketTimeout during a stalled body",
    expect: "response",
    options: { socketTimeout: 200 },
    request: { path: "/stall-body" },
  },
  { name: "abort before handle()", expect: "error", preAbort: true, request: { path: "/echo" } },
  { name: "abort before handle() with a string reason", expect: "error", preAbort: "stop", request: { path: "/echo" } },
  {
    name: "abort while waiting for headers (Error reason)",
    expect: "error",
    request: { path: "/never" },
    handleOptions: (ctx) => ({ abortSignal: ctx.controller.signal as HttpHandlerOptions["abortSignal"] }),
    during: async (ctx) => {
      await ctx.serverSawRequest();
      ctx.controller.abort(new Error("cancelled by test"));
    },
  },
  {
    name: "abort during the body",
    expect: "response",
    request: { path: "/slow-body", query: { ms: "1000" } },
    handleOptions: (ctx) => ({ abortSignal: ctx.controller.signal as HttpHandlerOptions["abortSignal"] }),
    consume: async (body, ctx) => {
      const first = await new Promise<Buffer>((resolve) => body.once("data", resolve));
      ctx.controller.abort();
      return Buffer.concat([first, await readAll(body)]);
    },
  },
];

// ---- hygiene --------------------------------------------------------------------------------------------------

const servers: TestServer[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
let runCounter = 0;
let silentServer: Awaited<ReturnType<typeof startSilentTcpServer>>;

/** A handle() that has not settled by then counts as hanging (outcome "StillPending"). */
const PENDING_LIMIT_MS = 1200;

async function settleWithin<T>(
  promise: Promise<T>,
  ms: number
): Promise<{ value: T } | { error: unknown } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error })
      ),
      limit,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  process.on("unhandledRejection", onUnhandled);
  for (const kind of KINDS) servers.push(await startServer(kind));
  silentServer = await startSilentTcpServer();
});
afterAll(async () => {
  process.off("unhandledRejection", onUnhandled);
  for (const server of servers.splice(0)) await server.close();
  await silentServer.close();
});
afterEach(async () => {
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled.splice(0)).toEqual([]);
});

function serverFor(kind: ServerKind): TestServer {
  return servers[KINDS.indexOf(kind)];
}

async function run(impl: Impl, kind: ServerKind, scenario: Scenario, refusedPort: number): Promise<Outcome> {
  const server = serverFor(kind);
  const warnings: string[] = [];
  const logger: Logger = {
    debug: () => {},
    info: () => {},
    warn: (message: unknown) => warnings.push(normalise(String(message))),
    error: () => {},
  };
  let agents: NodeHttpHandlerOptions = { httpsAgent: { ca: CA } };
  if (scenario.externalAgent || scenario.duckAgent) {
    const real = kind === "https" ? new https.Agent({ ca: CA, keepAlive: true }) : new http.Agent({ keepAlive: true });
    const agent = scenario.duckAgent
      ? {
          addRequest: (req: unknown, opts: unknown) => (real as any).addRequest(req, opts),
          destroy: () => real.destroy(),
        }
      : real;
    agents = kind === "https" ? { httpsAgent: agent as https.Agent } : { httpAgent: agent as http.Agent, ...agents };
  }
  const options: NodeHttpHandlerOptions = {
    ...(scenario.noLoggerOption ? {} : { logger }),
    ...scenario.options,
    ...agents,
  };
  const handler = impl === "upstream" ? new UpstreamNodeHttpHandler(options) : new NodeHttpHandler(options);
  scenario.setup?.(handler);
  if (scenario.noLoggerOption) handler.updateHttpClientConfig(Symbol.for("logger") as any, logger as any);
  // Same length for both implementations, so content-length headers match.
  const tag = `${impl[0]}-${String(++runCounter).padStart(5, "0")}`;
  const port = scenario.refused ? refusedPort : scenario.silent ? silentServer.port : server.port;
  const init = typeof scenario.request === "function" ? scenario.request({ port }) : scenario.request;
  const request: HttpRequest = requestTo(server, { ...init, port, headers: { ...init.headers, [RUN_HEADER]: tag } });
  const findRecord = () => server.received.find((r) => r.headers[RUN_HEADER] === tag);
  const ctx: RunContext = {
    server,
    controller: new AbortController(),
    serverSawRequest: () => waitFor(() => findRecord() !== undefined, `the server to see ${tag}`),
  };
  if (scenario.preAbort !== undefined) {
    if (scenario.preAbort === true) ctx.controller.abort();
    else ctx.controller.abort(scenario.preAbort);
  }
  const handleOptions =
    scenario.handleOptions?.(ctx) ?? (scenario.preAbort ? { abortSignal: ctx.controller.signal as any } : {});
  const outcome: Outcome = { warnings, received: null };
  try {
    const pending = handler.handle(request, handleOptions);
    pending.catch(() => {});
    const during = scenario.during?.(ctx);
    const settled = await settleWithin(pending, PENDING_LIMIT_MS);
    if (settled === undefined) {
      outcome.error = { name: "StillPending", code: undefined, message: `not settled after ${PENDING_LIMIT_MS} ms` };
    } else if ("error" in settled) {
      outcome.error = errorShape(settled.error);
    } else {
      const { response } = settled.value;
      const shape: NonNullable<Outcome["response"]> = {
        statusCode: response.statusCode,
        reason: response.reason,
        headers: Object.fromEntries(Object.entries(response.headers).filter(([name]) => name !== "date")),
      };
      try {
        const body = await (scenario.consume ?? readAll)(response.body, ctx);
        shape.body = bodyShape(body, shape.headers);
      } catch (error) {
        shape.bodyError = errorShape(error);
      }
      outcome.response = shape;
    }
    await during;
    // Let the server finish reading what was sent, or give a request that should never arrive the time to do so.
    const rec = findRecord();
    if (rec === undefined) await new Promise((resolve) => setTimeout(resolve, 30));
    else if (!rec.complete) await waitFor(() => rec.complete, `${tag} body`, 100).catch(() => {});
    outcome.received = receivedShape(findRecord());
  } finally {
    handler.destroy();
  }
  return outcome;
}

describe.each(KINDS)("differential vs @smithy/node-http-handler over %s", (kind) => {
  const scenarios = SCENARIOS.filter((s) => s.kinds === undefined || s.kinds.includes(kind));
  it.each(scenarios.map((s) => [s.name, s] as const))("%s", async (_name, scenario) => {
    const refusedPort = scenario.refused ? await closedPort() : 0;
    const upstream = await run("upstream", kind, scenario, refusedPort);
    const ours = await run("sockeye", kind, scenario, refusedPort);
    // The oracle must have done what the scenario is about (two identical failures prove nothing).
    const expected = typeof scenario.expect === "string" ? scenario.expect : scenario.expect[kind];
    if (expected === "response") expect(upstream.response, JSON.stringify(upstream.error)).toBeDefined();
    else expect(upstream.error).toBeDefined();
    if (kind === "https" && scenario.httpsContinueTrustsCa !== undefined) {
      // Deliberate: upstream fails the TLS check on its one-off agent; Sockeye's trusts the configured ca.
      expect(upstream.error?.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
      expect(ours.error).toBeUndefined();
      expect(ours.response?.statusCode).toBe(scenario.httpsContinueTrustsCa);
      expect(ours.received?.bytesBeforeContinue ?? 0).toBe(0);
      return;
    }
    expect(ours).toEqual(upstream);
  });
});
