/**
 * Real loopback servers for the integration suites (http and https on 127.0.0.1 or ::1, port 0).
 *
 * One router serves every test endpoint, so a test picks behaviour through the request path:
 *
 *   /echo               200, JSON `{ method, url, headers, body (base64) }` after the whole body arrived
 *   /status/<code>      <code> with body "status <code>" (none for 204/304)
 *   /reason             200 with the status message "Custom Reason"
 *   /repeat-headers     two `set-cookie` lines and two `x-dup` lines
 *   /chunked            three chunks written on separate turns, no content-length
 *   /large?bytes=N      N bytes of a deterministic pattern (see `patternBytes`)
 *   /delay?ms=N         echo after N ms
 *   /slow-body?ms=N     headers + "part-1;" now, "part-2" after N ms
 *   /stall-body         headers (content-length 100) + 10 bytes, then silence
 *   /never              reads the body, never answers
 *   /reset              destroys the socket as soon as the request head is parsed
 *   /reset-mid-body     headers (content-length 100) + 10 bytes, then destroys the socket
 *   /fin-mid-body       headers (content-length 100) + 10 bytes, then ends the connection (FIN: a truncated body)
 *   /half-close         reads the body, then ends its side of the connection without a response
 *   /malformed          reads the body, then writes an unparsable status line and ends the connection
 *   /stream-sink        emits "first-chunk" on `events` with the first body chunk, answers `{ length, sha256 }`
 *   /early-413          answers 413 at once, without reading the body
 *
 * With `Expect: 100-continue` (the server's `checkContinue` listener):
 *
 *   /continue           waits 50 ms, records the body bytes already buffered (`bytesBeforeContinue`), sends
 *                       `100 Continue`, then echoes
 *   /expect-417         answers 417 without `100 Continue`; every body byte that still arrives is recorded
 *   /continue-never     never answers (neither `100 Continue` nor a response); body bytes are recorded
 *
 * `?close=1` on /stall-body, /reset-mid-body and /fin-mid-body adds `Connection: close` to the response head.
 *
 * Every request is recorded in `received` as it starts (its `body` keeps growing until `complete`). `close()`
 * destroys every connection, so a stalled endpoint never keeps a test (or the process) alive.
 */
import { createHash } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { join } from "node:path";
import { HttpRequest } from "@smithy/protocol-http";
import type { HeaderBag, QueryParameterBag } from "@smithy/types";

/** Directory of the committed TLS fixture (self-signed for 127.0.0.1, ::1 and localhost). */
export const FIXTURES_DIR = join(__dirname, "fixtures");
/** PEM certificate of the fixture, to pass as `ca`. */
export const CA = readFileSync(join(FIXTURES_DIR, "localhost-cert.pem"));
/** PEM private key of the fixture. */
export const KEY = readFileSync(join(FIXTURES_DIR, "localhost-key.pem"));

export type ServerKind = "http" | "https";

/** What the server saw of one request. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Body bytes so far (final once `complete`). */
  body: Buffer;
  complete: boolean;
  /** For `/continue`: body bytes already buffered when `100 Continue` was about to be sent. */
  bytesBeforeContinue?: number;
  /** Whether the request came through the `checkContinue` listener. */
  viaCheckContinue: boolean;
}

export interface TestServer {
  kind: ServerKind;
  protocol: "http:" | "https:";
  /** Hostname to put in an `HttpRequest` ("127.0.0.1" or "[::1]"). */
  hostname: string;
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** TCP connections currently open. */
  readonly openConnections: number;
  /** Emits "request" (ReceivedRequest) and "first-chunk" (Buffer). */
  events: EventEmitter;
  /** Resolves once `received.length >= n`. */
  waitForRequests(n: number): Promise<void>;
  /** Destroys every open connection (the server keeps listening). */
  dropConnections(): void;
  close(): Promise<void>;
}

/** `n` bytes of a fixed pattern (byte i = (i * 31 + 7) & 255). */
export function patternBytes(n: number): Buffer {
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + 7) & 255;
  return out;
}

export function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

function record(server: InternalState, req: http.IncomingMessage, viaCheckContinue: boolean): ReceivedRequest {
  const rec: ReceivedRequest = {
    method: req.method ?? "",
    url: req.url ?? "",
    headers: req.headers,
    body: Buffer.alloc(0),
    complete: false,
    viaCheckContinue,
  };
  server.received.push(rec);
  server.events.emit("request", rec);
  return rec;
}

function collectInto(rec: ReceivedRequest, req: http.IncomingMessage, onEnd?: () => void): void {
  req.on("data", (chunk: Buffer) => {
    rec.body = Buffer.concat([rec.body, chunk]);
  });
  req.on("end", () => {
    rec.complete = true;
    onEnd?.();
  });
}

