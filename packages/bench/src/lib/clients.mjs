// =============================================================================
// clients.mjs: the HTTP clients under comparison, behind one tiny interface.
//
//   client.request(path) -> Promise<void>   one GET that resolves once the response body is FULLY consumed (a
//                                           handler's rejects on a status other than 200)
//   client.startBurst() / client.endBurst() hooks around each measured burst (the telemetry reader)
//   client.close()                          destroy agents, pools, sessions
//
// Every client owns its own pool (50 sockets, or one HTTP/2 session), so clients never share connections, and
// every body is drained the same way (a 'data' listener that discards chunks).
//
// HTTP/1.1 (the load server's `origin`)
//   floor               raw http.request + keep-alive http.Agent: the control
//   smithy-floor        the floor behind the Smithy shapes only (an async call, HttpRequest in, HttpResponse with a
//                       header bag out): what any handler behind that interface pays at least; no timeouts, abort or
//                       telemetry
//   upstream            @smithy/node-http-handler 4.14.2
//   sockeye-interval    @sockeye/node-http-handler, defaults (socketMonitor "interval"), getPoolStats() read at the
//                       start of each burst and then once a second
//   sockeye-off         @sockeye/node-http-handler, socketMonitor "off" and telemetry false
//   sockeye-before      sockeye-interval from another build: BENCH_BEFORE_MODULE names its
//                       packages/node-http-handler/dist/index.js (CommonJS, as Node loads the subject; e.g. a
//                       `git worktree add` of the commit before)
//   undici              undici 7.30.2 Pool.request, 50 connections
//   smithy-undici       @smithy/undici-http-handler 3.2.4 on an undici Agent of 50 connections
//   sockeye-undici      @sockeye/undici-http-handler, defaults, getPoolStats() read like sockeye-interval
// HTTP/2 cleartext (the load server's `h2Origin`, one session per client)
//   http2               raw node:http2: one ClientHttp2Session, session.request() per request
//   upstream-h2         NodeHttp2Handler of @smithy/node-http-handler 4.14.2
//   sockeye-h2          NodeHttp2Handler of @sockeye/node-http-handler, maxSessionsPerOrigin 1
//
// "timeouts on" sets the Smithy trio (TIMEOUTS) on the HTTP/1.1 handlers, undici's equivalents on raw undici and
// smithy-undici, and H2_TIMEOUTS on the HTTP/2 handlers; "off" sets none (and turns undici's own 300 s defaults off).
// =============================================================================

import http from "node:http";
import http2 from "node:http2";
import {
  NodeHttp2Handler as UpstreamHttp2Handler,
  NodeHttpHandler as UpstreamHandler,
} from "@smithy/node-http-handler";
import { HttpRequest, HttpResponse } from "@smithy/protocol-http";
import { UndiciHttpHandler as SmithyUndiciHandler } from "@smithy/undici-http-handler";
import { Pool } from "undici";

/** Sockets per client (agent maxSockets / undici connections). */
export const MAX_SOCKETS = 50;

/** The three Smithy timeouts of an HTTP/1.1 cell "with timeouts" (ms). */
export const TIMEOUTS = Object.freeze({ connectionTimeout: 5000, requestTimeout: 10000, socketTimeout: 10000 });

/** The deadlines of an HTTP/2 cell "with timeouts" (ms): a stream's inactivity and a session's idle time. */
export const H2_TIMEOUTS = Object.freeze({ requestTimeout: 30_000, sessionTimeout: 60_000 });

/** How often the sockeye clients read their telemetry during a burst (ms). */
const TELEMETRY_READ_MS = 1000;

/** Every client name, in report order. */
export const CLIENT_NAMES = Object.freeze([
  "floor",
  "smithy-floor",
  "upstream",
  "sockeye-interval",
  "sockeye-off",
  "sockeye-before",
  "undici",
  "smithy-undici",
  "sockeye-undici",
  "http2",
  "upstream-h2",
  "sockeye-h2",
]);

