/**
 * `http.client.request.duration`, the body-size histograms and `http.client.request.time_in_queue`, for each of the
 * three handlers, through the real OpenTelemetry SDK and `@opentelemetry/exporter-prometheus`, scraped over HTTP from a
 * loopback server: one table of requests (success, 404, 500, a timeout, an abort, a request that times out in the
 * queue, a refused connection), each asserted by its attribute set in the scrape. Every request carries a
 * secret-looking path and query, which must never appear in the scrape.
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import type { PoolEvent, PoolStats } from "@sockeye/pool-monitor";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { afterEach, describe, expect, test as it, vi } from "vitest";
import { closedPort } from "../../node-http-handler/test/servers.js";
import { registerPoolMetrics } from "./register-pool-metrics";

const FIXTURES = join(__dirname, "..", "..", "node-http-handler", "test", "fixtures");
const CA = readFileSync(join(FIXTURES, "localhost-cert.pem"));
const KEY = readFileSync(join(FIXTURES, "localhost-key.pem"));

/** In every request path and query; must never reach the metrics. */
const SECRET_PATH = "/tenant-s3cr3t/object";
const SECRET_QUERY = { "X-Amz-Signature": "SIGs3cr3tVALUE" };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Kind = "NodeHttpHandler" | "NodeHttp2Handler" | "UndiciHttpHandler";

interface AnyHandler {
  handle(
    request: HttpRequest,
    options?: { abortSignal?: AbortSignal; requestTimeout?: number }
  ): Promise<{
    response: { statusCode: number; body: NodeJS.ReadableStream };
  }>;
  destroy(): void;
  poolMonitor?: { getStats(): PoolStats; subscribe?(listener: (event: PoolEvent) => void): () => void };
}

