// =============================================================================
// bench-memory.mjs: heap per request in flight, and the drain of a burst above maxSockets (`npm run bench:memory`).
//
// Two passes, each rotated over the clients, a few minutes at most on a 2-core VM:
//   1. Heap retained per request in flight: 10,000 GetItem-like POSTs (SDK-style headers, a small JSON body) held on
//      50 sockets, so 9,950 of them queued; gc() before the baseline and before the reading, the three timeouts
//      armed (60 s each, so none fires while held). `caller-only` builds the same requests and waits without
//      sending: the caller's share, included in every client's figure.
//   2. Drain: a Promise.all of 10,000 GetItem-like POSTs on 50 sockets from a cold pool, answered at once: wall ms,
//      client CPU ms, and the connections the agent opened and held at once (never more than maxSockets).
// Clients: raw http.request, upstream 4.14.2, this checkout's NodeHttpHandler and, when BENCH_BEFORE_MODULE names
// another build's packages/node-http-handler/dist/index.mjs (e.g. a `git worktree add --detach` of main, built),
// that build as `sockeye-before`: a change's effect measured in one process.
// Output: packages/bench/out/bench-memory-latest.json and one line per measurement on stdout. Knobs:
// BENCH_MEMORY_PASSES ("heap,drain"), BENCH_MEMORY_ROUNDS (drain rounds, default 3; heap repetitions are 2).
// =============================================================================

import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { drain, MAX_SOCKETS, TIMEOUTS } from "./lib/clients.mjs";
import { startLoadServer, waitForServer } from "./lib/server-control.mjs";

const BEFORE_MODULE = process.env.BENCH_BEFORE_MODULE;
const PASSES = (process.env.BENCH_MEMORY_PASSES ?? "heap,drain").split(",");
const DRAIN_ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const HELD = 10_000;
const noop = () => {};

/** A GetItem-sized request as the SDK sends it: POST, JSON body, SigV4-style headers. */
function getItem(hostname, port, path) {
  const body = '{"TableName":"bench-table","Key":{"pk":{"S":"user#0001"},"sk":{"S":"profile"}},"ConsistentRead":false}';
  return new HttpRequest({
    protocol: "http:",
    hostname,
    port,
    method: "POST",
    path,
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": "DynamoDB_20120810.GetItem",
      "content-length": String(body.length),
      host: `${hostname}:${port}`,
      "x-amz-user-agent": "aws-sdk-js/3.1169.0",
      "user-agent": "aws-sdk-js/3.1169.0 ua/2.1 os/linux#6.8 lang/js md/nodejs#20.20.2 api/dynamodb#3.1169.0 m/E",
      "amz-sdk-invocation-id": "0b7c9c43-51a1-4e4c-9f3e-6a6f1c1f2a11",
      "amz-sdk-request": "attempt=1; max=3",
      "x-amz-date": "20261126T010000Z",
      "x-amz-content-sha256": "5f3b3c1c0e6b7b3c1a7f2a6d0c9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c",
      authorization:
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/us-east-1/dynamodb/aws4_request, SignedHeaders=amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target;x-amz-user-agent, Signature=3f1c0e2b7a4d5c6e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e",
    },
    body,
  });
}

const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** A handler client on its own 50-socket agent; `post(path)` sends a GetItem. */
function handlerClient(name, HandlerClass, origin, options) {
  const url = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, keepAliveMsecs: 1000 });
  const handler = new HandlerClass({ httpAgent: agent, logger: quiet, ...options });
  const hostname = url.hostname;
  const port = Number(url.port);
  return {
    name,
    agent,
    async post(path) {
      const { response } = await handler.handle(getItem(hostname, port, path));
      await drain(response.body);
    },
    async close() {
      handler.destroy();
      agent.destroy();
    },
  };
}

/** The raw http.request floor (same GetItem request, no Smithy shapes). */
function rawClient(origin) {
  const url = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, keepAliveMsecs: 1000 });
  const host = url.hostname;
  const port = Number(url.port);
  return {
    name: "raw-floor",
    agent,
    post(path) {
      const r = getItem(host, port, path);
      return new Promise((resolve, reject) => {
        const req = http.request({ host, port, path, method: "POST", headers: r.headers, agent }, (res) =>
          drain(res).then(resolve, reject)
        );
        req.once("error", reject);
        req.end(r.body);
      });
    },
    async close() {
      agent.destroy();
    },
  };
}

/**
 * The caller's own share (heap pass only): builds the same GetItem request and waits in the same async function,
 * on a promise released with the others, sending nothing. Subtracted from a client's figure, it leaves what the
 * client itself keeps per queued request.
 */
function callerOnlyClient(origin, server) {
  const url = new URL(origin);
  const waiting = [];
  server.onRelease = () => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  return {
    name: "caller-only",
    agent: { requests: {} },
    async post(path) {
      const request = getItem(url.hostname, Number(url.port), path);
      if (path.startsWith("/hold/")) await new Promise((resolve) => waiting.push(resolve));
      return request.method;
    },
    async close() {},
  };
}

