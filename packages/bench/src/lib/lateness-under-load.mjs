// =============================================================================
// lateness-under-load.mjs: the "alone / under load" section of bench-lateness.mjs (issue 34): how late each deadline
// of each handler fires while the SAME handler carries CPU-bound background traffic, against a native `setTimeout`
// armed at the same moment.
//
// Method (one cell = one handler × one deadline kind × one duration × one state):
//   * a fresh handler configured for the kind (below); the servers run in a child process (lib/lateness-server.mjs);
//   * "under load": LOAD_CONCURRENCY loops each send GET /load (a 64 KiB body, read to its end) through the same
//     handler, back to back, from LOAD_SETTLE_MS before the first probe until the last probe settled; "alone": none;
//   * `probes` probes, each paired with a native `setTimeout(d)` armed in the same tick (the floor): the event loop's
//     own lateness at that moment. Probes of the request and socket kinds are issued d / probes apart (their due
//     times spread over one period, never in the same millisecond); connectionTimeout and sessionTimeout probes one
//     after the other (each needs a connection or session of its own);
//   * lateness = when the handler's error is seen − when its deadline started − d, for the probe and the floor alike;
//     a cell reports p50 and p90 of both, and Δ = p90 of (probe − its own floor) over the probes (what the handler
//     adds to the loop's own lateness at the same moments), plus the event-loop utilisation over the cell.
//
// Kinds (targets on the child's servers; `family` h1 = HTTP/1.1, h2 = HTTP/2 over TLS):
//   request     per-call requestTimeout d: GET /never, which is never answered; started at handle(). The background
//               requests carry one too (10 × d: armed and cancelled deadlines on the same scheduler, none expiring;
//               with d itself, hundreds in flight time out by the hundred and the server's rapid-reset guard closes
//               the session)
//   socket      socketTimeout d (handler option): GET /stall, whose head and first byte arrive and then nothing;
//               started when handle() resolves (the last byte came with the head)
//   connection  connectionTimeout d (undici upstream: `dispatcher.connect.timeout`): a listener that never accepts
//               (the bench's black hole); started at handle()
//   session     sessionTimeout d (HTTP/2): one GET /load on a session of its own (the h2c origin, apart from the
//               background's TLS origin), read to its end; started at the body's end; fired when the handler calls
//               `session.destroy()` (seen through a wrapper on `http2.connect`, for upstream and Sockeye alike)
// =============================================================================
import http from "node:http";
import http2 from "node:http2";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler as UpstreamH2Handler, NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { UndiciHttpHandler as UpstreamUndiciHandler } from "@smithy/undici-http-handler";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { summarizeProbes } from "./lateness-summary.mjs";

/** Background request loops per handler while "under load". */
export const LOAD_CONCURRENCY = Number(process.env.BENCH_LATENESS_LOAD ?? 16);
/** Background traffic runs this long before the first probe. */
export const LOAD_SETTLE_MS = 300;
/** Only the cells whose "handler kind" matches this pattern (development runs; unset: every cell). */
const ONLY = process.env.BENCH_LATENESS_ONLY ? new RegExp(process.env.BENCH_LATENESS_ONLY) : undefined;
/** Durations per kind, ms. */
export const KIND_DURATIONS = { request: [100, 1000], socket: [100], connection: [100], session: [200] };

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const agentOptions = { keepAlive: true, maxSockets: 50 };

/**
 * @param {Buffer} ca the servers' certificate
 * @returns {{ name: string, family: "h1" | "h2", kinds: string[], make: (o: object) => any }[]}
 */
export function underLoadHandlers(ca) {
  return [
    {
      name: "Sockeye NodeHttpHandler",
      family: "h1",
      kinds: ["request", "socket", "connection"],
      make: (o) => new NodeHttpHandler({ ...o, throwOnRequestTimeout: true, httpAgent: agentOptions, logger: quiet }),
    },
    {
      name: "upstream NodeHttpHandler",
      family: "h1",
      kinds: ["request", "socket", "connection"],
      make: (o) =>
        new UpstreamHandler({
          ...o,
          throwOnRequestTimeout: true,
          httpAgent: new http.Agent(agentOptions),
          logger: quiet,
        }),
    },
    {
      name: "Sockeye UndiciHttpHandler",
      family: "h1",
      kinds: ["request", "socket", "connection"],
      make: (o) => new UndiciHttpHandler({ ...o, throwOnRequestTimeout: true, logger: quiet }),
    },
    {
      name: "upstream UndiciHttpHandler",
      family: "h1",
      kinds: ["request", "connection"],
      make: (o) =>
        new UpstreamUndiciHandler(
          o.connectionTimeout === undefined ? {} : { dispatcher: { connect: { timeout: o.connectionTimeout } } }
        ),
    },
    {
      name: "Sockeye NodeHttp2Handler",
      family: "h2",
      kinds: ["request", "session", "connection"],
      make: (o) => new NodeHttp2Handler({ ...o, nodeHttp2ConnectOptions: { ca }, logger: quiet }),
    },
    {
      name: "upstream NodeHttp2Handler",
      family: "h2",
      kinds: ["request", "session"],
      make: (o) => new UpstreamH2Handler({ ...o, nodeHttp2ConnectOptions: { ca } }),
    },
  ];
}