/** A loopback server (HTTP/1.1, or HTTP/2 over TLS) answering by the last path segment; `slow` never answers. */
async function startServer(h2: boolean) {
  const held: Array<{ end(): void; destroy?(): void; stream?: { destroy(): void } }> = [];
  const arrivals: Array<() => void> = [];
  const onRequest = (req: http.IncomingMessage | http2.Http2ServerRequest, res: any) => {
    const action = (req.url ?? "").split("?")[0].split("/").pop();
    req.resume();
    if (action === "slow") {
      held.push(res);
      arrivals.shift()?.();
      return;
    }
    const status = action === "missing" ? 404 : action === "boom" ? 500 : 200;
    const body = status === 200 ? "hello" : "no";
    res.writeHead(status, { "content-type": "text/plain", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  const server = h2 ? http2.createSecureServer({ key: KEY, cert: CA }, onRequest) : http.createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(async () => {
    for (const res of held.splice(0)) {
      if (res.stream !== undefined) res.stream.destroy();
      else res.destroy?.();
    }
    if ("closeAllConnections" in server) server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  /** Resolves when the next `slow` request reached the server. */
  const nextArrival = () => new Promise<void>((resolve) => arrivals.push(resolve));
  return { port, nextArrival };
}

function makeHandler(kind: Kind): AnyHandler {
  // One socket / stream per origin, so a second request queues; requestTimeout (per call) throws.
  switch (kind) {
    case "NodeHttpHandler":
      return new NodeHttpHandler({
        httpAgent: { maxSockets: 1, keepAlive: true },
        socketAcquisitionTimeout: 100,
        throwOnRequestTimeout: true,
      }) as unknown as AnyHandler;
    case "NodeHttp2Handler":
      return new NodeHttp2Handler({
        nodeHttp2ConnectOptions: { ca: CA },
        maxSessionsPerOrigin: 1,
        maxConcurrentStreams: 1,
      }) as unknown as AnyHandler;
    case "UndiciHttpHandler":
      return new UndiciHttpHandler({
        httpAgent: { maxSockets: 1 },
        socketAcquisitionTimeout: 100,
        throwOnRequestTimeout: true,
      }) as unknown as AnyHandler;
  }
}

function request(h2: boolean, port: number, action: string, method = "GET", body?: string): HttpRequest {
  return new HttpRequest({
    protocol: h2 ? "https:" : "http:",
    hostname: "127.0.0.1",
    port,
    method,
    path: `${SECRET_PATH}/${action}`,
    query: SECRET_QUERY,
    headers: {
      host: `127.0.0.1:${port}`,
      ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
    },
    body,
  });
}

/** Settles `handle()`: reads a response body to its end; returns the status, or the rejection's name and code. */
async function send(
  handler: AnyHandler,
  req: HttpRequest,
  options?: { abortSignal?: AbortSignal; requestTimeout?: number }
) {
  try {
    const { response } = await handler.handle(req, options);
    for await (const _ of response.body as AsyncIterable<unknown>);
    return { status: response.statusCode };
  } catch (error) {
    const e = error as { name?: string; code?: string };
    return { error: `${e.name}/${e.code ?? ""}` };
  }
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

/** The labels of every sample line of `metric` (suffix `_count` etc.), as objects. */
function samples(scrape: string, line: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const l of scrape.split("\n")) {
    if (!l.startsWith(`${line}{`)) continue;
    const close = l.lastIndexOf("}");
    const labels: Record<string, string> = {};
    for (const m of l.slice(line.length + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]] = m[2];
    out.push({ labels, value: Number(l.slice(close + 2)) });
  }
  return out;
}

/** Expected attributes (Prometheus label names) of one row; `undefined` = the label must be absent. */
interface Row {
  name: string;
  run(ctx: Ctx): Promise<unknown>;
  port: "server" | "closed";
  method: string;
  status?: string;
  errorType?: Record<Kind, string>;
}

interface Ctx {
  kind: Kind;
  handler: AnyHandler;
  h2: boolean;
  port: number;
  refused: number;
  nextArrival(): Promise<void>;
}

const TIMEOUT: Record<Kind, string> = {
  NodeHttpHandler: "ETIMEDOUT",
  NodeHttp2Handler: "TimeoutError",
  UndiciHttpHandler: "ETIMEDOUT",
};
const IN_QUEUE: Record<Kind, string> = {
  NodeHttpHandler: "ETIMEDOUT",
  NodeHttp2Handler: "TimeoutError",
  UndiciHttpHandler: "ETIMEDOUT",
};
const ABORT: Record<Kind, string> = {
  NodeHttpHandler: "AbortError",
  NodeHttp2Handler: "AbortError",
  UndiciHttpHandler: "AbortError",
};
const REFUSED: Record<Kind, string> = {
  NodeHttpHandler: "ECONNREFUSED",
  NodeHttp2Handler: "ECONNREFUSED",
  UndiciHttpHandler: "ECONNREFUSED",
};

const ROWS: Row[] = [
  {
    name: "success",
    run: async (c) => expect(await send(c.handler, request(c.h2, c.port, "ok"))).toEqual({ status: 200 }),
    port: "server",
    method: "GET",
    status: "200",
  },
  {
    name: "POST with a body",
    run: async (c) =>
      expect(await send(c.handler, request(c.h2, c.port, "ok", "POST", "payload!"))).toEqual({ status: 200 }),
    port: "server",
    method: "POST",
    status: "200",
  },
  {
    name: "404",
    run: async (c) => expect(await send(c.handler, request(c.h2, c.port, "missing"))).toEqual({ status: 404 }),
    port: "server",
    method: "GET",
    status: "404",
    errorType: { NodeHttpHandler: "404", NodeHttp2Handler: "404", UndiciHttpHandler: "404" },
  },
  {
    name: "500, an unknown method",
    run: async (c) => expect(await send(c.handler, request(c.h2, c.port, "boom", "PURGE"))).toEqual({ status: 500 }),
    port: "server",
    method: "_OTHER",
    status: "500",
    errorType: { NodeHttpHandler: "500", NodeHttp2Handler: "500", UndiciHttpHandler: "500" },
  },
  {
    name: "timeout (requestTimeout, no response)",
    run: async (c) => {
      const result = await send(c.handler, request(c.h2, c.port, "slow", "PUT"), { requestTimeout: 150 });
      expect(result).toMatchObject({ error: expect.stringMatching(/^TimeoutError\//) });
    },
    port: "server",
    method: "PUT",
    errorType: TIMEOUT,
  },
  {
    name: "abort",
    run: async (c) => {
      const controller = new AbortController();
      const arrived = c.nextArrival();
      const pending = send(c.handler, request(c.h2, c.port, "slow", "DELETE"), { abortSignal: controller.signal });
      await arrived;
      controller.abort();
      expect(await pending).toMatchObject({ error: "AbortError/" });
    },
    port: "server",
    method: "DELETE",
    errorType: ABORT,
  },
  {
    name: "queued, times out in the queue",
    run: async (c) => {
      // A held request takes the only socket / stream slot; the next one waits, and times out waiting.
      const holder = new AbortController();
      const arrived = c.nextArrival();
      const held = send(c.handler, request(c.h2, c.port, "slow", "PATCH"), { abortSignal: holder.signal });
      await arrived;
      const queued = await send(
        c.handler,
        request(c.h2, c.port, "ok", "HEAD"),
        c.kind === "NodeHttp2Handler" ? { requestTimeout: 100 } : undefined
      );
      expect(queued).toMatchObject({ error: expect.stringMatching(/^TimeoutError\//) });
      holder.abort();
      expect(await held).toMatchObject({ error: "AbortError/" });
    },
    port: "server",
    method: "HEAD",
    errorType: IN_QUEUE,
  },
  {
    name: "connection refused",
    run: async (c) =>
      expect(await send(c.handler, request(c.h2, c.refused, "ok", "OPTIONS"))).toMatchObject({
        error: expect.stringMatching(/ECONNREFUSED/),
      }),
    port: "closed",
    method: "OPTIONS",
    errorType: REFUSED,
  },
];

const ALLOWED_LABELS = new Set([
  "http_request_method",
  "http_response_status_code",
  "error_type",
  "server_address",
  "server_port",
  "url_scheme",
  "network_protocol_version",
  "otel_scope_name",
  "otel_scope_version",
  "otel_scope_schema_url",
  "le",
]);

describe.each<Kind>(["NodeHttpHandler", "NodeHttp2Handler", "UndiciHttpHandler"])("%s", (kind) => {
  it("exports http.client.request.duration, body sizes and time in queue, scraped in Prometheus format", async () => {
    const h2 = kind === "NodeHttp2Handler";
    const { port, nextArrival } = await startServer(h2);
    const refused = await closedPort();
    const handler = makeHandler(kind);
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const meterProvider = new MeterProvider({ readers: [exporter] });
    const registration = registerPoolMetrics(handler.poolMonitor!, { meterProvider, bodySize: true });
    const metricsServer = http.createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
    await new Promise<void>((resolve) => metricsServer.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () => meterProvider.shutdown(),
      () => new Promise<void>((resolve) => metricsServer.close(() => resolve())),
      () => registration.unregister(),
      () => handler.destroy()
    );
    const events: PoolEvent[] = [];
    const unsubscribe = handler.poolMonitor!.subscribe!((e) => events.push(e));
    cleanups.push(unsubscribe);
    const ctx: Ctx = { kind, handler, h2, port, refused, nextArrival };
    for (const row of ROWS) await row.run(ctx);

    // Every request settled and left the pool (an aborted request closes a moment after its rejection).
    await vi.waitFor(() => {
      const totals = handler.poolMonitor!.getStats().totals;
      expect({ inFlight: totals.inFlight, queued: totals.queued }).toEqual({ inFlight: 0, queued: 0 });
    });

    const scrape = await get(`http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`);
    expect(scrape.status).toBe(200);
    const text = scrape.body;
    expect(text).toContain("# TYPE http_client_request_duration histogram");
    expect(text).toContain("# UNIT http_client_request_duration s");
    expect(text).toContain("# HELP http_client_request_duration Duration of HTTP client requests.");
    expect(text).toContain("# UNIT http_client_request_body_size By");
    expect(text).toContain("# UNIT http_client_response_body_size By");
    expect(text).toContain("# UNIT http_client_request_time_in_queue s");
    // The semconv bucket advice.
    expect(text).toMatch(/http_client_request_duration_bucket\{[^}]*le="0\.005"\}/);
    expect(text).toMatch(/http_client_request_duration_bucket\{[^}]*le="7\.5"\}/);
    // Origins only: no path, no query, no header value.
    expect(text).not.toMatch(/s3cr3t|SIGs3cr3t|Signature|tenant/i);

    const durations = samples(text, "http_client_request_duration_count");
    for (const s of durations) for (const key of Object.keys(s.labels)) expect(ALLOWED_LABELS).toContain(key);
    const scheme = h2 ? "https" : "http";
    const protocol = kind === "NodeHttpHandler" ? "1.1" : kind === "NodeHttp2Handler" ? "2" : undefined;
    for (const row of ROWS) {
      const expected: Record<string, string | undefined> = {
        http_request_method: row.method,
        http_response_status_code: row.status,
        error_type: row.errorType?.[kind],
        server_address: "127.0.0.1",
        server_port: String(row.port === "server" ? port : refused),
        url_scheme: scheme,
        network_protocol_version: protocol,
      };
      const match = durations.filter((s) => Object.entries(expected).every(([k, v]) => s.labels[k] === v));
      const all = durations.map((s) => JSON.stringify(s.labels)).join("\n");
      expect(
        match.map((s) => s.value),
        `${row.name}: ${JSON.stringify(expected)} in\n${all}`
      ).toEqual([1]);
    }
    // The holder of the queue row, aborted once the queued request timed out.
    const holder = durations.filter((s) => s.labels.http_request_method === "PATCH");
    expect(holder.map((s) => [s.labels.error_type, s.value])).toEqual([["AbortError", 1]]);
    // One series per row, plus the holder's.
    expect(durations.length).toBe(ROWS.length + 1);

    // Time in queue: every request that queued, those that got a connection (request:acquired, queued) and the one
    // that timed out in the queue without ever getting one (request:finished with queuedMs).
    const finished = events.filter((e) => e.type === "request:finished");
    expect(finished.length).toBe(ROWS.length + 1);
    const leftQueue = finished.filter((e) => e.queuedMs !== null);
    // A request waiting only for a connection being established is not queued, on HTTP/2 as on HTTP/1.1 (the refused
    // connection's request never queued).
    expect(leftQueue.map((e) => [e.method, e.outcome])).toEqual([["HEAD", "timed_out"]]);
    expect(leftQueue[0].queuedMs).toBeGreaterThanOrEqual(90);
    const acquiredQueued = events.filter((e) => e.type === "request:acquired" && e.queued).length;
    const inQueue = samples(text, "http_client_request_time_in_queue_count").filter(
      (s) => s.labels.server_port === String(port)
    );
    expect(inQueue.map((s) => s.value)).toEqual([acquiredQueued + 1]);
    const refusedInQueue = samples(text, "http_client_request_time_in_queue_count").filter(
      (s) => s.labels.server_port === String(refused)
    );
    expect(refusedInQueue).toEqual([]);

    // Body sizes from Content-Length: "hello" (5 B) per 200 response, the POST's 8-byte body.
    const requestBody = samples(text, "http_client_request_body_size_sum").filter(
      (s) => s.labels.http_request_method === "POST"
    );
    expect(requestBody.map((s) => s.value)).toEqual([8]);
    const responseBody = samples(text, "http_client_response_body_size_sum").filter(
      (s) => s.labels.http_response_status_code === "200"
    );
    expect(responseBody.map((s) => s.value).sort()).toEqual([5, 5]);
  });
});
