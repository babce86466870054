/**
 * Real loopback HTTP/2 servers for the HTTP/2 suites (127.0.0.1, port 0, the committed self-signed certificate).
 *
 * `startH2Server()` routes by path:
 *
 *   /echo                200, JSON `{ method, path, headers, body }` once the whole request body arrived
 *   /status/<code>       <code>, body "status <code>"
 *   /repeat-headers      two `set-cookie` values and `x-dup: a, b`
 *   /large?bytes=N       N bytes of "abcdefghij…", handed to the stream at once (the server queues what the client's
 *                        flow-control window does not take yet: past `maxSessionMemory` it refuses new streams)
 *   /paced?bytes=N       the same bytes written 64 KiB at a time, each after the last drained (flow-controlled)
 *   /delay?ms=N          echo after N ms
 *   /never               reads the body, never answers
 *   /rst                 RST_STREAM (INTERNAL_ERROR) before any response
 *   /refuse              RST_STREAM (REFUSED_STREAM) before any response
 *   /calm                RST_STREAM (ENHANCE_YOUR_CALM) before any response
 *   /rst-mid-body        headers + "part", then RST_STREAM (INTERNAL_ERROR, no END_STREAM: the body is cut)
 *   /goaway              GOAWAY (INTERNAL_ERROR, last stream 0) before answering, then the session is closed
 *   /goaway-mid-body     headers + "part", then GOAWAY and the connection destroyed
 *   /die                 every connection of the server destroyed (server dies with streams open)
 *   /die-mid-body        headers + "part", then every connection destroyed (the body is cut by a dead server)
 *   /close-mid-body      headers + "part", then the session destroyed: GOAWAY(NO_ERROR) and the connection closed
 *                        (Node's client ends such a body as if it were complete)
 *   /trickle?n=N&ms=M    200, then one "." every M ms, N times, then the end
 *   /duplex              200 headers at once, then echoes each request body chunk as it arrives, ends with it
 *
 * `startH2Server({ tls: false })` serves the same routes over cleartext h2c (prior knowledge, `http:` origins).
 *
 * `startRawH2cServer()` speaks just enough cleartext HTTP/2 by hand (prior knowledge) to misbehave on purpose:
 * `mode: "silent"` never sends SETTINGS (a session that never gets established), `mode: "bad-frame"` sends SETTINGS
 * and answers the first request with a DATA frame on stream 0 (a connection PROTOCOL_ERROR).
 */
import { HttpRequest } from "@smithy/protocol-http";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { join } from "node:path";

const FIXTURES = join(__dirname, "..", "fixtures");
/** PEM certificate of the fixture, to pass as `ca`. */
export const CA = readFileSync(join(FIXTURES, "localhost-cert.pem"));
const KEY = readFileSync(join(FIXTURES, "localhost-key.pem"));

export interface H2TestServer {
  port: number;
  /** `https://localhost:<port>` (`http://` for h2c) */
  origin: string;
  /** `"https:"`, or `"http:"` for h2c. */
  protocol: "https:" | "http:";
  server: http2.Http2SecureServer | http2.Http2Server;
  /** Server-side sessions open now. */
  readonly sessionsOpen: number;
  /** Server-side sessions accepted since start. */
  readonly sessionsAccepted: number;
  /** Streams received, by path. */
  readonly paths: string[];
  /** Streams currently open on the server. */
  readonly openStreams: number;
  close(): Promise<void>;
}

export interface H2ServerOptions {
  /** SETTINGS the server announces (e.g. `{ maxConcurrentStreams: 2 }`). */
  settings?: http2.Settings;
  /** `false`: cleartext h2c instead of TLS. @defaultValue true */
  tls?: boolean;
}

function collect(stream: http2.ServerHttp2Stream): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", () => resolve(Buffer.concat(chunks)));
    stream.on("close", () => resolve(Buffer.concat(chunks)));
  });
}

