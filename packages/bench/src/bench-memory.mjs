// =============================================================================
// bench-memory.mjs: heap per request in flight, and the drain of a burst above maxSockets (`npm run bench:memory`).
//
// Two passes, each rotated over the clients, a few minutes at most on a 2-core VM:
//   1. Heap retained per request in flight: 10,000 GetItem-like POSTs (SDK-style headers, a small JSON body) held on
//      50 sockets, so 9,950 of them queued; gc() before the baseline and before the reading, the three timeouts
//      armed (60 s each, so none fires while held). `caller-only` builds the same requests and waits without
//      sending: the caller's share, included in every client's figure. 2 repetitions.
//   2. Drain: a Promise.all of 10,000 GetItem-like POSTs on 50 sockets from a cold pool, answered at once, timeouts
//      on: client CPU and wall ms, each as a ratio to raw http.request in the same round, and the connections the
//      agent opened and held at once (never more than maxSockets).
// Clients: raw http.request (`raw-floor`), upstream 4.14.2, this checkout's NodeHttpHandler and, when
// BENCH_BEFORE_MODULE names another build's packages/node-http-handler/dist/index.js (the CommonJS build, which
// Node loads for the subject too; e.g. a `git worktree add --detach` of main, built; or this build again, as an A/A
// control), that build as `sockeye-before`.
// Output: packages/bench/out/bench-memory-latest.json and one line per measurement on stdout. Knobs:
// BENCH_MEMORY_PASSES ("heap,drain"), BENCH_MEMORY_ROUNDS (drain rounds, default 3).
// =============================================================================

import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { drain, MAX_SOCKETS, TIMEOUTS } from "./lib/clients.mjs";
import { describeRun } from "./lib/machine.mjs";
import { startLoadServer, waitForServer } from "./lib/server-control.mjs";

const BEFORE_MODULE = process.env.BENCH_BEFORE_MODULE;
const PASSES = (process.env.BENCH_MEMORY_PASSES ?? "heap,drain").split(",");
const DRAIN_ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const HELD = 10_000;
const noop = () => {};
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: noop };

