// =============================================================================
// lateness-server.mjs: the servers of bench-lateness.mjs's "under load" section, run in their OWN process (forked),
// so that answering the background traffic never runs on the measured client's event loop (a user's process only
// runs the client side).
//
// Three servers on 127.0.0.1, port 0: HTTP/1.1 (`h1`), HTTP/2 over TLS (`h2`, the committed self-signed localhost
// certificate) and cleartext HTTP/2 (`h2c`, prior knowledge). Every one serves:
//   /load    200 with a 64 KiB body (the background traffic; also the sessionTimeout probe's one request)
//   /warm    200, empty (establishes a connection or session before a cell's probes)
//   /never   reads the request and never answers (requestTimeout probes)
//   /stall   the head and one body byte in one write, then nothing (socketTimeout probes)
//
// Forked: sends { ports: { h1, h2, h2c } } to the parent once listening; exits on "close" or when the parent goes.
// `startLatenessServers()` starts the same servers in the calling process (experiments only: the bench forks).
// =============================================================================
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import { fileURLToPath } from "node:url";

const FIXTURES = fileURLToPath(new URL("../../../node-http-handler/test/fixtures/", import.meta.url));
const BODY = Buffer.alloc(65536, 0x62);
/**
 * Node refuses new streams once a session buffers more than `maxSessionMemory` (10 MB by default), which 256 streams
 * of 64 KiB in flight reach: raised, so the background traffic is never refused.
 */
const MAX_SESSION_MEMORY_MB = 1024;

/** Answers one request by path (`res` is an HTTP/1.1 response or an HTTP/2 compatibility response). */
function route(req, res) {
  req.on("error", () => {});
  req.resume();
  if (req.url === "/load") {
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": BODY.length });
    res.end(BODY);
  } else if (req.url === "/warm") {
    res.writeHead(200, { "content-length": 0 });
    res.end();
  } else if (req.url === "/stall") {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.write("x");
  }
  // "/never": nothing.
}

/** Starts the three servers; resolves with their ports. */
export async function startLatenessServers() {
  const h1 = http.createServer(route);
  h1.keepAliveTimeout = 120_000;
  h1.headersTimeout = 0;
  h1.requestTimeout = 0;
  const options = { settings: { maxConcurrentStreams: 4096 }, maxSessionMemory: MAX_SESSION_MEMORY_MB };
  const h2 = http2.createSecureServer({
    ...options,
    key: readFileSync(`${FIXTURES}localhost-key.pem`),
    cert: readFileSync(`${FIXTURES}localhost-cert.pem`),
  });
  const h2c = http2.createServer(options);
  for (const server of [h1, h2, h2c]) {
    server.on("connection", (socket) => socket.on("error", () => {}));
    server.on("session", (session) => session.on("error", () => {}));
  }
  h2.on("request", route);
  h2c.on("request", route);
  const listen = (server) =>
    new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
  return { h1: await listen(h1), h2: await listen(h2), h2c: await listen(h2c) };
}

if (process.send !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  process.send({ ports: await startLatenessServers() });
  process.on("message", (m) => {
    if (m === "close") process.exit(0);
  });
  process.on("disconnect", () => process.exit(0));
}