const Before = BEFORE_MODULE ? await import(BEFORE_MODULE) : undefined;
const Sockeye = await import("@sockeye/node-http-handler");

/** The three timeouts, 60 s each: armed as with TIMEOUTS, never reached while the heap pass holds requests. */
const LONG_TIMEOUTS = { connectionTimeout: 60_000, requestTimeout: 60_000, socketTimeout: 60_000 };

async function handlerClients(origin, timeouts) {
  const t = timeouts === "long" ? LONG_TIMEOUTS : timeouts ? { ...TIMEOUTS } : {};
  return [
    handlerClient("upstream", UpstreamHandler, origin, t),
    ...(Before
      ? [handlerClient("sockeye-before", Before.NodeHttpHandler, origin, { ...t, socketMonitor: "interval" })]
      : []),
    handlerClient("sockeye", Sockeye.NodeHttpHandler, origin, { ...t, socketMonitor: "interval" }),
  ];
}

/** Counts the connections `agent` opens from now on, and the most it holds open at once. */
function countConnections(agent) {
  const counts = { opened: 0, peakOpen: 0 };
  let open = 0;
  const create = agent.createConnection;
  agent.createConnection = function (...args) {
    const socket = create.apply(this, args);
    counts.opened++;
    counts.peakOpen = Math.max(counts.peakOpen, ++open);
    socket.once("close", () => open--);
    return socket;
  };
  return counts;
}

const fmt = (x, d = 2) => (x === undefined ? "–" : x.toFixed(d));
const results = {
  meta: { date: new Date().toISOString(), node: process.version, before: BEFORE_MODULE },
  heap: [],
  drain: [],
};
const server = await startLoadServer();
const origin = `http://127.0.0.1:${server.port}`;

try {
  // ---- pass 1: heap retained per queued request, 10,000 held on 50 sockets -----------------------------------
  if (PASSES.includes("heap")) {
    if (typeof globalThis.gc !== "function") throw new Error("the heap pass needs node --expose-gc");
    for (let rep = 0; rep < 2; rep++) {
      const clients = [callerOnlyClient(origin, server), rawClient(origin), ...(await handlerClients(origin, "long"))];
      const order = clients.map((_, i) => clients[(i + rep) % clients.length]);
      for (const cl of order) {
        await cl.post("/128"); // warm: agent, plan, config resolved
        await server.hold();
        globalThis.gc();
        globalThis.gc();
        const base = process.memoryUsage().heapUsed;
        const pending = new Array(HELD);
        for (let i = 0; i < HELD; i++) pending[i] = cl.post("/hold/128");
        if (cl.name !== "caller-only") await waitForServer(server, (s) => s.held >= MAX_SOCKETS);
        await new Promise((resolve) => setTimeout(resolve, 50));
        globalThis.gc();
        globalThis.gc();
        const retained = process.memoryUsage().heapUsed;
        let agentQueued = 0;
        for (const key in cl.agent.requests) agentQueued += cl.agent.requests[key]?.length ?? 0;
        await server.release();
        server.onRelease?.();
        await Promise.all(pending);
        // Per queued request: what the 9,950 requests waiting for a socket keep alive (the 50 on sockets included).
        const perRequest = (retained - base) / HELD;
        results.heap.push({ rep, client: cl.name, retainedPerRequest: perRequest, agentQueued });
        console.log(
          `heap rep ${rep} ${cl.name}: ${fmt(perRequest, 0)} B retained per request (agent.requests ${agentQueued})`
        );
      }
      for (const cl of clients) await cl.close();
    }
  }

  // ---- pass 2: drain of a Promise.all of 10,000 GetItems on 50 sockets ----------------------------------------
  if (PASSES.includes("drain")) {
    for (let rep = 0; rep < DRAIN_ROUNDS; rep++) {
      const clients = [rawClient(origin), ...(await handlerClients(origin, true))];
      const order = clients.map((_, i) => clients[(i + rep) % clients.length]);
      for (const cl of order) {
        const counts = countConnections(cl.agent);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await Promise.all(Array.from({ length: HELD }, () => cl.post("/128")));
        const wallMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        const cpuMs = (cpu.user + cpu.system) / 1000;
        results.drain.push({ rep, client: cl.name, wallMs, cpuMs, ...counts });
        console.log(
          `drain rep ${rep} ${cl.name}: wall ${fmt(wallMs, 0)} ms, cpu ${fmt(cpuMs, 0)} ms, connections opened ${counts.opened} (peak open ${counts.peakOpen})`
        );
      }
      for (const cl of clients) await cl.close();
    }
  }
} finally {
  await server.close();
}

const outDir = fileURLToPath(new URL("../out/", import.meta.url));
mkdirSync(outDir, { recursive: true });
writeFileSync(`${outDir}bench-memory-latest.json`, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${outDir}bench-memory-latest.json`);