/** A GetItem-sized request as the SDK sends it: POST, JSON body, SigV4-style headers. */
function getItem(hostname, port, path) {
  const body = '{"TableName":"bench-table","Key":{"pk":{"S":"user#0001"},"sk":{"S":"profile"}},"ConsistentRead":false}';
  const signed =
    "amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;x-amz-content-sha256;x-amz-date";
  const headers = {
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
    authorization: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261126/us-east-1/dynamodb/aws4_request, SignedHeaders=${signed};x-amz-target;x-amz-user-agent, Signature=3f1c0e2b7a4d5c6e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e`,
  };
  return new HttpRequest({ protocol: "http:", hostname, port, method: "POST", path, headers, body });
}

/** A client on its own 50-socket agent: `post(path)` sends a GetItem through `send(request, agent)`. */
function client(name, origin, send) {
  const { hostname, port } = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, keepAliveMsecs: 1000 });
  return {
    name,
    agent,
    post: (path) => send(getItem(hostname, Number(port), path), agent),
    close: () => agent.destroy(),
  };
}

/** The raw http.request floor (the same request, no Smithy shapes). */
const rawClient = (origin) =>
  client("raw-floor", origin, (r, agent) => {
    const { hostname: host, port, path, method, headers } = r;
    return new Promise((resolve, reject) => {
      const req = http.request({ host, port, path, method, headers, agent }, (res) => drain(res).then(resolve, reject));
      req.once("error", reject);
      req.end(r.body);
    });
  });

/** A Smithy handler on the client's agent (created once, on the first request). */
function handlerClient(name, Handler, origin, options) {
  let handler;
  const c = client(name, origin, async (r, agent) => {
    handler ??= new Handler({ httpAgent: agent, logger: quiet, ...options });
    await drain((await handler.handle(r)).response.body);
  });
  const closeAgent = c.close;
  c.close = () => {
    handler?.destroy();
    closeAgent();
  };
  return c;
}

/** The caller's own share (heap pass only): builds the same request and waits, sending nothing, until released. */
function callerOnlyClient(origin, server) {
  const waiting = [];
  server.onRelease = () => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  return client("caller-only", origin, async (r) => {
    if (r.path.startsWith("/hold/")) await new Promise((resolve) => waiting.push(resolve));
  });
}

const Before = BEFORE_MODULE ? await import(BEFORE_MODULE) : undefined;
const Sockeye = await import("@sockeye/node-http-handler");

/** The handlers under comparison, with `timeouts` (the three of TIMEOUTS, 60 s each for the heap pass). */
function handlerClients(origin, timeouts) {
  const sockeye = { ...timeouts, socketMonitor: "interval" };
  return [
    handlerClient("upstream", UpstreamHandler, origin, timeouts),
    ...(Before ? [handlerClient("sockeye-before", Before.NodeHttpHandler, origin, sockeye)] : []),
    handlerClient("sockeye", Sockeye.NodeHttpHandler, origin, sockeye),
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

const rotate = (xs, k) => xs.map((_, i) => xs[(i + k) % xs.length]);
const gc2 = () => {
  globalThis.gc();
  globalThis.gc();
};
const results = { meta: { ...describeRun("npm run bench:memory"), before: BEFORE_MODULE }, heap: [], drain: [] };
const server = await startLoadServer();
const origin = server.origin;

try {
  if (PASSES.includes("heap")) {
    if (typeof globalThis.gc !== "function") throw new Error("the heap pass needs node --expose-gc");
    const long = { connectionTimeout: 60_000, requestTimeout: 60_000, socketTimeout: 60_000 };
    for (let rep = 0; rep < 2; rep++) {
      const clients = [callerOnlyClient(origin, server), rawClient(origin), ...handlerClients(origin, long)];
      for (const cl of rotate(clients, rep)) {
        await cl.post("/128"); // warm: agent, handler, resolved config
        await server.hold();
        gc2();
        const base = process.memoryUsage().heapUsed;
        const pending = Array.from({ length: HELD }, () => cl.post("/hold/128"));
        if (cl.name !== "caller-only") await waitForServer(server, (s) => s.held >= MAX_SOCKETS);
        await new Promise((resolve) => setTimeout(resolve, 50));
        gc2();
        const retainedPerRequest = (process.memoryUsage().heapUsed - base) / HELD;
        const agentQueued = Object.values(cl.agent.requests).reduce((n, q) => n + q.length, 0);
        await server.release();
        server.onRelease?.();
        await Promise.all(pending);
        results.heap.push({ rep, client: cl.name, retainedPerRequest, agentQueued });
        console.log(
          `heap rep ${rep} ${cl.name}: ${retainedPerRequest.toFixed(0)} B retained per request, ${agentQueued} in agent.requests`
        );
      }
      for (const cl of clients) cl.close();
    }
  }

  if (PASSES.includes("drain")) {
    for (let rep = 0; rep < DRAIN_ROUNDS; rep++) {
      const clients = [rawClient(origin), ...handlerClients(origin, TIMEOUTS)];
      const round = {};
      for (const cl of rotate(clients, rep)) {
        const counts = countConnections(cl.agent);
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await Promise.all(Array.from({ length: HELD }, () => cl.post("/128")));
        const wallMs = performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        round[cl.name] = { rep, client: cl.name, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, ...counts };
      }
      const raw = round["raw-floor"];
      for (const r of Object.values(round)) {
        results.drain.push(r);
        console.log(
          `drain rep ${rep} ${r.client}: cpu ${r.cpuMs.toFixed(0)} ms (÷ raw ${(r.cpuMs / raw.cpuMs).toFixed(3)}), wall ${r.wallMs.toFixed(0)} ms (÷ raw ${(r.wallMs / raw.wallMs).toFixed(3)}), ${r.opened} connections opened, ${r.peakOpen} open at most`
        );
      }
      for (const cl of clients) cl.close();
    }
  }
} finally {
  await server.close();
}

const outDir = fileURLToPath(new URL("../out/", import.meta.url));
mkdirSync(outDir, { recursive: true });
writeFileSync(`${outDir}bench-memory-latest.json`, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${outDir}bench-memory-latest.json`);
