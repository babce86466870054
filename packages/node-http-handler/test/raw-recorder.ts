/**
 * Raw recording servers for what goes on the wire, on 127.0.0.1 (port 0):
 *
 * - `startRawRecorder()`: a TCP (or TLS, `tls: true`, the committed localhost fixture) server with a minimal HTTP/1.1
 *   parser of its own, not Node's, so it shows what a lenient server would make of the bytes: every byte each
 *   connection sent (`raw`), the requests it parsed from them in order (`requests`: method, target, raw header lines,
 *   body by `content-length` or chunked), and whether the client closed. It answers `200 ok` to each request it parsed,
 *   unless `answer: false`.
 * - `startH2Recorder()`: an HTTP/2 server (TLS or h2c) that records each stream's raw header list and body, and answers
 *   `200 ok` once the request body ended.
 *
 * `close()` destroys every connection, so a test never waits for a client.
 */
import { once } from "node:events";
import http2 from "node:http2";
import net from "node:net";
import tls from "node:tls";
import { CA, KEY } from "./servers";

/** One request as the recorder parsed it. */
export interface RecordedRequest {
  method: string;
  target: string;
  /** Header lines in order, as sent (name case kept). */
  headers: [string, string][];
  body: Buffer;
}

/** One accepted connection. */
export interface RecordedConnection {
  /** Every byte received (after TLS, for a TLS recorder). */
  raw: Buffer;
  requests: RecordedRequest[];
  /** The client closed or reset it. */
  closed: boolean;
}

export interface RawRecorder {
  port: number;
  connections: RecordedConnection[];
  /** Every request parsed, over all connections. */
  readonly requests: RecordedRequest[];
  /** Connections still open. */
  readonly open: number;
  close(): Promise<void>;
}

/** Values of header `name` (any letter case) in `request`. */
export function headerValues(request: { headers: [string, string][] }, name: string): string[] {
  const lower = name.toLowerCase();
  return request.headers.filter(([n]) => n.toLowerCase() === lower).map(([, v]) => v);
}

/** Parses every complete request at the start of `c.raw[from..]`; returns where the unparsed rest starts. */
function parse(c: RecordedConnection, from: number): number {
  for (;;) {
    const buf = c.raw;
    const end = buf.indexOf("\r\n\r\n", from);
    if (end < 0) return from;
    const lines = buf.subarray(from, end).toString("latin1").split("\r\n");
    const [method = "", target = ""] = (lines.shift() ?? "").split(" ");
    const headers = lines.map((l): [string, string] => {
      const i = l.indexOf(":");
      return [l.slice(0, i), l.slice(i + 1).trim()];
    });
    let at = end + 4;
    let body: Buffer;
    const length = headers.find(([n]) => n.toLowerCase() === "content-length")?.[1];
    if (headers.some(([n, v]) => n.toLowerCase() === "transfer-encoding" && /chunked/i.test(v))) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buf.indexOf("\r\n", at);
        if (lineEnd < 0) return from;
        const size = Number.parseInt(buf.subarray(at, lineEnd).toString("latin1"), 16);
        if (buf.length < lineEnd + 2 + size + 2) return from;
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const n = length === undefined ? 0 : Number(length);
      if (buf.length < at + n) return from;
      body = buf.subarray(at, at + n);
      at += n;
    }
    c.requests.push({ method, target, headers, body });
    from = at;
  }
}

/** Starts a raw recorder (see the header). */
export async function startRawRecorder(options: { tls?: boolean; answer?: boolean } = {}): Promise<RawRecorder> {
  const connections: RecordedConnection[] = [];
  const sockets = new Set<net.Socket>();
  const onSocket = (socket: net.Socket) => {
    const c: RecordedConnection = { raw: Buffer.alloc(0), requests: [], closed: false };
    connections.push(c);
    sockets.add(socket);
    let parsed = 0;
    socket.on("data", (chunk: Buffer) => {
      c.raw = Buffer.concat([c.raw, chunk]);
      const before = c.requests.length;
      parsed = parse(c, parsed);
      if (options.answer === false) return;
      for (let i = before; i < c.requests.length; i++) socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      c.closed = true;
      sockets.delete(socket);
    });
  };
  const server = options.tls ? tls.createServer({ key: KEY, cert: CA }, onSocket) : net.createServer(onSocket);
  server.on("tlsClientError", () => {});
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as net.AddressInfo).port,
    connections,
    get requests() {
      return connections.flatMap((c) => c.requests);
    },
    get open() {
      return sockets.size;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One HTTP/2 stream as the recorder saw it. */
export interface RecordedStream {
  /** Header list as received (pseudo-headers included). */
  headers: [string, string][];
  body: Buffer;
  /** The RST_STREAM code the stream closed with (0: closed normally); -1 while open. */
  rstCode: number;
  /** The client ended its side (END_STREAM): the server took the request body as whole. */
  ended: boolean;
}

export interface H2Recorder {
  port: number;
  streams: RecordedStream[];
  /** Sessions accepted since start. */
  readonly sessions: number;
  close(): Promise<void>;
}

/** Starts an HTTP/2 recorder (see the header); `tls: false` for h2c; `settings`: the SETTINGS it announces. */
export async function startH2Recorder(options: { tls?: boolean; settings?: http2.Settings } = {}): Promise<H2Recorder> {
  const settings = options.settings;
  const server =
    options.tls === false
      ? http2.createServer({ settings })
      : http2.createSecureServer({ key: KEY, cert: CA, allowHTTP1: false, settings });
  const streams: RecordedStream[] = [];
  const open = new Set<http2.ServerHttp2Session>();
  let sessions = 0;
  server.on("session", (session: http2.ServerHttp2Session) => {
    sessions++;
    open.add(session);
    session.on("close", () => open.delete(session));
    session.on("error", () => {});
  });
  server.on("stream", (stream: http2.ServerHttp2Stream, _headers: unknown, _flags: unknown, rawHeaders: string[]) => {
    const headers: [string, string][] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) headers.push([rawHeaders[i], rawHeaders[i + 1]]);
    const s: RecordedStream = { headers, body: Buffer.alloc(0), rstCode: -1, ended: false };
    stream.on("close", () => {
      s.rstCode = stream.rstCode ?? 0;
    });
    streams.push(s);
    stream.on("error", () => {});
    stream.on("data", (chunk: Buffer) => {
      s.body = Buffer.concat([s.body, chunk]);
    });
    stream.on("end", () => {
      s.ended = true;
      if (stream.destroyed || stream.closed) return;
      stream.respond({ ":status": 200 });
      stream.end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as net.AddressInfo).port,
    streams,
    get sessions() {
      return sessions;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
