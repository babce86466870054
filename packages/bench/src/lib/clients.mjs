// =============================================================================
// clients.mjs: the HTTP clients under comparison, behind one tiny interface.
//
//   client.request(path) -> Promise<void>   one GET that resolves after the
//                                           response body has been FULLY consumed
//   client.startBurst() / client.endBurst() hooks around each measured burst
//   client.close()                          destroy agents / pools
//
// Every client owns its own agent (keep-alive, 50 sockets), so clients never
// share sockets. All bodies are drained the same way (a 'data' listener that
// discards chunks), so the body-reading cost is identical for every client.
//
// Clients
//   floor               raw http.request + keep-alive http.Agent (the control)
//   upstream            @smithy/node-http-handler 4.14.2 (pinned)
//   sockeye-interval    @sockeye/node-http-handler, socketMonitor "interval",
//                       telemetry read via getPoolStats() once a second
//   sockeye-per-request @sockeye/node-http-handler, socketMonitor "per-request"
//   sockeye-off         @sockeye/node-http-handler, socketMonitor "off" AND telemetry
//                       false: no saturation monitor, no per-request pool tracking
//                       (the baseline for the telemetry-cost target; socketMonitor
//                       "off" alone still tracks every request for getPoolStats())
//   smithy-floor        diagnostic: raw http.request wrapped in exactly what the Smithy
//                       handler interface makes any handler do per request (an async
//                       call with an HttpRequest in, an HttpResponse with a plain header
//                       bag out, then the body drained): no timeouts, no telemetry. The
//                       distance floor -> smithy-floor is the interface's own cost; the
//                       distance smithy-floor -> a handler is that handler's cost.
//   undici              undici 7.30.2 Pool, connections 50 (raw Pool.request)
//   smithy-undici       @smithy/undici-http-handler 3.2.4 (pinned) on an undici
//                       Agent of 50 connections
//   sockeye-undici      @sockeye/undici-http-handler, maxSockets 50, telemetry on
//                       (default), getPoolStats() read once a second like
//                       sockeye-interval
// =============================================================================

import http from "node:http";
import { HttpRequest, HttpResponse } from "@smithy/protocol-http";
import { NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { UndiciHttpHandler as SmithyUndiciHandler } from "@smithy/undici-http-handler";
import { Pool } from "undici";

/** Sockets per client (agent maxSockets / undici connections). */
export const MAX_SOCKETS = 50;

/** The three Smithy timeouts used when a cell runs "with timeouts" (ms). */
export const TIMEOUTS = Object.freeze({ connectionTimeout: 5000, requestTimeout: 10000, socketTimeout: 10000 });

/** How often the sockeye-interval client reads its telemetry (ms). */
export const TELEMETRY_READ_MS = 1000;

// -----------------------------------------------------------------------------
// Shared helpers
// -----------------------------------------------------------------------------
function noop() {}

/**
 * Consume a readable body completely.
 * @param {import("node:stream").Readable} body
 * @returns {Promise<void>}
 */
export function drain(body) {
  return new Promise((resolve, reject) => {
    body.on("data", noop);
    body.once("end", resolve);
    body.once("error", reject);
  });
}

/**
 * A logger that swallows output but counts warnings, passed to upstream and Sockeye
 * alike: both print socket-saturation warnings at high concurrency, which would
 * flood the bench output; the count is reported in the notes.
 */
function quietLogger(notes) {
  notes.warnings = 0;
  return {
    trace: noop,
    debug: noop,
    info: noop,
    warn: () => {
      notes.warnings++;
    },
    error: noop,
  };
}

function newAgent() {
  return new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, keepAliveMsecs: 1000 });
}

let sockeyeModule;
let sockeyeLoadError;
/**
 * Load @sockeye/node-http-handler lazily; it may not be built yet.
 * @returns {Promise<any | undefined>}
 */
export async function loadSockeye() {
  if (sockeyeModule || sockeyeLoadError) return sockeyeModule;
  try {
    sockeyeModule = await import("@sockeye/node-http-handler");
    if (typeof sockeyeModule.NodeHttpHandler !== "function") {
      sockeyeLoadError = new Error("@sockeye/node-http-handler does not export NodeHttpHandler yet");
      sockeyeModule = undefined;
    }
  } catch (err) {
    sockeyeLoadError = err;
  }
  return sockeyeModule;
}

/** Why Sockeye could not be loaded (undefined when it loaded). */
export function sockeyeUnavailableReason() {
  return sockeyeLoadError ? String(sockeyeLoadError.message ?? sockeyeLoadError).split("\n")[0] : undefined;
}

// -----------------------------------------------------------------------------
// Client factories
// -----------------------------------------------------------------------------

/**
 * @typedef {object} BenchClient
 * @property {string} name
 * @property {(path: string) => Promise<void>} request
 * @property {() => void} startBurst
 * @property {() => void} endBurst
 * @property {() => Promise<void>} close
 * @property {Record<string, unknown>} notes   facts worth reporting (e.g. telemetry availability)
 */