export async function startH2Server(options: H2ServerOptions = {}): Promise<H2TestServer> {
  const tls = options.tls !== false;
  const server = tls
    ? http2.createSecureServer({ key: KEY, cert: CA, settings: options.settings, allowHTTP1: false })
    : http2.createServer({ settings: options.settings });
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<net.Socket>();
  const paths: string[] = [];
  let accepted = 0;
  let openStreams = 0;
  (server as http2.Http2Server).on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  (server as http2.Http2Server).on("session", (session) => {
    accepted++;
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
    session.on("error", () => {});
  });
  (server as http2.Http2Server).on("stream", (stream, headers) => {
    openStreams++;
    stream.on("close", () => openStreams--);
    stream.on("error", () => {});
    const url = new URL(String(headers[":path"]), "https://localhost");
    paths.push(url.pathname);
    const session = stream.session;
    switch (url.pathname) {
      case "/echo":
      case "/delay": {
        const delay = Number(url.searchParams.get("ms") ?? 0);
        void collect(stream).then((body) => {
          const send = () => {
            if (stream.destroyed) return;
            const received: Record<string, unknown> = {};
            for (const [k, v] of Object.entries(headers)) received[k] = v;
            stream.respond({ ":status": 200, "content-type": "application/json", "x-server": "h2" });
            stream.end(
              JSON.stringify({
                method: headers[":method"],
                path: headers[":path"],
                headers: received,
                body: body.toString(),
              })
            );
          };
          if (delay > 0) setTimeout(send, delay);
          else send();
        });
        return;
      }
      case "/repeat-headers":
        stream.respond({ ":status": 200, "set-cookie": ["a=1", "b=2"], "x-dup": "a, b" });
        stream.end("ok");
        return;
      case "/large": {
        const n = Number(url.searchParams.get("bytes") ?? 0);
        const buf = Buffer.alloc(n);
        for (let i = 0; i < n; i++) buf[i] = 97 + (i % 10);
        stream.respond({ ":status": 200 });
        stream.end(buf);
        return;
      }
      case "/paced": {
        const n = Number(url.searchParams.get("bytes") ?? 0);
        stream.respond({ ":status": 200 });
        let sent = 0;
        const more = (): void => {
          while (sent < n && !stream.destroyed) {
            const size = Math.min(65536, n - sent);
            const chunk = Buffer.alloc(size);
            for (let i = 0; i < size; i++) chunk[i] = 97 + ((sent + i) % 10);
            sent += size;
            if (!stream.write(chunk)) return void stream.once("drain", more);
          }
          if (!stream.destroyed) stream.end();
        };
        more();
        return;
      }
      case "/refuse":
        stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      case "/calm":
        stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
        return;
      case "/never":
        stream.resume();
        return;
      case "/rst":
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
        return;
      case "/rst-mid-body":
        // destroy(error) resets the stream (INTERNAL_ERROR) without END_STREAM; close(code) would end the body first.
        stream.respond({ ":status": 200 });
        stream.write("part", () => setImmediate(() => stream.destroy(new Error("reset mid-body"))));
        return;
      case "/goaway":
        session?.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR, 0);
        setImmediate(() => session?.destroy());
        return;
      case "/goaway-mid-body":
        stream.respond({ ":status": 200 });
        stream.write("part", () =>
          setImmediate(() => {
            session?.goaway(http2.constants.NGHTTP2_INTERNAL_ERROR, 0);
            setImmediate(() => session?.destroy());
          })
        );
        return;
      case "/die":
        for (const s of sockets) s.destroy();
        return;
      case "/die-mid-body":
        stream.respond({ ":status": 200 });
        stream.write("part", () =>
          setImmediate(() => {
            for (const s of sockets) s.destroy();
          })
        );
        return;
      case "/close-mid-body":
        stream.respond({ ":status": 200 });
        stream.write("part", () => setImmediate(() => session?.destroy()));
        return;
      case "/trickle": {
        const n = Number(url.searchParams.get("n") ?? 10);
        const ms = Number(url.searchParams.get("ms") ?? 20);
        stream.respond({ ":status": 200 });
        let sent = 0;
        const timer = setInterval(() => {
          if (stream.destroyed) return clearInterval(timer);
          if (++sent >= n) {
            clearInterval(timer);
            stream.end(".");
          } else stream.write(".");
        }, ms);
        stream.on("close", () => clearInterval(timer));
        return;
      }
      case "/duplex":
        stream.respond({ ":status": 200 });
        stream.on("data", (chunk: Buffer) => stream.write(`echo:${chunk.toString()};`));
        stream.on("end", () => stream.end("done"));
        return;
      default: {
        const match = /^\/status\/(\d+)$/.exec(url.pathname);
        if (match) {
          stream.resume();
          stream.respond({ ":status": Number(match[1]) });
          stream.end(`status ${match[1]}`);
          return;
        }
        stream.respond({ ":status": 404 });
        stream.end();
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    origin: `${tls ? "https" : "http"}://localhost:${port}`,
    protocol: tls ? "https:" : "http:",
    server,
    get sessionsOpen() {
      return sessions.size;
    },
    get sessionsAccepted() {
      return accepted;
    },
    get openStreams() {
      return openStreams;
    },
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export interface RawH2cServer {
  port: number;
  /** Connections accepted. */
  readonly connections: number;
  close(): Promise<void>;
}

/** Frame header + payload. */
function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** A cleartext HTTP/2 server written by hand, to send what `node:http2` never would (see the header). */
export async function startRawH2cServer(mode: "silent" | "bad-frame"): Promise<RawH2cServer> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    if (mode === "silent") return;
    socket.write(frame(4, 0, 0)); // SETTINGS (empty)
    let buffered = Buffer.alloc(0);
    let prefaceSeen = false;
    let sentBad = false;
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!prefaceSeen) {
        if (buffered.length < 24) return;
        prefaceSeen = true;
        buffered = buffered.subarray(24);
      }
      // Walk the client's frames; answer its first HEADERS frame with a DATA frame on stream 0.
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) return;
        const type = buffered[3];
        const flags = buffered[4];
        buffered = buffered.subarray(9 + length);
        if (type === 4 && (flags & 1) === 0) socket.write(frame(4, 1, 0)); // SETTINGS ACK
        if (type === 1 && !sentBad) {
          sentBad = true;
          socket.write(frame(0, 0, 0, Buffer.from("bad")));
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A TCP server that accepts connections and never sends a byte (a TLS handshake that never completes). */
export async function startSilentTcp(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A GET of `path` (its query string parsed into `query`) on `server`, with `init` on top. */
export function h2Request(
  server: H2TestServer,
  path: string,
  init: Partial<ConstructorParameters<typeof HttpRequest>[0]> = {}
): HttpRequest {
  const [pathname, search] = path.split("?");
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search ?? "")) query[k] = v;
  return new HttpRequest({
    protocol: server.protocol,
    hostname: "localhost",
    port: server.port,
    method: "GET",
    path: pathname,
    query,
    headers: {},
    ...init,
  });
}

/** Reads a body stream to a string; rejects with the stream's error. */
export async function readBody(body: unknown): Promise<string> {
  let out = "";
  for await (const chunk of body as AsyncIterable<Buffer | string>) out += chunk.toString();
  return out;
}

/** Settles `promise` into plain data (for "every handle() settles" assertions). */
export async function outcome(
  promise: Promise<unknown>
): Promise<{ ok: true; value: unknown } | { ok: false; error: Error }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error: error as Error };
  }
}

/** Polls `predicate` every 5 ms until it holds or `timeoutMs` passed. */
/** The real `setTimeout`, captured before any spec fakes it: `waitFor` polls real I/O whatever is faked. */
const realSetTimeout = globalThis.setTimeout;

export async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("waitFor: condition not met in time");
    await new Promise((r) => realSetTimeout(r, 5));
  }
}

/** What the pool specs read of a handler's `Http2SessionPool`. */
export type Pool = {
  sharedScheduler: { size: number };
  origins: Map<string, { streamsInFlight: number }>;
  streamFinished(req: { outcome?: string }): void;
};

/** Streams started and not finished, over the pool's origins. */
export function inFlight(pool: Pool): number {
  let n = 0;
  for (const origin of pool.origins.values()) n += origin.streamsInFlight;
  return n;
}
