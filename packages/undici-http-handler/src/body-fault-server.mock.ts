/**
 * A loopback http / https server (127.0.0.1, port 0) for the body-fault and queue suites: responses cut short in
 * every way a connection can end mid-body, and requests held until the test releases them. Counts TCP connections
 * accepted and open (what "no connection opened or closed" is asserted on).
 *
 *   /reset-mid      200, content-length 100, 10 bytes, then the socket is destroyed (RST)          keep-alive
 *   /fin-close      200, content-length 100, `connection: close`, 10 bytes, then FIN               truncated
 *   /reset-close    the same with a reset instead of the FIN
 *   /fin-chunked    200, chunked, `connection: close`, one chunk, then FIN (no terminating chunk)
 *   /stall          200, content-length 100, 10 bytes, then silence
 *   /hold           nothing until `release()` (then 200 "held")
 *   /big            200, 4 MiB of a byte pattern (backpressure on the client)
 *   /json-cut…      200 `application/x-amz-json-1.0`, content-length 64, `connection: close`, a JSON prefix, FIN
 *                   (a DynamoDB response cut short; any path starting so, the SDK appends "/")
 *   /json-reset…    the same on a keep-alive connection, reset mid-body
 *   anything else   200 "ok"
 *
 * Test helper (`*.mock.ts`): not part of the build.
 */
import { once } from "node:events";
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { CA, KEY } from "../../node-http-handler/test/servers";

export interface BodyFaultServer {
  protocol: "http:" | "https:";
  hostname: string;
  port: number;
  /** Requests received, by path (query stripped). */
  readonly requests: Map<string, number>;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** TCP connections currently open. */
  readonly openConnections: number;
  /** Requests currently held by `/hold`. */
  readonly held: number;
  /** Answers every held request. */
  release(): void;
  close(): Promise<void>;
}

function cutShort(req: http.IncomingMessage, res: http.ServerResponse, how: "fin" | "reset"): void {
  res.write("0123456789", () =>
    setImmediate(() => {
      if (how === "fin") req.socket.end();
      // An RST where the socket type allows it (a TLS socket's handle cannot reset: destroyed instead).
      else if ("encrypted" in req.socket) req.socket.destroy();
      else req.socket.resetAndDestroy();
    })
  );
}

export async function startBodyFaultServer(kind: "http" | "https"): Promise<BodyFaultServer> {
  const requests = new Map<string, number>();
  const held: http.ServerResponse[] = [];
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    let path = (req.url ?? "/").split("?")[0];
    if (path.startsWith("/json-cut")) path = "/json-cut";
    else if (path.startsWith("/json-reset")) path = "/json-reset";
    requests.set(path, (requests.get(path) ?? 0) + 1);
    req.resume();
    req.on("end", () => {
      switch (path) {
        case "/reset-mid":
          res.writeHead(200, { "content-length": 100 });
          cutShort(req, res, "reset");
          return;
        case "/fin-close":
          res.writeHead(200, { "content-length": 100, connection: "close" });
          cutShort(req, res, "fin");
          return;
        case "/reset-close":
          res.writeHead(200, { "content-length": 100, connection: "close" });
          cutShort(req, res, "reset");
          return;
        case "/fin-chunked":
          res.writeHead(200, { connection: "close" });
          cutShort(req, res, "fin");
          return;
        case "/stall":
          res.writeHead(200, { "content-length": 100 });
          res.write("0123456789");
          return;
        case "/hold":
          held.push(res);
          return;
        case "/big": {
          const body = Buffer.alloc(4 * 1024 * 1024);
          for (let i = 0; i < body.length; i++) body[i] = i & 255;
          res.writeHead(200, { "content-length": body.length });
          res.end(body);
          return;
        }
        case "/json-cut":
          res.writeHead(200, {
            "content-type": "application/x-amz-json-1.0",
            "content-length": 64,
            connection: "close",
          });
          res.write('{"Item":{"pk":{"S":"a', () => setImmediate(() => req.socket.end()));
          return;
        case "/json-reset":
          res.writeHead(200, { "content-type": "application/x-amz-json-1.0", "content-length": 64 });
          cutShort(req, res, "reset");
          return;
        default:
          res.end("ok");
      }
    });
  };
  const server: http.Server =
    kind === "https" ? https.createServer({ key: KEY, cert: CA }, onRequest) : http.createServer(onRequest);
  const sockets = new Set<net.Socket>();
  let connections = 0;
  server.on("connection", (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  server.on("clientError", (_err, socket) => socket.destroy());
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    protocol: kind === "https" ? "https:" : "http:",
    hostname: "127.0.0.1",
    port: (server.address() as net.AddressInfo).port,
    requests,
    get connections() {
      return connections;
    },
    get openConnections() {
      return sockets.size;
    },
    get held() {
      return held.length;
    },
    release() {
      for (const res of held.splice(0)) if (!res.destroyed) res.end("held");
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
