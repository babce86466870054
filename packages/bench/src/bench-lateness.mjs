// =============================================================================
// bench-lateness.mjs: does a deadline fire as promptly as a native timer? (`npm run bench:lateness`)
//
// Sockeye carries every deadline of a handler on one scheduler (one native timer armed for the earliest expiry);
// upstream arms a native timer per request. One method for every cell (handler × deadline kind × duration × state):
//   * a fresh handler configured for the kind, with an established connection to the probes' server first (`/128`),
//     as a client in use has. The servers are the load server's (lib/load-server.mjs, in a child process), so
//     answering the background traffic never runs on the measured event loop;
//   * states: "alone" (nothing else); "under load" (`loadConcurrency` loops send GET /65536, a body read to its end,
//     through the same handler back to back, from `settleMs` before the first probe until the last settled);
//     "N in flight" (request kind only: `many` requests to /never through the same handler, `manySettleMs` before
//     the first probe, each with a per-call requestTimeout of 10 min: that many armed deadlines, most queued for a
//     socket);
//   * `probes` probes, each paired with a native `setTimeout(d)` armed in the same tick (the floor: the event loop's
//     own lateness at that moment). Request and socket probes are issued d / probes apart (their due times spread
//     over one period); connection and session probes one after the other (each needs a connection of its own);
//   * lateness = when the handler's error is seen − when its deadline started − d, for the probe and its floor
//     alike; Δ = p90 of (probe − its own floor): what the handler adds to the loop's own lateness.
//
// Kinds:
//   request     per-call requestTimeout d: GET /never, never answered; from handle(). Under load the background
//               requests carry one of 10 × d (armed and cancelled on the same scheduler, none expiring).
//   socket      socketTimeout d: GET /stall, whose head and first byte arrive, then nothing; from handle()'s result.
//   connection  connectionTimeout d (upstream undici: `dispatcher.connect.timeout`) against a listener that never
//               accepts (a child process listens with backlog 1 and blocks; filler connections fill the accept
//               queue, so every later SYN is dropped and connect() hangs); from handle().
//   session     sessionTimeout d (HTTP/2): one GET /65536 on a session of its own (the h2c origin), read to its end;
//               from the body's end to the handler's `session.destroy()` (seen through a wrapper on `http2.connect`).
//
// `--quick` (about 2 minutes): 8 probes per cell (16 otherwise), no N-in-flight cells; prints the table and writes
// out/lateness-quick-latest.json, leaving docs/perf/lateness.md alone. `BENCH_LATENESS_ONLY=<regexp>` runs only the
// cells whose "handler kind" matches. Output: out/lateness-<date>.json (+ -latest) and docs/perf/lateness.md.
// =============================================================================

import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler as UpstreamH2Handler, NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { UndiciHttpHandler as UpstreamUndiciHandler } from "@smithy/undici-http-handler";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { LATENESS_READING, latenessMarkdown, summarizeProbes } from "./lib/lateness-summary.mjs";
import { describeRun, writeResults } from "./lib/machine.mjs";
import { startLoadServer } from "./lib/server-control.mjs";

const QUICK = process.argv.includes("--quick");
const ONLY = process.env.BENCH_LATENESS_ONLY ? new RegExp(process.env.BENCH_LATENESS_ONLY) : undefined;
const CONFIG = {
  /** Probes per cell. */
  probes: Number(process.env.BENCH_LATENESS_PROBES ?? (QUICK ? 8 : 16)),
  /** Background request loops "under load". */
  loadConcurrency: Number(process.env.BENCH_LATENESS_LOAD ?? 16),
  /** Requests in flight in the "N in flight" state. */
  many: Number(process.env.BENCH_LATENESS_MANY ?? 10_000),
  /** Background traffic runs this long before the first probe, ms; `many` requests need longer to be issued. */
  settleMs: 300,
  manySettleMs: 1500,
  /** Durations per kind, ms. */
  durations: { request: [10, 100, 1000], socket: [100], connection: [100], session: [200] },
};
const STATES = QUICK ? ["alone", "under load"] : ["alone", "under load", "in flight"];

const FIXTURES = fileURLToPath(new URL("../../node-http-handler/test/fixtures/", import.meta.url));
const CA = readFileSync(`${FIXTURES}localhost-cert.pem`);
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };
const agentOptions = { keepAlive: true, maxSockets: 50 };

