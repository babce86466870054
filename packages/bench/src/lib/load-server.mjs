// =============================================================================
// load-server.mjs: the keep-alive load server, always in its OWN process (forked by server-control.mjs), so that its
// CPU, heap and native timers never show up in the client process being measured.
//
// Routes, over HTTP/1.1, cleartext HTTP/2 (prior knowledge) and HTTP/2 over TLS (the handlers' test certificate for
// localhost), each on a port of its own; HTTP/2 with 4,096 streams per session:
//   /128, /65536    200 with a preallocated body of that many bytes (the request body, if any, is drained)
//   /hold/<size>    HTTP/1.1 only: the same, but while the server is "holding", only once the parent sends "release"
//   /never          reads the request and never answers (bench-lateness's requestTimeout probes)
//   /stall          the head and one body byte, then nothing (bench-lateness's socketTimeout probes)
//
// IPC (parent <-> child):
//   child  -> parent  { type: "ready", port, h2Port, h2TlsPort }  once all listen on 127.0.0.1 (ports chosen by the OS)
//   parent -> child   { type: "hold" | "release" | "stats", id }, answered with the same id:
//                     "holding"; "released" with the count answered; "stats" with { held, served, connections }
//   parent -> child   { type: "close" }                close and exit (also when the parent goes away)
// =============================================================================

import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { fileURLToPath } from "node:url";

const BODIES = new Map([
  [128, Buffer.alloc(128, 0x61)],
  [65536, Buffer.alloc(65536, 0x62)],
]);

/** @type {Array<[import("node:http").ServerResponse, Buffer]>} */
let held = [];
let served = 0;
let holding = false;
let connections = 0;

/** Answers /never (not at all) and /stall (one byte) on an HTTP/1.1 response or HTTP/2 stream; false for others. */
function hang(path, res) {
  if (path === "/stall") {
    if (typeof res.respond === "function") res.respond({ ":status": 200 });
    else res.writeHead(200, { "content-type": "application/octet-stream" });
    res.write("x");
  }
  return path === "/never" || path === "/stall";
}

function answer(res, body) {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
  res.end(body);
  served++;
}

const server = http.createServer((req, res) => {
  req.resume();
  const url = req.url ?? "/";
  const hold = url.startsWith("/hold/");
  const body = BODIES.get(Number(url.slice(hold ? 6 : 1)));
  if (body === undefined) {
    if (hang(url, res)) return;
    res.writeHead(400, { "content-type": "text/plain" });
    res.end(`load-server: unsupported path ${url}`);
  } else if (hold && holding) held.push([res, body]);
  else answer(res, body);
});
// Generous keep-alive so no benchmark ever pays for reconnects mid-run.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.requestTimeout = 0;
server.maxRequestsPerSocket = 0;
server.on("connection", (socket) => {
  connections++;
  socket.setNoDelay(true);
  socket.on("close", () => connections--);
});

/** A session's buffer limit, MB (Node's default of 10 refuses new streams with 256 bodies of 64 KiB in flight). */
const h2Options = { settings: { maxConcurrentStreams: 4096 }, maxSessionMemory: 1024 };
const fixtures = fileURLToPath(new URL("../../../node-http-handler/test/fixtures/", import.meta.url));
const h2 = http2.createServer(h2Options);
const h2Tls = http2.createSecureServer({
  ...h2Options,
  key: readFileSync(`${fixtures}localhost-key.pem`),
  cert: readFileSync(`${fixtures}localhost-cert.pem`),
});
for (const server of [h2, h2Tls]) {
  server.on("session", (session) => session.on("error", () => {}));
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    stream.resume();
    if (hang(headers[":path"], stream)) return;
    const body = BODIES.get(Number(headers[":path"]?.slice(1))) ?? BODIES.get(128);
    stream.respond({ ":status": 200, "content-length": body.length });
    stream.end(body);
    served++;
  });
}

process.on("message", (msg) => {
  switch (msg?.type) {
    case "hold":
      holding = true;
      process.send({ type: "holding", id: msg.id });
      break;
    case "release": {
      holding = false;
      const toAnswer = held;
      held = [];
      for (const [res, body] of toAnswer) answer(res, body);
      process.send({ type: "released", id: msg.id, count: toAnswer.length });
      break;
    }
    case "stats":
      process.send({ type: "stats", id: msg.id, held: held.length, served, connections });
      break;
    case "close":
      server.closeAllConnections();
      h2.close();
      h2Tls.close();
      server.close(() => process.exit(0));
      break;
  }
});
process.on("disconnect", () => process.exit(0));

server.listen({ host: "127.0.0.1", port: 0, backlog: 4096 }, () => {
  h2.listen(0, "127.0.0.1", () => {
    h2Tls.listen(0, "127.0.0.1", () => {
      const ports = { port: server.address().port, h2Port: h2.address().port, h2TlsPort: h2Tls.address().port };
      process.send({ type: "ready", ...ports });
    });
  });
});