function noop() {}
const quietLogger = Object.freeze({ trace: noop, debug: noop, info: noop, warn: noop, error: noop });

/**
 * Consume a readable body completely.
 * @param {import("node:stream").Readable} body @returns {Promise<void>}
 */
export function drain(body) {
  return new Promise((resolve, reject) => {
    body.on("data", noop);
    body.once("end", resolve);
    body.once("error", reject);
  });
}

/**
 * @typedef {object} BenchClient
 * @property {string} name
 * @property {(path: string) => Promise<void>} request
 * @property {() => void} startBurst
 * @property {() => void} endBurst
 * @property {() => Promise<void>} close
 */

const newAgent = () => new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, keepAliveMsecs: 1000 });

/** @returns {BenchClient} */
function client(name, request, close) {
  return { name, request, close, startBurst: noop, endBurst: noop };
}

/** A client around a Smithy handler: a GET HttpRequest per request, the response body drained. */
function handlerClient(name, handler, origin, close = async () => handler.destroy()) {
  const { hostname, port } = new URL(origin);
  return client(
    name,
    async (path) => {
      const request = new HttpRequest({ protocol: "http:", hostname, port: Number(port), method: "GET", path });
      const { response } = await handler.handle(request);
      if (response.statusCode !== 200) throw new Error(`${name}: status ${response.statusCode}`);
      await drain(response.body);
    },
    close
  );
}

/** Reads `handler.getPoolStats()` when a burst starts and then once a second until it ends. */
function withTelemetryReader(c, handler) {
  let reader;
  c.startBurst = () => {
    handler.getPoolStats();
    reader = setInterval(() => handler.getPoolStats(), TELEMETRY_READ_MS);
  };
  c.endBurst = () => clearInterval(reader);
  return c;
}