/** Every handler under comparison; `many: false` skips the N-in-flight state (undici's pool has no socket limit). */
const HANDLERS = [
  {
    name: "Sockeye NodeHttpHandler",
    kinds: ["request", "socket", "connection"],
    make: (o) => new NodeHttpHandler({ ...o, throwOnRequestTimeout: true, httpAgent: agentOptions, logger: quiet }),
  },
  {
    name: "upstream NodeHttpHandler",
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
    kinds: ["request", "socket", "connection"],
    make: (o) => new UndiciHttpHandler({ ...o, throwOnRequestTimeout: true, logger: quiet }),
  },
  {
    name: "upstream UndiciHttpHandler",
    kinds: ["request", "connection"],
    many: false,
    make: (o) =>
      new UpstreamUndiciHandler(
        o.connectionTimeout === undefined ? {} : { dispatcher: { connect: { timeout: o.connectionTimeout } } }
      ),
  },
  {
    name: "Sockeye NodeHttp2Handler",
    h2: true,
    kinds: ["request", "session", "connection"],
    make: (o) => new NodeHttp2Handler({ ...o, nodeHttp2ConnectOptions: { ca: CA }, logger: quiet }),
  },
  {
    name: "upstream NodeHttp2Handler",
    h2: true,
    kinds: ["request", "session"],
    make: (o) => new UpstreamH2Handler({ ...o, nodeHttp2ConnectOptions: { ca: CA } }),
  },
];
const OPTION = { socket: "socketTimeout", connection: "connectionTimeout", session: "sessionTimeout" };

// -----------------------------------------------------------------------------
// Session destroy times: every ClientHttp2Session records its first destroy() call. Both HTTP/2 handlers call
// `http2.connect` through the module object, so one wrapper sees both.
// -----------------------------------------------------------------------------
const kDestroyedAt = Symbol("destroyedAt");
/** Sessions created through `http2.connect`, with the authority they were created for. */
const createdSessions = [];
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

/**
 * A TCP listener that never accepts: a child Node process listens with backlog 1 and blocks its thread
 * (`Atomics.wait`, no CPU); four filler connections fill the kernel's accept queue, so later SYNs are dropped.
 */
async function startBlackHole() {
  const source = `const s=require("node:net").createServer();s.listen({port:0,host:"127.0.0.1",backlog:1},()=>{process.stdout.write(s.address().port+"\\n",()=>Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0));});`;
  const child = spawn(process.execPath, ["-e", source], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once("data", (d) => resolve(Number(String(d).trim())));
    child.once("error", reject);
  });
  const fillers = Array.from({ length: 4 }, () => net.connect(port, "127.0.0.1").on("error", () => {}));
  await sleep(300);
  return {
    port,
    close() {
      for (const s of fillers) s.destroy();
      child.kill("SIGKILL");
    },
  };
}

// -----------------------------------------------------------------------------
// Probes
// -----------------------------------------------------------------------------
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

function get(target, path) {
  return new HttpRequest({ ...target, method: "GET", path, headers: {} });
}

/**
 * One probe of `kind`: resolves with `{ late, floor }` (ms), or `{ error }` when the request ended otherwise than
 * by its deadline.
 */
