/**
 * Differential suite: each scenario runs through upstream `NodeHttp2Handler` (`@smithy/node-http-handler` 4.14.2,
 * the oracle) and through Sockeye's, against the SAME loopback HTTP/2 server (TLS, port 0). The outcome is reduced
 * to plain data and compared: status, headers (minus `date`), body, or the error's name and message (package prefix
 * normalised), plus what the server saw (method, path, body).
 *
 * Deliberate departures are tested elsewhere: node-http2-handler.faults.integ.spec.ts runs every fault (RST_STREAM,
 * GOAWAY and server death before and during the body, a refused connection, request-body streams) side by side with
 * upstream over https and h2c and asserts each difference exactly; node-http2-handler.integ.spec.ts covers the rest
 * (a silent session is retired, a stalled body is destroyed with the timeout error).
 */
import { NodeHttp2Handler as UpstreamNodeHttp2Handler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler } from "../../src/index";
import { waitFor } from "../servers";
import { CA, type H2TestServer, readBody, startH2Server } from "./h2-servers";

interface Scenario {
  name: string;
  path: string;
  init?: Partial<ConstructorParameters<typeof HttpRequest>[0]>;
  options?: Record<string, unknown>;
  handlerOptions?: Record<string, unknown>;
  /** Abort before the call. */
  abortBefore?: true;
  /**
   * Abort once the server has the stream (whatever the connect and TLS handshake took, so that both handlers are
   * aborted at the same point).
   */
  abortAtServer?: true;
  /** Builds a fresh request body per run (a stream is consumed once). */
  body?: () => Readable;
  /** Fails as designed (both handlers). */
  fails?: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: "GET echo", path: "/echo" },
  { name: "query string", path: "/echo", init: { query: { a: "1", b: ["x", "y"], c: null as unknown as string } } },
  { name: "fragment", path: "/echo", init: { fragment: "frag" } },
  { name: "POST string body", path: "/echo", init: { method: "POST", body: "hello h2" } },
  { name: "PUT Buffer body", path: "/echo", init: { method: "PUT", body: Buffer.from("buffer body") } },
  { name: "empty Buffer body", path: "/echo", init: { method: "POST", body: Buffer.alloc(0) } },
  { name: "Uint8Array body", path: "/echo", init: { method: "POST", body: new Uint8Array([1, 2, 3]) } },
  { name: "custom request headers", path: "/echo", init: { headers: { "x-custom": "v", "x-amz-target": "T.Op" } } },
  { name: "status 404", path: "/status/404" },
  { name: "status 503", path: "/status/503" },
  { name: "repeated response headers", path: "/repeat-headers" },
  { name: "large body", path: "/large?bytes=200000" },
  { name: "event stream (isolated session)", path: "/echo", options: { isEventStream: true } },
  { name: "disableConcurrentStreams", path: "/echo", handlerOptions: { disableConcurrentStreams: true } },
  { name: "abort before the call", path: "/echo", abortBefore: true },
  { name: "abort during the stream", path: "/never", abortAtServer: true },
  { name: "requestTimeout on a silent stream", path: "/never", handlerOptions: { requestTimeout: 200 } },
  { name: "per-call requestTimeout", path: "/never", options: { requestTimeout: 200 } },
  { name: "RST_STREAM before the response", path: "/rst", fails: true },
  { name: "GOAWAY before the response", path: "/goaway", fails: true },
  { name: "server dies with the stream open", path: "/die", fails: true },
  {
    name: "Readable request body",
    path: "/echo",
    init: { method: "POST" },
    body: () => Readable.from([Buffer.from("stream "), Buffer.from("body")]),
  },
];

let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server();
});
afterAll(async () => {
  await server.close();
});

function request(s: Scenario, run: string): HttpRequest {
  const [pathname, search] = s.path.split("?");
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search ?? "")) query[k] = v;
  const init = s.init ?? {};
  const body = init.body;
  return new HttpRequest({
    protocol: "https:",
    hostname: "localhost",
    port: server.port,
    method: "GET",
    path: pathname,
    ...init,
    query: { ...query, ...(init.query ?? {}) },
    headers: { ...(init.headers ?? {}), "x-run": run },
    body: s.body ? s.body() : body,
  });
}

async function observe(kind: "upstream" | "sockeye", s: Scenario): Promise<unknown> {
  const options = { nodeHttp2ConnectOptions: { ca: CA }, ...(s.handlerOptions ?? {}) };
  const handler =
    kind === "upstream" ? new UpstreamNodeHttp2Handler(options as never) : new NodeHttp2Handler(options as never);
  const controller = new AbortController();
  const aborts = s.abortBefore === true || s.abortAtServer === true;
  if (s.abortBefore) controller.abort();
  if (s.abortAtServer) {
    const seen = server.paths.length;
    const abort = () => controller.abort();
    waitFor(() => server.paths.length > seen, "the stream at the server", 5000).then(abort, abort);
  }
  try {
    const { response } = await handler.handle(request(s, kind), {
      ...(s.options ?? {}),
      ...(aborts ? { abortSignal: controller.signal } : {}),
    } as never);
    const headers = { ...response.headers };
    delete headers.date;
    let body = await readBody(response.body);
    try {
      const parsed = JSON.parse(body);
      if (parsed?.headers) {
        delete parsed.headers["x-run"];
        body = parsed;
      }
    } catch {
      // not JSON
    }
    return { status: response.statusCode, headers, body };
  } catch (error) {
    const e = error as Error & { code?: string };
    return {
      error: {
        name: e.name,
        code: e.code,
        message: String(e.message).replace(/@(smithy|sockeye)\/node-http-handler/g, "<pkg>"),
      },
    };
  } finally {
    handler.destroy();
  }
}

describe("NodeHttp2Handler: Sockeye vs upstream 4.14.2 on the same h2 server", () => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))("%s", async (_name, scenario) => {
    const before = server.paths.length;
    const upstream = await observe("upstream", scenario);
    const upstreamPaths = server.paths.slice(before);
    const middle = server.paths.length;
    const sockeye = await observe("sockeye", scenario);
    const sockeyePaths = server.paths.slice(middle);
    // Guard against two identical failures passing as "equal": each scenario must succeed or fail as designed.
    const expectError =
      scenario.abortBefore === true ||
      scenario.abortAtServer === true ||
      scenario.path === "/never" ||
      scenario.fails === true;
    expect("error" in (upstream as object)).toBe(expectError);
    expect(sockeye).toEqual(upstream);
    expect(sockeyePaths).toEqual(upstreamPaths);
  });
});
