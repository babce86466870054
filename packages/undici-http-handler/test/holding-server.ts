/**
 * A loopback server (127.0.0.1, port 0) that holds every request until the spec releases it, over HTTP/1.1 or HTTP/2
 * (cleartext h2c with prior knowledge, or TLS with the committed self-signed certificate of
 * `packages/node-http-handler/test/fixtures`, valid for 127.0.0.1), behind one interface, so a scenario drives all three
 * handlers the same way.
 *
 * - Every request (stream) is read to its end, then held in arrival order.
 * - `release(n)` answers the `n` oldest held requests: `200` with `"ok"`, or, for the path `/big`, a 1 MiB body (more
 *   than the socket buffers and HTTP/2's 64 KiB stream window take, so a body nobody reads pins its connection or
 *   stream slot, as an unread S3 `GetObject` body does).
 * - HTTP/2 announces `maxConcurrentStreams` (`streamsPerSession`), so a handler with `maxSessionsPerOrigin: 1` has
 *   exactly that many stream slots, as an HTTP/1.1 handler with `maxSockets` has sockets.
 * - `close()` destroys every connection (held requests included) and closes the server.
 */
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { CA, KEY } from "../../node-http-handler/test/servers";

/** Bytes of a `/big` response body. */
export const BIG_BODY_BYTES = 1 << 20;

/** The transport a holding server speaks. */
export type HoldingProtocol = "http1" | "h2c";

/** A request the server has read and not answered yet. */
interface Held {
  big: boolean;
  answer(status: number, body: Buffer | string): void;
}

/** See the header. */
export interface HoldingServer {
  /** `http://127.0.0.1:<port>` (`https://` with TLS) */
  readonly origin: string;
  readonly port: number;
  /** Requests read and not answered yet. */
  readonly held: number;
  /** Requests received since start. */
  readonly received: number;
  /**
   * Bytes of the `/big` bodies answered and not yet handed to the kernel (the server's write buffers): it stops
   * changing once every unread body's connection or stream window is full.
   */
  readonly unsentBigBytes: number;
  /** Answers the `n` oldest held requests (all when omitted); returns how many were answered. */
  release(n?: number): number;
  close(): Promise<void>;
}

const BIG = Buffer.alloc(BIG_BODY_BYTES, 0x61);

/** The PEM certificate to trust (`ca`) for a TLS holding server. */
export const HOLDING_SERVER_CA = CA;

/**
 * Starts a holding server; `streamsPerSession` is the HTTP/2 `maxConcurrentStreams` it announces; `tls` serves https
 * (HTTP/1.1) or h2 over TLS instead of cleartext.
 */
export async function startHoldingServer(
  protocol: HoldingProtocol,
  streamsPerSession = 2,
  tls = false
): Promise<HoldingServer> {
  const held: Held[] = [];
  const sockets = new Set<Socket>();
  /** The writers of the `/big` answers (`ServerResponse` or server stream) until they finish or close. */
  const bigWriters = new Set<{ writableLength: number; once(event: "close", listener: () => void): unknown }>();
  let received = 0;
  const onRequestEnd = (path: string, answer: Held["answer"]) => {
    received++;
    held.push({ big: path.startsWith("/big"), answer });
  };
  const watchBig = (writer: http.ServerResponse | http2.ServerHttp2Stream) => {
    bigWriters.add(writer);
    writer.once("close", () => bigWriters.delete(writer));
  };
  let server: http.Server | http2.Http2Server | http2.Http2SecureServer;
  if (protocol === "http1") {
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
      req.resume();
      req.on("end", () =>
        onRequestEnd(req.url ?? "/", (status, body) => {
          if (res.destroyed) return;
          res.writeHead(status, { "content-type": "text/plain" });
          if (body === BIG) watchBig(res);
          res.end(body);
        })
      );
    };
    server = tls
      ? https.createServer({ key: KEY, cert: CA, keepAliveTimeout: 600_000 }, onRequest)
      : http.createServer({ keepAliveTimeout: 600_000 }, onRequest);
  } else {
    const settings = { maxConcurrentStreams: streamsPerSession };
    const h2 = tls
      ? http2.createSecureServer({ key: KEY, cert: CA, allowHTTP1: false, settings })
      : http2.createServer({ settings });
    h2.on("session", (session) => session.on("error", () => {}));
    h2.on("stream", (stream, headers) => {
      stream.on("error", () => {});
      stream.resume();
      stream.on("end", () =>
        onRequestEnd(String(headers[":path"] ?? "/"), (status, body) => {
          if (stream.destroyed) return;
          stream.respond({ ":status": status, "content-type": "text/plain" });
          if (body === BIG) watchBig(stream);
          stream.end(body);
        })
      );
    });
    server = h2;
  }
  // TLS servers see the raw socket on "connection" too (before the handshake).
  (server as http.Server).on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `${tls ? "https" : "http"}://127.0.0.1:${port}`,
    port,
    get held() {
      return held.length;
    },
    get received() {
      return received;
    },
    get unsentBigBytes() {
      let bytes = 0;
      for (const w of bigWriters) bytes += w.writableLength;
      return bytes;
    },
    release(n = held.length) {
      const answered = held.splice(0, n);
      for (const h of answered) h.answer(200, h.big ? BIG : "ok");
      return answered.length;
    },
    close() {
      held.length = 0;
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
