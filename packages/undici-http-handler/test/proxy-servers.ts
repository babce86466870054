/**
 * Loopback servers for the real-proxy suite:
 * - `startConnectProxy()`: an HTTP proxy that only tunnels (`CONNECT host:port` → a TCP connection to the target,
 *   `200 Connection Established`, bytes piped both ways). It counts the tunnels it opened and records the local port
 *   of each upstream socket, so a test can prove that every connection the origin saw came through it. Any other
 *   request (a client that mistook it for an origin) is counted and answered 405.
 * - `startS3Origin()`: a self-signed https server (the fixture certificate, CA `CA`) answering S3-ish 200s: a GET
 *   gets a small body, a PUT is read to the end and answered with an `ETag`. It records, per request, the method,
 *   path, `expect` header and body length, and the remote port of every TLS connection it accepted.
 * Both track their sockets and destroy them on `close()`.
 */
import { once } from "node:events";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { KEY } from "../../node-http-handler/test/servers";
import { CA } from "../../node-http-handler/test/servers";

export { CA };

export interface ConnectProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Tunnels opened (CONNECT requests answered 200). */
  readonly tunnels: number;
  /** `host:port` of every CONNECT, in order. */
  readonly targets: string[];
  /** Local ports of the proxy's upstream sockets (what the origin sees as the remote port). */
  readonly upstreamPorts: Set<number>;
  /** Requests that were not CONNECT (should stay 0). */
  readonly plainRequests: number;
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<ConnectProxy> {
  const sockets = new Set<net.Socket>();
  const track = (socket: net.Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  let tunnels = 0;
  let plainRequests = 0;
  const targets: string[] = [];
  const upstreamPorts = new Set<number>();
  const server = http.createServer((_req, res) => {
    plainRequests++;
    res.writeHead(405, { connection: "close" });
    res.end("this proxy only tunnels (CONNECT)");
  });
  server.on("connection", track);
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? "";
    targets.push(target);
    const colon = target.lastIndexOf(":");
    const host = target.slice(0, colon).replace(/^\[|\]$/g, "");
    const port = Number(target.slice(colon + 1));
    const upstream = net.connect(port, host);
    track(upstream);
    upstream.on("connect", () => {
      tunnels++;
      upstreamPorts.add(upstream.localPort as number);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get tunnels() {
      return tunnels;
    },
    targets,
    upstreamPorts,
    get plainRequests() {
      return plainRequests;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface OriginRequest {
  method: string;
  path: string;
  expect: string | undefined;
  bodyLength: number;
}

export interface S3Origin {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  readonly requests: OriginRequest[];
  /** Remote ports of every TLS connection accepted. */
  readonly connectionPorts: number[];
  close(): Promise<void>;
}

export async function startS3Origin(): Promise<S3Origin> {
  const sockets = new Set<net.Socket>();
  const requests: OriginRequest[] = [];
  const connectionPorts: number[] = [];
  const server = https.createServer({ key: KEY, cert: CA }, (req, res) => {
    let bodyLength = 0;
    req.on("data", (chunk: Buffer) => {
      bodyLength += chunk.length;
    });
    req.on("end", () => {
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        expect: req.headers.expect,
        bodyLength,
      });
      if (req.method === "PUT") {
        res.writeHead(200, { etag: '"0123456789abcdef"', "content-length": "0" });
        res.end();
      } else {
        const body = "hello through the proxy";
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(body.length) });
        res.end(body);
      }
    });
  });
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    connectionPorts.push(socket.remotePort as number);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    connectionPorts,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