const OPTION = { socket: "socketTimeout", connection: "connectionTimeout", session: "sessionTimeout" };

// -----------------------------------------------------------------------------
// Session destroy times (sessionTimeout): every ClientHttp2Session created from now on records its first
// destroy() call. Both handlers call `http2.connect` through the module object, so one wrapper sees both.
// -----------------------------------------------------------------------------
const kDestroyedAt = Symbol("destroyedAt");
let connectWrapped = false;
function wrapHttp2Connect() {
  if (connectWrapped) return;
  connectWrapped = true;
  const connect = http2.connect;
  http2.connect = function wrappedConnect(...args) {
    const session = connect.apply(this, args);
    const destroy = session.destroy;
    session.destroy = function recordedDestroy(...a) {
      this[kDestroyedAt] ??= performance.now();
      return destroy.apply(this, a);
    };
    createdSessions.push({ authority: String(args[0]), session });
    return session;
  };
}
/** Sessions created through `http2.connect`, with the authority they were created for. */
const createdSessions = [];

// -----------------------------------------------------------------------------
// Probes
// -----------------------------------------------------------------------------
/** A native timer armed now: resolves with its lateness, ms. */
function floorTimer(d) {
  const start = performance.now();
  return new Promise((resolve) => setTimeout(() => resolve(performance.now() - start - d), d));
}

function drain(body) {
  return new Promise((resolve) => {
    if (!body || typeof body.resume !== "function") return resolve();
    body.once("end", resolve);
    body.once("error", resolve);
    body.once("close", resolve);
    body.resume();
  });
}

function httpRequest(target, path) {
  return new HttpRequest({ ...target, method: "GET", path, headers: {} });
}

/**
 * One probe of `kind`: resolves with `{ late, floor }` (ms), or `{ error }` when the request ended otherwise than
 * by its deadline.
 */
async function probe(handler, kind, d, targets) {
  if (kind === "session") return probeSession(handler, d, targets);
  if (kind === "socket") {
    const { response } = await handler.handle(httpRequest(targets.probe, "/stall"));
    const start = performance.now();
    const floor = floorTimer(d);
    const late = await new Promise((resolve) => {
      const done = () => resolve(performance.now() - start - d);
      response.body.on("data", () => {});
      response.body.once("error", done);
      response.body.once("close", done);
      response.body.once("end", () => resolve(undefined));
    });
    return late === undefined ? { error: "end" } : { late, floor: await floor };
  }
  const path = kind === "connection" ? "/" : "/never";
  const target = kind === "connection" ? targets.blackHole : targets.probe;
  const start = performance.now();
  const floor = floorTimer(d);
  try {
    const { response } = await handler.handle(httpRequest(target, path), {
      requestTimeout: kind === "request" ? d : 0,
    });
    response.body?.destroy?.();
    return { error: "answered" };
  } catch (error) {
    const late = performance.now() - start - d;
    if (!/timeout|timed out/i.test(`${error?.code} ${error?.message}`)) {
      return { error: String(error?.code ?? error?.name) };
    }
    return { late, floor: await floor, reason: String(error?.message).slice(0, 120) };
  }
}

/** sessionTimeout: one request on a session of its own, read to its end; the deadline counts from that end. */
async function probeSession(handler, d, targets) {
  const { response } = await handler.handle(httpRequest(targets.session, "/load"));
  const ofOrigin = new RegExp(`:${targets.session.port}(/|$)`);
  const session = createdSessions.findLast((s) => ofOrigin.test(s.authority))?.session;
  if (session === undefined) return { error: "no session seen" };
  await drain(response.body);
  const start = performance.now();
  const floor = await floorTimer(d);
  // The handler destroys the session at its deadline; wait for it (bounded), on the real timer.
  for (let i = 0; i < 200 && session[kDestroyedAt] === undefined; i++) await new Promise((r) => setTimeout(r, 10));
  if (session[kDestroyedAt] === undefined) return { error: "session not destroyed within 2 s" };
  return { late: session[kDestroyedAt] - start - d, floor };
}