/** @returns {BenchClient} */
function floorClient(origin) {
  const url = new URL(origin);
  const agent = newAgent();
  const host = url.hostname;
  const port = Number(url.port);
  return {
    name: "floor",
    notes: {},
    request(path) {
      return new Promise((resolve, reject) => {
        const req = http.request({ host, port, path, method: "GET", agent }, (res) => {
          drain(res).then(resolve, reject);
        });
        req.once("error", reject);
        req.end();
      });
    },
    startBurst: noop,
    endBurst: noop,
    async close() {
      agent.destroy();
    },
  };
}

/** Node's response headers as a plain bag, repeated values joined with "," (what a Smithy handler must return). */
function headerBag(headers) {
  const bag = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    bag[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return bag;
}

/**
 * smithy-floor: the floor's raw http.request behind the Smithy shapes only (see the header). Not a handler: no
 * timeouts, abort, validation or telemetry. @returns {BenchClient}
 */
function smithyFloorClient(origin) {
  const url = new URL(origin);
  const agent = newAgent();
  const hostname = url.hostname;
  const port = Number(url.port);
  const send = (request) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: request.hostname,
          port: request.port,
          path: request.path,
          method: request.method,
          headers: request.headers,
          agent,
        },
        (res) => {
          const response = new HttpResponse({
            statusCode: res.statusCode,
            reason: res.statusMessage,
            headers: headerBag(res.headers),
            body: res,
          });
          resolve({ response });
        }
      );
      req.once("error", reject);
      req.end();
    });
  return {
    name: "smithy-floor",
    notes: {},
    async request(path) {
      const { response } = await send(
        new HttpRequest({ protocol: "http:", hostname, port, method: "GET", path, headers: {} })
      );
      await drain(response.body);
    },
    startBurst: noop,
    endBurst: noop,
    async close() {
      agent.destroy();
    },
  };
}

/** A client around any Smithy-compatible NodeHttpHandler class. */
function smithyClient(name, HandlerClass, origin, options, extra = {}) {
  const url = new URL(origin);
  const agent = newAgent();
  const notes = {};
  const handler = new HandlerClass({ httpAgent: agent, logger: quietLogger(notes), ...options });
  const hostname = url.hostname;
  const port = Number(url.port);
  const client = {
    name,
    notes,
    handler,
    async request(path) {
      const { response } = await handler.handle(
        new HttpRequest({ protocol: "http:", hostname, port, method: "GET", path, headers: {} })
      );
      await drain(response.body);
    },
    startBurst: noop,
    endBurst: noop,
    async close() {
      handler.destroy?.();
      agent.destroy();
    },
    ...extra,
  };
  return client;
}

/**
 * sockeye-interval additionally reads telemetry once a second while a burst runs:
 * once when the burst starts (conservative for short bursts) and then every
 * TELEMETRY_READ_MS. If getPoolStats() does not exist yet, that is noted.
 */
function sockeyeIntervalClient(Sockeye, origin, options) {
  const client = smithyClient("sockeye-interval", Sockeye.NodeHttpHandler, origin, {
    ...options,
    socketMonitor: "interval",
  });
  const hasStats = typeof client.handler.getPoolStats === "function";
  client.notes.getPoolStats = hasStats ? "read once at burst start, then every 1 s" : "getPoolStats() not available";
  let reader;
  let reads = 0;
  let lastSnapshot;
  const read = () => {
    lastSnapshot = client.handler.getPoolStats();
    reads++;
  };
  client.startBurst = () => {
    if (!hasStats) return;
    read();
    reader = setInterval(read, TELEMETRY_READ_MS);
  };
  client.endBurst = () => {
    if (reader) clearInterval(reader);
    reader = undefined;
  };
  client.telemetry = () => ({ reads, lastSnapshot });
  return client;
}

/** @returns {BenchClient} */
function undiciClient(origin, timeouts) {
  const pool = new Pool(origin, {
    connections: MAX_SOCKETS,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    // "with timeouts" maps the Smithy trio onto undici's equivalents; "without" disables them.
    ...(timeouts
      ? {
          connectTimeout: TIMEOUTS.connectionTimeout,
          headersTimeout: TIMEOUTS.requestTimeout,
          bodyTimeout: TIMEOUTS.socketTimeout,
        }
      : { headersTimeout: 0, bodyTimeout: 0 }),
  });
  return {
    name: "undici",
    notes: {},
    async request(path) {
      const { body } = await pool.request({ path, method: "GET" });
      await drain(body);
    },
    startBurst: noop,
    endBurst: noop,
    async close() {
      await pool.destroy();
    },
  };
}

/**
 * undici's equivalents of the Smithy trio for the raw-undici-style clients ("off" disables undici's own 300 s
 * defaults, as the other clients have no timeout then).
 */
function undiciTimeouts(timeouts) {
  return timeouts
    ? {
        connectTimeout: TIMEOUTS.connectionTimeout,
        headersTimeout: TIMEOUTS.requestTimeout,
        bodyTimeout: TIMEOUTS.socketTimeout,
      }
    : { headersTimeout: 0, bodyTimeout: 0 };
}

