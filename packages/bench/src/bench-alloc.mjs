// =============================================================================
// bench-alloc.mjs: bytes each client ALLOCATES per request (garbage included), and where, by V8's sampling heap
// profiler (`npm run bench:alloc`; not part of `npm run bench`).
//
// Why: CPU time on this VM needs hundreds of paired rounds to tell a few %, and the heap pass (bench.mjs) only sees
// what in-flight requests keep alive. Allocation is most of what drives the young-generation GC, and it barely
// depends on the machine's load: the same client allocates the same bytes per request within a fraction of a
// percent, so one run compares clients and shows which code allocates.
//
// How: each client runs alone in its own child process (its own JIT state; the load server is forked from the
// child, so its allocations are not counted). The child warms the client up (5 bursts), starts
// `HeapProfiler.startSampling` over an in-process inspector session with `includeObjectsCollectedByMajorGC` and
// `...MinorGC` (without them the profile holds only objects still alive at the end), runs REQUESTS requests in
// bursts (lib/burst.mjs) and stops. The profiler samples one allocation about every SAMPLING_INTERVAL bytes
// (Poisson), and each sample stands for that many bytes, so a site's total is an unbiased estimate with a
// relative error of about 1/sqrt(samples): 30,000 requests of ~14 KB at 1 KiB give ~400,000 samples.
// Allocations TurboFan removed by escape analysis are not made, so they are not counted: this is what the
// optimised code allocates. The profiler itself slows allocation; CPU time is not measured here.
// Repeats run the clients in rotated order; each figure is the median over repeats (min–max).
//
// Knobs: BENCH_ALLOC_CLIENTS (comma list, default all), BENCH_ALLOC_CELLS ("c:body:timeouts,...", default
// "1:128:on,50:128:on,50:65536:on,1000:128:on"), BENCH_ALLOC_REPEATS (default 2), BENCH_ALLOC_REQUESTS (default
// 30000), BENCH_ALLOC_INTERVAL (bytes, default 1024).
// Output: packages/bench/out/bench-alloc-latest.json and a table on stdout; report.mjs puts it in docs/perf.
// =============================================================================
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { requestsPerBurst, runBurst } from "./lib/burst.mjs";
import { CLIENT_NAMES, createClients } from "./lib/clients.mjs";
import { combineAllocationRuns, summarizeAllocation } from "./lib/alloc-summary.mjs";
import { describeRun } from "./lib/machine.mjs";

const SELF = fileURLToPath(import.meta.url);
const OUT_FILE = fileURLToPath(new URL("../out/bench-alloc-latest.json", import.meta.url));
const REQUESTS = Number(process.env.BENCH_ALLOC_REQUESTS ?? 30000);
const SAMPLING_INTERVAL = Number(process.env.BENCH_ALLOC_INTERVAL ?? 1024);
/** Sites kept per client and cell in the result file. */
const TOP_SITES = 25;

// -----------------------------------------------------------------------------
// Child: one client, one cell
// -----------------------------------------------------------------------------
if (process.argv[2] === "--child") {
  const [client, c, body, timeouts] = process.argv.slice(3);
  const { startLoadServer } = await import("./lib/server-control.mjs");
  const server = await startLoadServer();
  const { clients, skipped } = await createClients(server.origin, { timeouts: timeouts === "on", only: [client] });
  if (clients.length === 0) {
    await server.close();
    process.stdout.write(JSON.stringify({ skipped: skipped[client] ?? "unknown client" }));
    process.exit(0);
  }
  const cl = clients[0];
  const conc = Number(c);
  const n = requestsPerBurst(conc);
  const path = `/${body}`;
  for (let i = 0; i < 5; i++) await runBurst(cl, { n, c: conc, path });
  const session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: SAMPLING_INTERVAL,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  let requests = 0;
  while (requests < REQUESTS) {
    await runBurst(cl, { n, c: conc, path });
    requests += n;
  }
  const { profile } = await session.post("HeapProfiler.stopSampling");
  session.disconnect();
  await cl.close();
  await server.close();
  process.stdout.write(JSON.stringify({ requests, ...summarizeAllocation(profile, requests, TOP_SITES) }));
  process.exit(0);
}

// -----------------------------------------------------------------------------
// Parent: every client in every cell, repeats in rotated order
// -----------------------------------------------------------------------------
/** @returns {{ c: number, body: number, timeouts: "on" | "off" }[]} */
function parseCells(spec) {
  return spec.split(",").map((cell) => {
    const [c, body, timeouts] = cell.trim().split(":");
    if (!(Number(c) >= 1) || !(Number(body) >= 0) || (timeouts !== "on" && timeouts !== "off")) {
      throw new Error(`BENCH_ALLOC_CELLS: "${cell}" is not c:body:timeouts (e.g. 50:128:on)`);
    }
    return { c: Number(c), body: Number(body), timeouts };
  });
}

function runChild(client, cell) {
  const res = spawnSync(process.execPath, [SELF, "--child", client, String(cell.c), String(cell.body), cell.timeouts], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`${client} at c=${cell.c}: child exited with ${res.status}`);
  return JSON.parse(res.stdout);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const clients = process.env.BENCH_ALLOC_CLIENTS?.split(",").map((s) => s.trim()) ?? [...CLIENT_NAMES];
  const unknown = clients.filter((name) => !CLIENT_NAMES.includes(name));
  if (unknown.length) throw new Error(`BENCH_ALLOC_CLIENTS: unknown ${unknown.join(", ")}; known: ${CLIENT_NAMES}`);
  const cells = parseCells(process.env.BENCH_ALLOC_CELLS ?? "1:128:on,50:128:on,50:65536:on,1000:128:on");
  const repeats = Number(process.env.BENCH_ALLOC_REPEATS ?? 2);
  const meta = {
    ...describeRun("npm run bench:alloc"),
    requests: REQUESTS,
    samplingInterval: SAMPLING_INTERVAL,
    repeats,
  };
  const results = [];
  for (const cell of cells) {
    /** @type {Record<string, object[]>} */
    const byClient = {};
    const skipped = {};
    for (let r = 0; r < repeats; r++) {
      for (let i = 0; i < clients.length; i++) {
        const client = clients[(i + r) % clients.length];
        if (skipped[client]) continue;
        const run = runChild(client, cell);
        if (run.skipped) {
          skipped[client] = run.skipped;
          continue;
        }
        (byClient[client] ??= []).push(run);
      }
    }
    const rows = clients.filter((name) => byClient[name]).map((name) => combineAllocationRuns(name, byClient[name]));
    results.push({ cell, rows, skipped });
    for (const row of rows) {
      const b = row.bytesPerRequest;
      console.log(
        `c=${cell.c} ${cell.body} B timeouts ${cell.timeouts} ${row.client.padEnd(20)} ${Math.round(b.median)} B/request (${Math.round(b.min)}–${Math.round(b.max)})`
      );
    }
    for (const [name, why] of Object.entries(skipped)) console.log(`  ${name}: skipped (${why})`);
  }
  mkdirSync(fileURLToPath(new URL("../out/", import.meta.url)), { recursive: true });
  writeFileSync(OUT_FILE, `${JSON.stringify({ meta, results }, null, 1)}\n`);
  console.log(`wrote ${OUT_FILE}`);
}