// -----------------------------------------------------------------------------
// Background traffic
// -----------------------------------------------------------------------------
function startLoad(handler, target, requestTimeout) {
  let running = true;
  let done = 0;
  let failed = 0;
  const options = requestTimeout === undefined ? undefined : { requestTimeout };
  const loop = async () => {
    while (running) {
      try {
        const { response } = await handler.handle(httpRequest(target, "/load"), options);
        await drain(response.body);
        done++;
      } catch {
        failed++;
      }
    }
  };
  const loops = Array.from({ length: LOAD_CONCURRENCY }, loop);
  return async () => {
    running = false;
    await Promise.all(loops);
    return { done, failed };
  };
}

// -----------------------------------------------------------------------------
// Cells
// -----------------------------------------------------------------------------
/**
 * Runs one cell and returns its summary.
 * @param {{ name: string, family: string, make: (o: object) => any }} spec
 * @param {{ h1: object, h2: object, h2c: object, blackHoleH1: object, blackHoleH2: object }} targets
 */
export async function runCell(spec, kind, d, loaded, probes, targets) {
  wrapHttp2Connect();
  const options = kind === "request" ? {} : { [OPTION[kind]]: d };
  const handler = spec.make(options);
  const h2 = spec.family === "h2";
  const cellTargets = {
    probe: h2 ? targets.h2 : targets.h1,
    blackHole: h2 ? targets.blackHoleH2 : targets.blackHoleH1,
    session: targets.h2c,
  };
  const results = [];
  let load;
  let elu;
  let sessions;
  try {
    // An established connection (or session) to the probes' server first, as a client in use has.
    await handler.handle(httpRequest(cellTargets.probe, "/warm")).then(({ response }) => drain(response.body));
    const stopLoad = loaded
      ? startLoad(handler, cellTargets.probe, kind === "request" ? 10 * d : undefined)
      : undefined;
    if (loaded) await new Promise((r) => setTimeout(r, LOAD_SETTLE_MS));
    const eluStart = performance.eventLoopUtilization();
    if (kind === "session" || kind === "connection") {
      // One after the other: each needs a connection or session of its own (concurrent HTTP/2 probes would share
      // one connecting session, whose deadline is the session's, not each request's).
      for (let i = 0; i < probes; i++) results.push(await probe(handler, kind, d, cellTargets).catch(errorOf));
    } else {
      const pending = [];
      for (let i = 0; i < probes; i++) {
        pending.push(probe(handler, kind, d, cellTargets).catch(errorOf));
        await new Promise((r) => setTimeout(r, d / probes));
      }
      results.push(...(await Promise.all(pending)));
    }
    elu = performance.eventLoopUtilization(eluStart).utilization;
    if (stopLoad) load = await stopLoad();
    // Sockeye's HTTP/2 sessions of the cell: how many were opened, and why they closed (telemetry).
    for (const origin of handler.getPoolStats?.().origins ?? []) {
      if (origin.http2 === undefined) continue;
      sessions ??= { created: 0, closed: {} };
      sessions.created += origin.http2.sessionsCreated;
      for (const [why, n] of Object.entries(origin.http2.closed))
        if (n > 0) sessions.closed[why] = (sessions.closed[why] ?? 0) + n;
    }
  } finally {
    try {
      handler.destroy();
    } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    handler: spec.name,
    kind,
    d,
    state: loaded ? "under load" : "alone",
    ...summarizeProbes(results),
    elu,
    load,
    sessions,
  };
}

function errorOf(error) {
  return { error: String(error?.code ?? error?.name ?? error) };
}

/**
 * Every cell: for each handler, each kind it has and each duration, alone then under load.
 * @param {(line: string) => void} log
 */
export async function runUnderLoad({ ca, targets, probes, log }) {
  const cells = [];
  for (const spec of underLoadHandlers(ca)) {
    for (const kind of spec.kinds) {
      if (ONLY !== undefined && !ONLY.test(`${spec.name} ${kind}`)) continue;
      for (const d of KIND_DURATIONS[kind]) {
        for (const loaded of [false, true]) {
          const cell = await runCell(spec, kind, d, loaded, probes, targets);
          cells.push(cell);
          log(
            `${spec.name} ${kind} ${d} ms ${cell.state}: p50 ${cell.p50.toFixed(1)} p90 ${cell.p90.toFixed(1)} ` +
              `(floor p90 ${cell.floorP90.toFixed(1)}, Δ ${cell.deltaP90.toFixed(1)}; n=${cell.n}` +
              `${cell.errors.length ? `, errors ${cell.errors.join(",")}` : ""}; elu ${(cell.elu * 100).toFixed(0)} %` +
              `${cell.load ? `; background ${cell.load.done} done, ${cell.load.failed} failed` : ""}` +
              `${cell.sessions ? `; sessions ${JSON.stringify(cell.sessions)}` : ""})`
          );
        }
      }
    }
  }
  return cells;
}
