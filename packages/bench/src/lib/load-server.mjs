// =============================================================================
// load-server.mjs: the HTTP/1.1 keep-alive load server, run in its OWN process.
//
// What it is for
//   Every benchmark and the timer-count test fork this file with
//   child_process.fork() so that the server's CPU, heap and native timers never
//   show up in the client process that is being measured. It also serves the
//   same routes over cleartext HTTP/2 (prior knowledge) on a second port, with
//   4096 concurrent streams per session so c=1000 fits on one session.
//
// Protocol (IPC messages, parent <-> child)
//   child  -> parent  { type: "ready", port, h2Port } once both listen on 127.0.0.1:<port 0>
//   parent -> child   { type: "hold", id }           from now on, hold /hold/* requests
//   child  -> parent  { type: "holding", id }
//   parent -> child   { type: "release", id }        answer every held request now and stop
//                                                    holding (later /hold/* requests are
//                                                    answered at once) until the next "hold"
//   child  -> parent  { type: "released", id, count }
//   parent -> child   { type: "stats", id }
//   child  -> parent  { type: "stats", id, held, served, connections }
//   parent -> child   { type: "close" }              close the server and exit
//
// Routes (GET; the request body, if any, is drained)
//   /128                 answer 200 with a 128 B body
//   /65536               answer 200 with a 64 KiB body
//   /hold/<size>         the same body, but while the server is "holding" only after
//                        the parent sends "release" (used to hold N requests in flight
//                        for the heap pass)
//   The size may also be chosen with an `x-body-size: <bytes>` header.
//
// Costs: bodies are preallocated Buffers written with one res.end(); the only
// per-request allocations are Node's own.
// =============================================================================

import http from "node:http";
import http2 from "node:http2";

// -----------------------------------------------------------------------------
// Preallocated bodies
// -----------------------------------------------------------------------------
const BODIES = new Map([
  [128, Buffer.alloc(128, 0x61)],
  [65536, Buffer.alloc(65536, 0x62)],
]);

/** @param {string} raw */
function bodyFor(raw) {
  const size = Number(raw);
  const body = BODIES.get(size);
  if (body === undefined)
    throw new Error(`load-server: unsupported body size ${JSON.stringify(raw)} (use 128 or 65536)`);
  return body;
}

// -----------------------------------------------------------------------------
// Server
// -----------------------------------------------------------------------------
/** @type {import("node:http").ServerResponse[]} */
let held = [];
/** @type {Buffer[]} */
let heldBodies = [];
let served = 0;
let holding = false;
let connections = 0;

function answer(res, body) {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
  res.end(body);
  served++;
}

const server = http.createServer((req, res) => {
  // Drain any request body so the connection stays reusable.
  req.resume();
  let body;
  let hold = false;
  try {
    const url = req.url ?? "/";
    const header = req.headers["x-body-size"];
    if (url.startsWith("/hold/")) {
      hold = true;
      body = bodyFor(header ?? url.slice(6));
    } else {
      body = bodyFor(header ?? url.slice(1));
    }
  } catch (err) {
    res.writeHead(400, { "content-type": "text/plain" });
    res.end(String(err.message));
    return;
  }
  if (hold && holding) {
    held.push(res);
    heldBodies.push(body);
  } else {
    answer(res, body);
  }
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

const h2 = http2.createServer({ settings: { maxConcurrentStreams: 4096 } });
h2.on("session", (session) => session.on("error", () => {}));
h2.on("stream", (stream, headers) => {
  stream.on("error", () => {});
  stream.resume();
  const body = BODIES.get(Number(headers[":path"]?.slice(1))) ?? BODIES.get(128);
  stream.respond({ ":status": 200, "content-length": body.length });
  stream.end(body);
  served++;
});

// -----------------------------------------------------------------------------
// IPC
// -----------------------------------------------------------------------------
process.on("message", (msg) => {
  switch (msg?.type) {
    case "hold":
      holding = true;
      process.send({ type: "holding", id: msg.id });
      break;
    case "release": {
      holding = false;
      const toAnswer = held;
      const bodies = heldBodies;
      held = [];
      heldBodies = [];
      for (let i = 0; i < toAnswer.length; i++) answer(toAnswer[i], bodies[i]);
      process.send({ type: "released", id: msg.id, count: toAnswer.length });
      break;
    }
    case "stats":
      process.send({ type: "stats", id: msg.id, held: held.length, served, connections });
      break;
    case "close":
      server.closeAllConnections();
      h2.close();
      server.close(() => process.exit(0));
      break;
    default:
      break;
  }
});
// If the parent dies, do not linger.
process.on("disconnect", () => process.exit(0));

server.listen({ host: "127.0.0.1", port: 0, backlog: 4096 }, () => {
  h2.listen(0, "127.0.0.1", () => {
    process.send({ type: "ready", port: server.address().port, h2Port: h2.address().port });
  });
});