function echo(rec: ReceivedRequest, res: http.ServerResponse): void {
  const payload = JSON.stringify({
    method: rec.method,
    url: rec.url,
    headers: rec.headers,
    body: rec.body.toString("base64"),
  });
  res.writeHead(200, { "content-type": "application/json", "x-echo": "1" });
  res.end(payload);
}

interface InternalState {
  received: ReceivedRequest[];
  events: EventEmitter;
}

/** `headers` plus `connection: close` when the request's query has `close=1`. */
function closeIfAsked(url: URL, headers: http.OutgoingHttpHeaders): http.OutgoingHttpHeaders {
  return url.searchParams.get("close") === "1" ? { ...headers, connection: "close" } : headers;
}

function route(state: InternalState, req: http.IncomingMessage, res: http.ServerResponse, rec: ReceivedRequest): void {
  const url = new URL(req.url ?? "/", "http://x");
  const path = url.pathname;
  const num = (name: string, dflt: number): number => Number(url.searchParams.get(name) ?? dflt);
  if (path.startsWith("/status/")) {
    const code = Number(path.slice("/status/".length));
    collectInto(rec, req, () => {
      res.statusCode = code;
      if (code === 204 || code === 304) res.end();
      else res.end(`status ${code}`);
    });
    return;
  }
  switch (path) {
    case "/reason":
      collectInto(rec, req, () => {
        res.statusMessage = "Custom Reason";
        res.end("ok");
      });
      return;
    case "/repeat-headers":
      collectInto(rec, req, () => {
        res.setHeader("set-cookie", ["a=1", "b=2"]);
        res.setHeader("x-dup", ["1", "2"]);
        res.end("repeated");
      });
      return;
    case "/chunked":
      collectInto(rec, req, () => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("chunk-1;");
        setImmediate(() => {
          res.write("chunk-2;");
          setImmediate(() => res.end("chunk-3"));
        });
      });
      return;
    case "/large":
      collectInto(rec, req, () => {
        const body = patternBytes(num("bytes", 1024));
        res.writeHead(200, { "content-length": body.length });
        res.end(body);
      });
      return;
    case "/delay":
      collectInto(rec, req, () => {
        const timer = setTimeout(() => echo(rec, res), num("ms", 100));
        res.on("close", () => clearTimeout(timer));
      });
      return;
    case "/slow-body":
      collectInto(rec, req, () => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("part-1;");
        const timer = setTimeout(() => res.end("part-2"), num("ms", 100));
        res.on("close", () => clearTimeout(timer));
      });
      return;
    case "/stall-body":
      collectInto(rec, req, () => {
        res.writeHead(200, closeIfAsked(url, { "content-length": 100 }));
        res.write("0123456789");
      });
      return;
    case "/never":
      collectInto(rec, req);
      return;
    case "/reset":
      req.socket.destroy();
      return;
    case "/reset-mid-body":
      collectInto(rec, req, () => {
        res.writeHead(200, closeIfAsked(url, { "content-length": 100 }));
        res.write("0123456789", () => setImmediate(() => req.socket.destroy()));
      });
      return;
    case "/fin-mid-body":
      collectInto(rec, req, () => {
        res.writeHead(200, closeIfAsked(url, { "content-length": 100 }));
        res.write("0123456789", () => setImmediate(() => req.socket.end()));
      });
      return;
    case "/half-close":
      // The server ends its side of the connection without a response.
      collectInto(rec, req, () => req.socket.end());
      return;
    case "/malformed":
      collectInto(rec, req, () => {
        req.socket.write("HTTP/1.1 ABC not-a-status\r\nbroken header line\r\n\r\n");
        req.socket.end();
      });
      return;
    case "/early-413":
      res.writeHead(413, { "content-type": "text/plain", connection: "close" });
      res.end("too large");
      return;
    case "/stream-sink": {
      let first = true;
      const hash = createHash("sha256");
      let length = 0;
      req.on("data", (chunk: Buffer) => {
        if (first) {
          first = false;
          state.events.emit("first-chunk", chunk);
        }
        length += chunk.length;
        hash.update(chunk);
      });
      req.on("end", () => {
        rec.complete = true;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ length, sha256: hash.digest("hex") }));
      });
      return;
    }
    default:
      collectInto(rec, req, () => echo(rec, res));
  }
}

