// =============================================================================
// bench-queue.mjs: the handler-side queue of issue 25, before vs after, in one process (`npm run bench:queue`).
//
// Three passes, each paired and rotated, each a few minutes at most on a 2-core VM:
//   1. CPU per request ÷ the Smithy-shape floor (`smithy-floor`: raw http.request behind HttpRequest/HttpResponse)
//      at c = 1, 50, 1000, 10000 (a 50-socket pool), 128 B and 64 KiB, timeouts off and on, for `upstream`,
//      `sockeye-before` and `sockeye-after` (telemetry on, socketMonitor "interval"). Every round runs one burst
//      per client, in an order rotated each round; the ratio is paired with the floor's burst of the same round;
//      median (min–max) over the rounds. lib/burst.mjs measures a burst.
//   2. Heap retained per queued request: 10,000 GetItem-like POSTs (SDK-style headers, a small JSON body) held in
//      flight on 50 sockets; gc() before the baseline and after the reading (the retained figure), per client, the
//      three timeouts armed (60 s each, so none fires while held). `caller-only` builds the same requests and waits
//      without sending: its figure is the caller's share, included in every client's.
//   3. Drain: a Promise.all of 10,000 GetItem-like POSTs on 50 sockets from a cold pool, answered at once: wall ms,
//      client CPU ms, and the connections the agent opened and held at once (never more than maxSockets), per
//      client, rotated over rounds.
//
// `sockeye-before` is the handler built from another checkout (BENCH_BEFORE_MODULE, default /tmp/hq-before: the
// branch's base, `core`, built with its own @sockeye/pool-monitor); `sockeye-after` is this checkout's build. To make
// that checkout: `git worktree add --detach /tmp/hq-before <ref>`, in it a node_modules whose entries link to this
// checkout's except `@sockeye/*`, linked to its own packages, then `npx tsup` in packages/pool-monitor and
// packages/node-http-handler.
// Output: packages/bench/out/bench-queue-latest.json and a markdown table on stdout (pasted into
// docs/perf/handler-queue.md). Knobs: BENCH_QUEUE_ROUNDS (default 9; 5 at c=10000), BENCH_QUEUE_CELLS
// ("1,50,1000,10000"), BENCH_QUEUE_PASSES ("cpu,heap,drain").
// =============================================================================

import { mkdirSync, writeFileSync } from "node:fs";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { requestsPerBurst, runBurst } from "./lib/burst.mjs";
import { createClients, drain, MAX_SOCKETS, TIMEOUTS } from "./lib/clients.mjs";
import { startLoadServer, waitForServer } from "./lib/server-control.mjs";
import { median } from "./lib/stats.mjs";

const BEFORE_MODULE = process.env.BENCH_BEFORE_MODULE ?? "/tmp/hq-before/packages/node-http-handler/dist/index.mjs";
const CELLS = (process.env.BENCH_QUEUE_CELLS ?? "1,50,1000,10000").split(",").map(Number);
const PASSES = (process.env.BENCH_QUEUE_PASSES ?? "cpu,heap,drain").split(",");
const roundsFor = (c) => Number(process.env.BENCH_QUEUE_ROUNDS ?? (c >= 10000 ? 5 : 9));
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

/** A handler client on its own 50-socket agent; `request(path)` is a GET (pass 1), `post(path)` a GetItem. */
function handlerClient(name, HandlerClass, origin, options) {
  const url = new URL(origin);
  const agent = new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS, keepAliveMsecs: 1000 });
  const handler = new HandlerClass({ httpAgent: agent, logger: quiet, ...options });
  const hostname = url.hostname;
  const port = Number(url.port);
  return {
    name,
    agent,
    async request(path) {
      const { response } = await handler.handle(
        new HttpRequest({ protocol: "http:", hostname, port, method: "GET", path, headers: {} })
      );
      await drain(response.body);
    },
    async post(path) {
      const { response } = await handler.handle(getItem(hostname, port, path));
      await drain(response.body);
    },
    startBurst: noop,
    endBurst: noop,
    async close() {
      handler.destroy();
      agent.destroy();
    },
  };
}

