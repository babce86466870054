/**
 * A fault-injecting HTTP/1.1 proxy on 127.0.0.1 (port 0) in front of one origin (moto): every request that
 * arrives is counted and, by the fault plan, either forwarded (the response re-sent whole, with
 * `Content-Length`) or answered with a fault:
 *
 * - `reset-before-response`: the request is read, then the connection is reset (RST), no response byte sent;
 * - `reset-mid-body-keep-alive` / `reset-mid-body-close`: the origin's response head (with `Connection:
 *   keep-alive` or `close`) and half its body, then RST;
 * - `fin-mid-body-keep-alive` / `fin-mid-body-close`: the same, then a clean close (FIN): a truncated body;
 * - `stall`: the request is read and never answered.
 *
 * The plan is a list of faults for the next requests, then a mode for every later one (`"pass"` for a transient
 * fault, the fault itself for a persistent one). A refused connection is not a proxy mode: use `closedPort()`
 * (nothing listens there, so nothing can be counted but the client's `$metadata.attempts`).
 *
 * Forwarding buffers each request and response (small API calls only); upstream connections are kept alive.
 */
import { once } from "node:events";
import http from "node:http";
import type net from "node:net";

/** What the proxy does with one request. */
export type ProxyMode =
  | "pass"
  | "reset-before-response"
  | "reset-mid-body-keep-alive"
  | "reset-mid-body-close"
  | "fin-mid-body-keep-alive"
  | "fin-mid-body-close"
  | "stall";

/** @internal */
export interface FaultProxy {
  /** `http://127.0.0.1:PORT` */
  readonly endpoint: string;
  /** Requests received (each is one SDK attempt). */
  requests(): number;
  /** TCP connections accepted. */
  connections(): number;
  /** TCP connections currently open. */
  openConnections(): number;
  /** `faults` for the next requests, then `then` for every later one. */
  plan(faults: readonly ProxyMode[], then: ProxyMode): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"]);

async function bodyOf(stream: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a proxy in front of `origin` (`http://host:port`). @internal */
export async function startFaultProxy(origin: string): Promise<FaultProxy> {
  const target = new URL(origin);
  const upstream = new http.Agent({ keepAlive: true });
  let faults: ProxyMode[] = [];
  let then: ProxyMode = "pass";
  let requests = 0;
  let connections = 0;
  const sockets = new Set<net.Socket>();

  async function forward(req: http.IncomingMessage, body: Buffer): Promise<http.IncomingMessage & { body: Buffer }> {
    const out = http.request({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
      agent: upstream,
    });
    out.end(body);
    const [res] = (await once(out, "response")) as [http.IncomingMessage];
    return Object.assign(res, { body: await bodyOf(res) });
  }

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    requests++;
    const mode = faults.shift() ?? then;
    const body = await bodyOf(req);
    if (mode === "stall") return;
    if (mode === "reset-before-response") {
      req.socket.resetAndDestroy();
      return;
    }
    const answer = await forward(req, body);
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
    }
    headers["content-length"] = answer.body.length;
    if (mode === "pass") {
      res.writeHead(answer.statusCode ?? 502, headers);
      res.end(answer.body);
      return;
    }
    headers.connection = mode.endsWith("-close") ? "close" : "keep-alive";
    res.writeHead(answer.statusCode ?? 502, headers);
    const half = answer.body.subarray(0, Math.max(1, answer.body.length >> 1));
    res.write(half, () =>
      setImmediate(() => {
        if (mode.startsWith("reset-")) req.socket.resetAndDestroy();
        else req.socket.end();
      })
    );
  }

  const server = http.createServer((req, res) => {
    serve(req, res).catch(() => req.socket.destroy());
  });
  server.keepAliveTimeout = 10_000;
  server.on("connection", (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests: () => requests,
    connections: () => connections,
    openConnections: () => sockets.size,
    plan(next, after) {
      faults = [...next];
      then = after;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      upstream.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export { closedPort } from "../../../node-http-handler/test/servers.js";