/** @smithy/undici-http-handler with its own undici Agent (Agent options via `dispatcher`). @returns {BenchClient} */
function smithyUndiciClient(origin, timeouts) {
  const handler = new SmithyUndiciHandler({
    dispatcher: { connections: MAX_SOCKETS, pipelining: 1, keepAliveTimeout: 60_000, ...undiciTimeouts(timeouts) },
  });
  return smithyClientAround("smithy-undici", handler, origin, {});
}

let sockeyeUndiciModule;
let sockeyeUndiciLoadError;
/** Load @sockeye/undici-http-handler lazily; it may not be built yet. */
async function loadSockeyeUndici() {
  if (sockeyeUndiciModule || sockeyeUndiciLoadError) return sockeyeUndiciModule;
  try {
    sockeyeUndiciModule = await import("@sockeye/undici-http-handler");
  } catch (err) {
    sockeyeUndiciLoadError = err;
  }
  return sockeyeUndiciModule;
}

/**
 * @sockeye/undici-http-handler, default configuration (telemetry and the interval detector on), Smithy timeouts
 * when the cell has them, getPoolStats() read like sockeye-interval. @returns {BenchClient}
 */
function sockeyeUndiciClient(Module, origin, options) {
  const notes = {};
  const handler = new Module.UndiciHttpHandler({
    httpAgent: { maxSockets: MAX_SOCKETS },
    idleSocketTimeout: 60_000,
    logger: quietLogger(notes),
    ...options,
  });
  const client = smithyClientAround("sockeye-undici", handler, origin, notes);
  let reader;
  let reads = 0;
  let lastSnapshot;
  const read = () => {
    lastSnapshot = handler.getPoolStats();
    reads++;
  };
  client.notes.getPoolStats = "read once at burst start, then every 1 s";
  client.startBurst = () => {
    read();
    reader = setInterval(read, TELEMETRY_READ_MS);
  };
  client.endBurst = () => {
    if (reader) clearInterval(reader);
    reader = undefined;
  };
  client.telemetry = () => ({ reads, lastSnapshot });
  return client;
}

/** A client around an already built Smithy handler (no node:http agent of its own). @returns {BenchClient} */
function smithyClientAround(name, handler, origin, notes) {
  const url = new URL(origin);
  const hostname = url.hostname;
  const port = Number(url.port);
  return {
    name,
    notes,
    handler,
    async request(path) {
      const { response } = await handler.handle(
        new HttpRequest({ protocol: "http:", hostname, port, method: "GET", path, headers: {} })
      );
      await drain(response.body);
    },
    startBurst: noop,
    endBurst: noop,
    async close() {
      handler.destroy();
    },
  };
}

// -----------------------------------------------------------------------------
// Public entry point
// -----------------------------------------------------------------------------

/** Every client name, in report order. */
export const CLIENT_NAMES = Object.freeze([
  "floor",
  "smithy-floor",
  "upstream",
  "sockeye-interval",
  "sockeye-per-request",
  "sockeye-off",
  "undici",
  "smithy-undici",
  "sockeye-undici",
]);

/**
 * Create a fresh set of clients against `origin`.
 * @param {string} origin
 * @param {{ timeouts: boolean, only?: string[] }} opts
 * @returns {Promise<{ clients: BenchClient[], skipped: Record<string, string> }>}
 */
export async function createClients(origin, { timeouts, only }) {
  const smithyTimeouts = timeouts ? { ...TIMEOUTS } : {};
  const Sockeye = await loadSockeye();
  const want = (name) => !only || only.includes(name);
  /** @type {BenchClient[]} */
  const clients = [];
  /** @type {Record<string, string>} */
  const skipped = {};
  if (want("floor")) clients.push(floorClient(origin));
  if (want("smithy-floor")) clients.push(smithyFloorClient(origin));
  if (want("upstream")) clients.push(smithyClient("upstream", UpstreamHandler, origin, smithyTimeouts));
  for (const name of ["sockeye-interval", "sockeye-per-request", "sockeye-off"]) {
    if (!want(name)) continue;
    if (!Sockeye) {
      skipped[name] = `@sockeye/node-http-handler unavailable: ${sockeyeUnavailableReason()}`;
      continue;
    }
    if (name === "sockeye-interval") clients.push(sockeyeIntervalClient(Sockeye, origin, smithyTimeouts));
    else
      clients.push(
        smithyClient(name, Sockeye.NodeHttpHandler, origin, {
          ...smithyTimeouts,
          ...(name === "sockeye-per-request"
            ? { socketMonitor: "per-request" }
            : { socketMonitor: "off", telemetry: false }),
        })
      );
  }
  if (want("undici")) clients.push(undiciClient(origin, timeouts));
  if (want("smithy-undici")) clients.push(smithyUndiciClient(origin, timeouts));
  if (want("sockeye-undici")) {
    const SockeyeUndici = await loadSockeyeUndici();
    if (SockeyeUndici?.UndiciHttpHandler) clients.push(sockeyeUndiciClient(SockeyeUndici, origin, smithyTimeouts));
    else
      skipped["sockeye-undici"] =
        `@sockeye/undici-http-handler unavailable: ${String(sockeyeUndiciLoadError?.message ?? "no export").split("\n")[0]}`;
  }
  return { clients, skipped };
}