/** The raw http.request floor for passes 2 and 3 (same GetItem request, no Smithy shapes). */
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

const Before = await import(BEFORE_MODULE);
const After = await import("@sockeye/node-http-handler");

/** The three timeouts, 60 s each: armed as with TIMEOUTS, never reached while the heap pass holds requests. */
const LONG_TIMEOUTS = { connectionTimeout: 60_000, requestTimeout: 60_000, socketTimeout: 60_000 };

async function handlerClients(origin, timeouts) {
  const t = timeouts === "long" ? LONG_TIMEOUTS : timeouts ? { ...TIMEOUTS } : {};
  return [
    handlerClient("upstream", UpstreamHandler, origin, t),
    handlerClient("sockeye-before", Before.NodeHttpHandler, origin, { ...t, socketMonitor: "interval" }),
    handlerClient("sockeye-after", After.NodeHttpHandler, origin, { ...t, socketMonitor: "interval" }),
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
  cpu: [],
  heap: [],
  drain: [],
};
const server = await startLoadServer();
const origin = `http://127.0.0.1:${server.port}`;

try {
  // ---- pass 1: CPU per request ÷ smithy-floor -------------------------------------------------------------
  if (PASSES.includes("cpu")) {
    for (const timeouts of [false, true]) {
      for (const body of [128, 65536]) {
        for (const c of CELLS) {
          if (body === 65536 && c >= 10000) continue; // minutes per cell on this VM; 128 B covers c=10000
          // TIMEOUTS' connectionTimeout (5 s) runs from handle(): the tail of 10,000 requests queued at once on 50
          // sockets exceeds it whenever the drain takes longer than 5 s (the drain pass measures that cell instead).
          if (timeouts && c >= 10000) continue;
          const { clients: floors } = await createClients(origin, { timeouts, only: ["smithy-floor"] });
          const clients = [...floors, ...(await handlerClients(origin, timeouts))];
          const n = requestsPerBurst(c, c >= 10000 ? 1 : 0.5);
          const path = `/${body}`;
          if (c < 10000) for (const cl of clients) await runBurst(cl, { n: Math.min(n, 200), c, path });
          const ratios = Object.fromEntries(clients.slice(1).map((cl) => [cl.name, []]));
          const floorUs = [];
          const rounds = roundsFor(c);
          for (let r = 0; r < rounds; r++) {
            const order = clients.map((_, i) => clients[(i + r) % clients.length]);
            const cpu = {};
            for (const cl of order) cpu[cl.name] = (await runBurst(cl, { n, c, path })).cpuUsPerReq;
            floorUs.push(cpu["smithy-floor"]);
            for (const name in ratios) ratios[name].push(cpu[name] / cpu["smithy-floor"]);
          }
          for (const cl of clients) await cl.close();
          const cell = { c, body, timeouts: timeouts ? "on" : "off", n, rounds, floorUs: median(floorUs), ratios: {} };
          for (const name in ratios) {
            const xs = ratios[name];
            cell.ratios[name] = { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
          }
          results.cpu.push(cell);
          console.log(
            `cpu c=${c} ${body} B timeouts=${cell.timeouts} floor ${fmt(cell.floorUs, 1)} µs: ` +
              Object.entries(cell.ratios)
                .map(([k, v]) => `${k} ${fmt(v.median)} (${fmt(v.min)}–${fmt(v.max)})`)
                .join(", ")
          );
        }
      }
    }
  }

  // ---- pass 2: heap retained per queued request, 10,000 held on 50 sockets -----------------------------------
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

  // ---- pass 3: drain of a Promise.all of 10,000 GetItems on 50 sockets ----------------------------------------
  if (PASSES.includes("drain")) {
    for (let rep = 0; rep < 3; rep++) {
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
writeFileSync(`${outDir}bench-queue-latest.json`, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${outDir}bench-queue-latest.json`);