async function probe(handler, kind, d, targets) {
  if (kind === "session") return probeSession(handler, d, targets);
  if (kind === "socket") {
    const { response } = await handler.handle(get(targets.probe, "/stall"));
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
  const request = kind === "connection" ? get(targets.blackHole, "/") : get(targets.probe, "/never");
  const start = performance.now();
  const floor = floorTimer(d);
  try {
    const { response } = await handler.handle(request, { requestTimeout: kind === "request" ? d : 0 });
    response.body?.destroy?.();
    return { error: "answered" };
  } catch (error) {
    const late = performance.now() - start - d;
    if (!/timeout|timed out/i.test(`${error?.code} ${error?.message}`)) return errorOf(error);
    return { late, floor: await floor };
  }
}

/** sessionTimeout: one request on a session of its own, read to its end; the deadline counts from that end. */
async function probeSession(handler, d, targets) {
  const { response } = await handler.handle(get(targets.session, "/65536"));
  const ofOrigin = new RegExp(`:${targets.session.port}(/|$)`);
  const session = createdSessions.findLast((s) => ofOrigin.test(s.authority))?.session;
  if (session === undefined) return { error: "no session seen" };
  await drain(response.body);
  const start = performance.now();
  const floor = await floorTimer(d);
  // The handler destroys the session at its deadline; wait for it (bounded), on the real timer.
  for (let i = 0; i < 200 && session[kDestroyedAt] === undefined; i++) await sleep(10);
  if (session[kDestroyedAt] === undefined) return { error: "session not destroyed within 2 s" };
  return { late: session[kDestroyedAt] - start - d, floor };
}

function errorOf(error) {
  return { error: String(error?.code ?? error?.name ?? error) };
}

// -----------------------------------------------------------------------------
// Background traffic
// -----------------------------------------------------------------------------
/** "under load": back-to-back GET /65536 loops; returns a stop function resolving with their counts. */
function startLoad(handler, target, requestTimeout) {
  let running = true;
  const counts = { done: 0, failed: 0 };
  const loop = async () => {
    while (running) {
      try {
        const { response } = await handler.handle(
          get(target, "/65536"),
          requestTimeout ? { requestTimeout } : undefined
        );
        await drain(response.body);
        counts.done++;
      } catch {
        counts.failed++;
      }
    }
  };
  const loops = Array.from({ length: CONFIG.loadConcurrency }, loop);
  return async () => {
    running = false;
    await Promise.all(loops);
    return counts;
  };
}

/** "in flight": `many` requests to /never, each with a 10-minute deadline; returns a stop function that aborts them. */
function startInFlight(handler, target) {
  const abort = new AbortController();
  setMaxListeners(CONFIG.many + 1, abort.signal);
  const options = { requestTimeout: 600_000, abortSignal: abort.signal };
  for (let i = 0; i < CONFIG.many; i++) handler.handle(get(target, "/never"), options).catch(() => {});
  return async () => {
    abort.abort();
    return { inFlight: CONFIG.many };
  };
}

// -----------------------------------------------------------------------------
// Cells
// -----------------------------------------------------------------------------
async function runCell(spec, kind, d, state, targets) {
  const handler = spec.make(kind === "request" ? {} : { [OPTION[kind]]: d });
  const cellTargets = {
    probe: spec.h2 ? targets.h2 : targets.h1,
    blackHole: { ...(spec.h2 ? targets.h2 : targets.h1), port: targets.blackHolePort },
    session: targets.h2c,
  };
  const results = [];
  let load;
  let elu;
  let sessions;
  try {
    await handler.handle(get(cellTargets.probe, "/128")).then(({ response }) => drain(response.body));
    let stop;
    if (state === "under load") stop = startLoad(handler, cellTargets.probe, kind === "request" ? 10 * d : 0);
    if (state === "in flight") stop = startInFlight(handler, cellTargets.probe);
    if (stop) await sleep(state === "in flight" ? CONFIG.manySettleMs : CONFIG.settleMs);
    const eluStart = performance.eventLoopUtilization();
    if (kind === "session" || kind === "connection") {
      for (let i = 0; i < CONFIG.probes; i++) results.push(await probe(handler, kind, d, cellTargets).catch(errorOf));
    } else {
      const pending = [];
      for (let i = 0; i < CONFIG.probes; i++) {
        pending.push(probe(handler, kind, d, cellTargets).catch(errorOf));
        await sleep(d / CONFIG.probes);
      }
      results.push(...(await Promise.all(pending)));
    }
    elu = performance.eventLoopUtilization(eluStart).utilization;
    if (stop) load = await stop();
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
    await sleep(20);
  }
  return { handler: spec.name, kind, d, state, ...summarizeProbes(results), elu, load, sessions };
}

// -----------------------------------------------------------------------------
// Main
// -----------------------------------------------------------------------------
const startedAt = performance.now();
const meta = describeRun(QUICK ? "npm run bench:lateness -- --quick" : "npm run bench:lateness");
meta.config = { ...CONFIG, states: STATES };
const blackHole = await startBlackHole();
const server = await startLoadServer();
const local = { protocol: "http:", hostname: "127.0.0.1" };
const targets = {
  h1: { ...local, port: server.port },
  h2: { protocol: "https:", hostname: "localhost", port: server.h2TlsPort },
  h2c: { ...local, port: Number(new URL(server.h2Origin).port) },
  blackHolePort: blackHole.port,
};
const cells = [];
try {
  for (const spec of HANDLERS) {
    for (const kind of spec.kinds) {
      if (ONLY !== undefined && !ONLY.test(`${spec.name} ${kind}`)) continue;
      for (const d of CONFIG.durations[kind]) {
        for (const state of STATES) {
          if (state === "in flight" && (kind !== "request" || spec.many === false)) continue;
          const c = await runCell(spec, kind, d, state, targets);
          cells.push(c);
          console.log(
            `${spec.name} ${kind} ${d} ms ${state}: p50 ${c.p50.toFixed(1)} p90 ${c.p90.toFixed(1)} ` +
              `(floor p90 ${c.floorP90.toFixed(1)}, Δ ${c.deltaP90.toFixed(1)}; n=${c.n}` +
              `${c.errors.length ? `, errors ${c.errors.join(",")}` : ""}; elu ${(c.elu * 100).toFixed(0)} %` +
              `${c.load ? `; background ${JSON.stringify(c.load)}` : ""}` +
              `${c.sessions ? `; sessions ${JSON.stringify(c.sessions)}` : ""})`
          );
        }
      }
    }
  }
} finally {
  await server.close();
  blackHole.close();
}

meta.totalSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
const results = { meta, cells };
if (QUICK) {
  const out = fileURLToPath(new URL("../out/", import.meta.url));
  mkdirSync(out, { recursive: true });
  writeFileSync(`${out}lateness-quick-latest.json`, JSON.stringify(results, null, 2));
  console.log(`\n${latenessMarkdown(cells, meta.config).join("\n")}`);
  console.log(`wrote out/lateness-quick-latest.json (${meta.totalSeconds} s)`);
} else {
  const title = "Deadline lateness: Sockeye's one-timer scheduler vs native timers";
  writeResults("lateness", results, title, ["", ...latenessMarkdown(cells, meta.config), ...LATENESS_READING]);
}
process.exit(0);