/** Node's response headers as a plain bag, repeated values joined with "," (what a Smithy handler returns). */
function headerBag(headers) {
  const bag = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    bag[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return bag;
}

/** The floor's http.request; with `shaped`, behind the Smithy shapes (smithy-floor). */
function floorClient(origin, shaped) {
  const agent = newAgent();
  const { hostname, port } = new URL(origin);
  const send = (request) =>
    new Promise((resolve, reject) => {
      const options = { host: request.hostname, port: request.port, path: request.path, method: request.method };
      const req = http.request({ ...options, headers: request.headers, agent }, (res) => {
        const headers = headerBag(res.headers);
        resolve({
          response: new HttpResponse({ statusCode: res.statusCode, reason: res.statusMessage, headers, body: res }),
        });
      });
      req.once("error", reject);
      req.end();
    });
  const close = async () => agent.destroy();
  if (shaped) return handlerClient("smithy-floor", { handle: send }, origin, close);
  const host = hostname;
  return client(
    "floor",
    (path) =>
      new Promise((resolve, reject) => {
        const req = http.request({ host, port, path, method: "GET", agent }, (res) => drain(res).then(resolve, reject));
        req.once("error", reject);
        req.end();
      }),
    close
  );
}

/** undici's equivalents of the Smithy trio ("off" also disables undici's own 300 s defaults). */
const undiciTimeouts = (timeouts) =>
  timeouts
    ? {
        connectTimeout: TIMEOUTS.connectionTimeout,
        headersTimeout: TIMEOUTS.requestTimeout,
        bodyTimeout: TIMEOUTS.socketTimeout,
      }
    : { headersTimeout: 0, bodyTimeout: 0 };

function undiciClient(origin, timeouts) {
  const pool = new Pool(origin, {
    connections: MAX_SOCKETS,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    ...undiciTimeouts(timeouts),
  });
  return client(
    "undici",
    async (path) => drain((await pool.request({ path, method: "GET" })).body),
    () => pool.destroy()
  );
}

function http2Client(origin) {
  const session = http2.connect(origin);
  session.on("error", noop);
  return client(
    "http2",
    (path) =>
      new Promise((resolve, reject) => {
        const stream = session.request({ ":path": path, ":method": "GET" });
        stream.once("response", () => drain(stream).then(resolve, reject));
        stream.once("error", reject);
        stream.end();
      }),
    async () => session.destroy()
  );
}

/** Loads a workspace package lazily (it may not be built): the module, or the first line of why not. */
async function load(name) {
  try {
    return await import(name);
  } catch (err) {
    return { unavailable: `${name} unavailable: ${String(err?.message ?? err).split("\n")[0]}` };
  }
}

/**
 * Create a fresh set of clients against the load server (lib/server-control.mjs).
 * @param {{ origin: string, h2Origin: string }} server
 * @param {{ timeouts: boolean, only?: string[] }} opts
 * @returns {Promise<{ clients: BenchClient[], skipped: Record<string, string> }>}
 */
export async function createClients({ origin, h2Origin }, { timeouts, only }) {
  const trio = timeouts ? { ...TIMEOUTS } : {};
  const h2 = timeouts ? { ...H2_TIMEOUTS } : {};
  const Sockeye = await load("@sockeye/node-http-handler");
  const SockeyeUndici = await load("@sockeye/undici-http-handler");
  const Before = process.env.BENCH_BEFORE_MODULE
    ? await load(process.env.BENCH_BEFORE_MODULE)
    : { unavailable: "sockeye-before needs BENCH_BEFORE_MODULE (another build's node-http-handler dist/index.js)" };
  const agentHandler = (name, Handler, options) => {
    const agent = newAgent();
    const handler = new Handler({ httpAgent: agent, logger: quietLogger, ...trio, ...options });
    const close = async () => {
      handler.destroy();
      agent.destroy();
    };
    return { handler, c: handlerClient(name, handler, origin, close) };
  };
  const factories = {
    floor: () => floorClient(origin, false),
    "smithy-floor": () => floorClient(origin, true),
    upstream: () => agentHandler("upstream", UpstreamHandler, {}).c,
    "sockeye-interval": () => {
      const { handler, c } = agentHandler("sockeye-interval", Sockeye.NodeHttpHandler, { socketMonitor: "interval" });
      return withTelemetryReader(c, handler);
    },
    "sockeye-off": () =>
      agentHandler("sockeye-off", Sockeye.NodeHttpHandler, { socketMonitor: "off", telemetry: false }).c,
    "sockeye-before": () => {
      const { handler, c } = agentHandler("sockeye-before", Before.NodeHttpHandler, { socketMonitor: "interval" });
      return withTelemetryReader(c, handler);
    },
    undici: () => undiciClient(origin, timeouts),
    "smithy-undici": () => {
      const dispatcher = {
        connections: MAX_SOCKETS,
        pipelining: 1,
        keepAliveTimeout: 60_000,
        ...undiciTimeouts(timeouts),
      };
      return handlerClient("smithy-undici", new SmithyUndiciHandler({ dispatcher }), origin);
    },
    "sockeye-undici": () => {
      const options = { httpAgent: { maxSockets: MAX_SOCKETS }, idleSocketTimeout: 60_000, logger: quietLogger };
      const handler = new SockeyeUndici.UndiciHttpHandler({ ...options, ...trio });
      return withTelemetryReader(handlerClient("sockeye-undici", handler, origin), handler);
    },
    http2: () => http2Client(h2Origin),
    "upstream-h2": () => handlerClient("upstream-h2", new UpstreamHttp2Handler(h2), h2Origin),
    "sockeye-h2": () =>
      handlerClient("sockeye-h2", new Sockeye.NodeHttp2Handler({ ...h2, maxSessionsPerOrigin: 1 }), h2Origin),
  };
  const clients = [];
  const skipped = {};
  for (const name of CLIENT_NAMES) {
    if (only && !only.includes(name)) continue;
    const module =
      name === "sockeye-undici"
        ? SockeyeUndici
        : name === "sockeye-before"
          ? Before
          : name.startsWith("sockeye")
            ? Sockeye
            : undefined;
    if (module?.unavailable) skipped[name] = module.unavailable;
    else clients.push(factories[name]());
  }
  return { clients, skipped };
}