function onCheckContinue(state: InternalState, req: http.IncomingMessage, res: http.ServerResponse): void {
  const rec = record(state, req, true);
  const path = new URL(req.url ?? "/", "http://x").pathname;
  if (path === "/continue-never") {
    collectInto(rec, req);
    return;
  }
  if (path === "/expect-417") {
    collectInto(rec, req);
    res.writeHead(417, { "content-type": "text/plain" });
    res.end("expectation failed");
    return;
  }
  // "/continue" and anything else: let the client prove it waits, then continue and echo.
  const timer = setTimeout(() => {
    rec.bytesBeforeContinue = req.readableLength;
    res.writeContinue();
    collectInto(rec, req, () => echo(rec, res));
  }, 50);
  res.on("close", () => clearTimeout(timer));
}

/**
 * Starts an http or https server with the router above on `host` (default 127.0.0.1), port 0.
 */
export async function startServer(kind: ServerKind, host = "127.0.0.1"): Promise<TestServer> {
  const state: InternalState = { received: [], events: new EventEmitter() };
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) =>
    route(state, req, res, record(state, req, false));
  const server: http.Server =
    kind === "https" ? https.createServer({ key: KEY, cert: CA }, onRequest) : http.createServer(onRequest);
  server.on("checkContinue", (req, res) => onCheckContinue(state, req, res));
  const sockets = new Set<net.Socket>();
  let connections = 0;
  server.on("connection", (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // TLS handshakes that a test aborts must not surface as server errors.
  server.on("tlsClientError", () => {});
  server.on("clientError", (_err, socket) => socket.destroy());
  server.listen(0, host);
  await once(server, "listening");
  const port = (server.address() as net.AddressInfo).port;
  return {
    kind,
    protocol: kind === "https" ? "https:" : "http:",
    hostname: host.includes(":") ? `[${host}]` : host,
    port,
    received: state.received,
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    events: state.events,
    waitForRequests: (n) => waitFor(() => state.received.length >= n, `${n} requests`),
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A TCP server that accepts connections and never writes a byte: an https client's TLS handshake never
 * completes (the TCP connect does).
 */
export async function startSilentTcpServer(): Promise<{
  port: number;
  readonly connections: number;
  /** TCP connections currently open. */
  readonly openConnections: number;
  close(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    // Discard what arrives (never answer), so the client's close is seen and counted.
    socket.resume();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A loopback port that refuses connections, and keeps refusing while the test runs.
 *
 * A port bound with `listen(0)` and released goes back to the kernel's ephemeral range, where the next `listen(0)`
 * of a concurrent test (a server, a proxy) may get it, so the "refused" request reaches a live server instead. The port
 * returned here lies below that range (`ip_local_port_range` starts at 32768 by default; tests only ever listen on port
 * 0), and is checked to refuse a connection before it is returned.
 */
export async function closedPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (await refuses(port)) return port;
  }
  throw new Error("closedPort: found no refusing loopback port in 20000-29999 after 50 tries");
}

/** Whether a connection to 127.0.0.1:`port` is refused (ECONNREFUSED). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

/** Whether a server can listen on `host` (e.g. "::1" on hosts without IPv6). */
export async function canListen(host: string): Promise<boolean> {
  const server = net.createServer();
  try {
    server.listen(0, host);
    await once(server, "listening");
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return true;
  } catch {
    return false;
  }
}

export interface RequestInit {
  method?: string;
  path?: string;
  query?: QueryParameterBag;
  fragment?: string;
  headers?: HeaderBag;
  body?: unknown;
  username?: string;
  password?: string;
  hostname?: string;
  port?: number;
  protocol?: string;
}

/** An `HttpRequest` aimed at `server` (host header included, as the SDK sets it). */
export function requestTo(
  server: { protocol: string; hostname: string; port: number },
  init: RequestInit = {}
): HttpRequest {
  const hostname = init.hostname ?? server.hostname;
  const port = init.port ?? server.port;
  return new HttpRequest({
    protocol: init.protocol ?? server.protocol,
    hostname,
    port,
    method: init.method ?? "GET",
    path: init.path ?? "/echo",
    query: init.query,
    fragment: init.fragment,
    headers: { host: `${hostname}:${port}`, ...init.headers },
    body: init.body,
    username: init.username,
    password: init.password,
  });
}

/** Reads a stream to the end. */
export async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

/** Polls `predicate` every 5 ms until true; rejects after `timeoutMs` (default 1500 ms) naming `what`. */
/** The real `setTimeout`, captured before any spec fakes it: waits poll real I/O whatever timers are faked. */
const realSetTimeout = globalThis.setTimeout;

export async function waitFor(predicate: () => boolean, what = "condition", timeoutMs = 1500): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
}

/** Resolves after `ms` of real time (short waits only: the suites never sleep for long). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}
