// =============================================================================
// bench-h2.mjs: the HTTP/2 cells of the benchmark (`npm run bench:h2`; also run at the end of `npm run bench`).
//
// Clients, all on ONE session to one origin (the load server allows 4096 concurrent streams):
//   floor     raw `node:http2`: one ClientHttp2Session, `session.request()` per request, body read to the end
//   upstream  `NodeHttp2Handler` of @smithy/node-http-handler 4.14.2
//   sockeye   `NodeHttp2Handler` of @sockeye/node-http-handler (maxSessionsPerOrigin: 1)
// Cells: concurrency {1, 50, 1000} x timeouts {off, on} ("on": requestTimeout 30 s and sessionTimeout 60 s on
// both handlers; upstream arms stream.setTimeout per stream, Sockeye its shared interval).
//
// Method (as bench.mjs): the server runs in a separate process (lib/h2-load-server.mjs); each cell has one warm-up
// burst per client, then ROUNDS rounds in which every client runs one burst, in an order rotated by one each round;
// client CPU µs per request (process.cpuUsage) is reported as the PAIRED ratio to the floor of the same round and
// to upstream of the same round: median (min-max). A separate pass counts native Timeouts created per request
// (async_hooks, lib/timer-counter.mjs) at c=50.
//
// Knobs: BENCH_ROUNDS (default 11), BENCH_SCALE (request counts, default 1), BENCH_CONCURRENCY="1,50,1000",
// BENCH_TIMEOUTS="off,on". Output: packages/bench/out/bench-h2-latest.json and a table on stdout.
// =============================================================================
import { fork } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { fileURLToPath } from "node:url";
import { NodeHttp2Handler as UpstreamNodeHttp2Handler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler } from "@sockeye/node-http-handler";
import { pairedRatios, summary } from "./lib/stats.mjs";
import { TimerCounter } from "./lib/timer-counter.mjs";

const list = (v, fallback) => (v ? v.split(",").map((s) => s.trim()) : fallback);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const CONCURRENCIES = list(process.env.BENCH_CONCURRENCY, ["1", "50", "1000"]).map(Number);
const TIMEOUT_MODES = list(process.env.BENCH_TIMEOUTS, ["off", "on"]).map((m) => m === "on");
const REQUESTS = { 1: 2000, 50: 6000, 1000: 10000 };
const log = (...a) => process.stderr.write(`${a.join(" ")}\n`);

const server = fork(fileURLToPath(new URL("./lib/h2-load-server.mjs", import.meta.url)), [], { stdio: "inherit" });
const port = await new Promise((resolve) => server.once("message", (m) => resolve(m.port)));
const origin = `http://127.0.0.1:${port}`;

function drain(stream) {
  return new Promise((resolve, reject) => {
    stream.on("data", () => {});
    stream.on("end", resolve);
    stream.on("error", reject);
  });
}

function makeFloor() {
  const session = http2.connect(origin);
  session.on("error", () => {});
  const headers = { ":path": "/", ":method": "GET" };
  return {
    name: "floor",
    one: () =>
      new Promise((resolve, reject) => {
        const stream = session.request(headers);
        stream.on("response", () => drain(stream).then(resolve, reject));
        stream.on("error", reject);
        stream.end();
      }),
    close: () => session.destroy(),
  };
}

function makeHandler(name, Handler, timeouts) {
  const options = timeouts ? { requestTimeout: 30_000, sessionTimeout: 60_000 } : {};
  if (name === "sockeye") options.maxSessionsPerOrigin = 1;
  const handler = new Handler(options);
  const request = () =>
    new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path: "/", headers: {} });
  return {
    name,
    one: async () => {
      const { response } = await handler.handle(request());
      await drain(response.body);
    },
    close: () => handler.destroy(),
  };
}

async function burst(client, concurrency, total) {
  let started = 0;
  const worker = async () => {
    while (started < total) {
      started++;
      await client.one();
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - t0) / 1000;
  return { cpuUsPerRequest: (cpu.user + cpu.system) / total, rps: total / seconds };
}

const results = {
  meta: { date: new Date().toISOString(), node: process.version, rounds: ROUNDS, scale: SCALE },
  cells: [],
};
try {
  for (const timeouts of TIMEOUT_MODES) {
    for (const c of CONCURRENCIES) {
      const total = Math.max(c, Math.round((REQUESTS[c] ?? 5000) * SCALE));
      const clients = [
        makeFloor(),
        makeHandler("upstream", UpstreamNodeHttp2Handler, timeouts),
        makeHandler("sockeye", NodeHttp2Handler, timeouts),
      ];
      for (const client of clients) await burst(client, c, Math.min(total, 1000)); // warm-up (session, JIT)
      const cpu = Object.fromEntries(clients.map((cl) => [cl.name, []]));
      const rps = Object.fromEntries(clients.map((cl) => [cl.name, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < clients.length; k++) {
          const client = clients[(round + k) % clients.length];
          const r = await burst(client, c, total);
          cpu[client.name].push(r.cpuUsPerRequest);
          rps[client.name].push(r.rps);
        }
      }
      const cell = {
        concurrency: c,
        timeouts,
        requestsPerBurst: total,
        cpuUsPerRequest: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, summary(v)])),
        rps: Object.fromEntries(Object.entries(rps).map(([k, v]) => [k, summary(v)])),
        ratios: {
          upstreamVsFloor: summary(pairedRatios(cpu.upstream, cpu.floor)),
          sockeyeVsFloor: summary(pairedRatios(cpu.sockeye, cpu.floor)),
          sockeyeVsUpstream: summary(pairedRatios(cpu.sockeye, cpu.upstream)),
        },
      };
      results.cells.push(cell);
      const f = (s) => `${s.median.toFixed(3)} (${s.min.toFixed(2)}-${s.max.toFixed(2)})`;
      log(
        `h2 c=${c} timeouts=${timeouts ? "on" : "off"}: CPU µs/req floor ${cell.cpuUsPerRequest.floor.median.toFixed(1)}, ` +
          `upstream ${cell.cpuUsPerRequest.upstream.median.toFixed(1)}, sockeye ${cell.cpuUsPerRequest.sockeye.median.toFixed(1)} | ` +
          `sockeye/floor ${f(cell.ratios.sockeyeVsFloor)}, upstream/floor ${f(cell.ratios.upstreamVsFloor)}, sockeye/upstream ${f(cell.ratios.sockeyeVsUpstream)}`
      );
      for (const client of clients) client.close();
    }
  }
  // Native Timeouts created per request (c=50, timeouts on), counted with async_hooks.
  results.timersPerRequest = {};
  for (const [name, Handler] of [
    ["upstream", UpstreamNodeHttp2Handler],
    ["sockeye", NodeHttp2Handler],
  ]) {
    const client = makeHandler(name, Handler, true);
    await burst(client, 50, 500);
    const counter = new TimerCounter().enable();
    await burst(client, 50, 2000);
    const counts = counter.disable();
    results.timersPerRequest[name] = { perRequest: counts.created / 2000, livePeak: counts.livePeak };
    client.close();
  }
  log(`h2 native Timeouts per request (c=50, timeouts on): ${JSON.stringify(results.timersPerRequest)}`);
} finally {
  server.send("close");
}
const outDir = fileURLToPath(new URL("../out/", import.meta.url));
mkdirSync(outDir, { recursive: true });
writeFileSync(`${outDir}bench-h2-latest.json`, JSON.stringify(results, null, 2));
log("wrote out/bench-h2-latest.json");
