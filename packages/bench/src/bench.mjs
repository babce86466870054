// =============================================================================
// bench.mjs: the whole benchmark suite (`npm run bench`).
//
// What it measures, per client (see lib/clients.mjs), for every cell of
//   concurrency {1, 50, 200, 1000, 10000} x body {128 B, 64 KiB} x timeouts {off, on}:
//   client CPU µs per request, requests/s, p50/p99 latency, event-loop utilisation
//   (lib/burst.mjs), plus, in dedicated passes, native Timeouts per request
//   (lib/timer-counter.mjs) and heap bytes per in-flight request (lib/heap-in-flight.mjs).
//
// How (the method is the point, read it before trusting any number):
//   * The load server runs in a SEPARATE process (lib/load-server.mjs).
//   * All clients live in THIS process, each with its own 50-socket keep-alive agent.
//   * Each cell: one warm-up burst per client (none at c=10000, see below), then 21 rounds
//     (7 at c=10000); in every round each client runs one short burst, in an order
//     ROTATED by one each round.
//     The unmodified control ("floor", raw http.request) is in every round, so
//     every number is reported as a PAIRED ratio to the floor of the same round:
//     median (min-max) over rounds. Absolute values are printed only next to ratios.
//   * No GC is forced before a measured window. Timer counting (async_hooks) and
//     the heap pass (gc() before the baseline only) are separate passes.
//
// Output: packages/bench/out/bench-<date>.json (+ out/bench-latest.json), then
// docs/perf/README.md and docs/perf/cpu-per-request.svg via report.mjs.
//
// Knobs (environment): BENCH_ROUNDS (default 21, 7 at c=10000), BENCH_SCALE (multiplies request
// counts, default 1), BENCH_CONCURRENCY="1,50", BENCH_BODIES="128", BENCH_CLIENTS=
// "floor,upstream", BENCH_TIMEOUTS="off,on", BENCH_NO_DOCS=1 (JSON only).
// =============================================================================

import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { requestsPerBurst, runBurst, warmupSize } from "./lib/burst.mjs";
import { CLIENT_NAMES, createClients, MAX_SOCKETS, TIMEOUTS } from "./lib/clients.mjs";
import { heapPerInFlightRequest } from "./lib/heap-in-flight.mjs";
import { describeRun } from "./lib/machine.mjs";
import { startLoadServer } from "./lib/server-control.mjs";
import { TimerCounter } from "./lib/timer-counter.mjs";
import { writeReport } from "./report.mjs";

// -----------------------------------------------------------------------------
// Configuration
// -----------------------------------------------------------------------------
const list = (v, fallback) => (v ? v.split(",").map((s) => s.trim()) : fallback);

/**
 * Rounds (pairs) per cell: 21 where a round is cheap, 7 at c=10000 (each of its bursts costs 1.5-3 s).
 * Why so many: on a shared 2-core VM one burst's paired ratio swings by +-20-50 % (GC debt and steal time
 * land on whichever burst is running). At c=1, two 30-round runs agreed within 0.01; two full 21-round runs
 * still differed by ~0.05 per cell median (up to ~0.19), so the report also gives each miss's interquartile
 * range. BENCH_ROUNDS overrides both.
 */
const roundsFor = (c) => Number(process.env.BENCH_ROUNDS ?? (c >= 10000 ? 7 : 21));
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const CONCURRENCIES = list(process.env.BENCH_CONCURRENCY, ["1", "50", "200", "1000", "10000"]).map(Number);
const BODIES = list(process.env.BENCH_BODIES, ["128", "65536"]).map(Number);
const TIMEOUT_MODES = list(process.env.BENCH_TIMEOUTS, ["off", "on"]).map((m) => m === "on");
const ONLY_CLIENTS = process.env.BENCH_CLIENTS ? list(process.env.BENCH_CLIENTS) : undefined;

/** Requests per measured burst at concurrency `c` (lib/burst.mjs, shared with bench-focus.mjs), times BENCH_SCALE. */
const burstSize = (c) => requestsPerBurst(c, SCALE);

/**
 * Counting pass: requests per client per (timeouts, concurrency), 128 B body. c=10000
 * is left out to save ~30 s; `npm run bench:timers` covers 10,000 in flight.
 */
const COUNT_REQUESTS = (c) => Math.max(c, 1000);
const COUNT_CONCURRENCIES = (cs) => cs.filter((c) => c <= 1000);
/** Heap pass: requests held in flight and repetitions (rotated). */
const HEAP_IN_FLIGHT = 2000;
const HEAP_REPS = 3;

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------
const pathFor = (body) => `/${body}`;
const rotate = (arr, k) => arr.map((_, i) => arr[(i + k) % arr.length]);
const log = (...args) => console.log(...args);
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");

// -----------------------------------------------------------------------------
// Main
// -----------------------------------------------------------------------------
const startedAt = performance.now();
const meta = describeRun("npm run bench");
meta.config = {
  rounds: Object.fromEntries(CONCURRENCIES.map((c) => [c, roundsFor(c)])),
  scale: SCALE,
  concurrencies: CONCURRENCIES,
  bodies: BODIES,
  timeoutModes: TIMEOUT_MODES.map((t) => (t ? "on" : "off")),
  timeouts: TIMEOUTS,
  maxSockets: MAX_SOCKETS,
  requestsPerBurst: Object.fromEntries(CONCURRENCIES.map((c) => [c, burstSize(c)])),
  warmupPerCell: Object.fromEntries(CONCURRENCIES.map((c) => [c, warmupSize(c, burstSize(c))])),
  countRequests: Object.fromEntries(COUNT_CONCURRENCIES(CONCURRENCIES).map((c) => [c, COUNT_REQUESTS(c)])),
  heapInFlight: HEAP_IN_FLIGHT,
  heapReps: HEAP_REPS,
};
log(`# sockeye bench: ${meta.cpuModel} x${meta.cores}, Node ${meta.node}`);

const server = await startLoadServer();
const results = { meta, clients: [], skipped: {}, cells: [], timerCounts: [], heap: [] };

try {
  for (const timeouts of TIMEOUT_MODES) {
    const { clients, skipped } = await createClients(server.origin, { timeouts, only: ONLY_CLIENTS });
    Object.assign(results.skipped, skipped);
    results.clients = CLIENT_NAMES.filter((n) => clients.some((c) => c.name === n));
    for (const [name, why] of Object.entries(skipped)) log(`! skipped ${name}: ${why}`);

    // -------------------------------------------------------------------------
    // Pass 1: paired, rotated bursts (CPU, throughput, latency, ELU)
    // -------------------------------------------------------------------------
    for (const c of CONCURRENCIES) {
      for (const body of BODIES) {
        const n = burstSize(c);
        const path = pathFor(body);
        const cell = { timeouts: timeouts ? "on" : "off", c, body, n, rounds: [] };
        const cellStart = performance.now();
        // Warm-up: JIT, sockets, timer lists. Not recorded.
        const warm = warmupSize(c, n);
        if (warm > 0) for (const client of clients) await runBurst(client, { n: warm, c, path });
        for (let r = 0; r < roundsFor(c); r++) {
          const order = rotate(clients, r);
          const round = { order: order.map((cl) => cl.name), results: {} };
          for (const client of order) round.results[client.name] = await runBurst(client, { n, c, path });
          cell.rounds.push(round);
        }
        cell.seconds = Math.round(performance.now() - cellStart) / 1000;
        results.cells.push(cell);
        const floorCpu = cell.rounds.map((rd) => rd.results.floor?.cpuUsPerReq);
        log(
          `timeouts=${cell.timeouts} c=${c} body=${body} n=${n} (${cell.seconds.toFixed(1)} s): ` +
            clients
              .map((cl) => {
                const ratios = cell.rounds.map((rd, i) => rd.results[cl.name].cpuUsPerReq / floorCpu[i]);
                ratios.sort((a, b) => a - b);
                return `${cl.name} ${fmt(ratios[ratios.length >> 1], 2)}x`;
              })
              .join(", ")
        );
      }
    }

    // -------------------------------------------------------------------------
    // Pass 2: native Timeouts per request (async_hooks; its own pass because hooks cost CPU)
    // -------------------------------------------------------------------------
    const countStart = performance.now();
    const counter = new TimerCounter();
    for (const c of COUNT_CONCURRENCIES(CONCURRENCIES)) {
      const n = COUNT_REQUESTS(c);
      const entry = { timeouts: timeouts ? "on" : "off", c, body: 128, n, results: {} };
      for (const client of clients) {
        const r = await runBurst(client, { n, c, path: pathFor(128), counter });
        entry.results[client.name] = { perReq: r.timersPerReq, created: r.timersCreated, livePeak: r.timersLivePeak };
      }
      results.timerCounts.push(entry);
      log(
        `timers timeouts=${entry.timeouts} c=${c}: ` +
          Object.entries(entry.results)
            .map(([k, v]) => `${k} ${fmt(v.perReq, 3)}/req peak ${v.livePeak}`)
            .join(", ")
      );
    }

    // -------------------------------------------------------------------------
    // Pass 3: heap bytes per in-flight request (gc() before the baseline only)
    // -------------------------------------------------------------------------
    log(`timer counting pass: ${((performance.now() - countStart) / 1000).toFixed(1)} s`);
    const heapStart = performance.now();
    const heap = { timeouts: timeouts ? "on" : "off", n: HEAP_IN_FLIGHT, reps: [] };
    for (let r = 0; r < HEAP_REPS; r++) {
      const order = rotate(clients, r);
      const rep = { order: order.map((cl) => cl.name), results: {} };
      for (const client of order)
        rep.results[client.name] = await heapPerInFlightRequest(client, server, HEAP_IN_FLIGHT);
      heap.reps.push(rep);
    }
    heap.seconds = Math.round(performance.now() - heapStart) / 1000;
    results.heap.push(heap);
    log(
      `heap timeouts=${heap.timeouts} (${heap.seconds.toFixed(1)} s): ` +
        clients
          .map((cl) => `${cl.name} ${heap.reps.map((rp) => fmt(rp.results[cl.name].bytesPerRequest, 0)).join("/")} B`)
          .join(", ")
    );

    // Facts worth reporting (e.g. whether getPoolStats() existed and how often it was read).
    results.notes ??= {};
    for (const client of clients) {
      const note = { ...client.notes };
      if (client.telemetry) note.telemetryReads = client.telemetry().reads;
      results.notes[`${client.name} (timeouts ${timeouts ? "on" : "off"})`] = note;
    }
    for (const client of clients) await client.close();
  }
} finally {
  await server.close();
}

// -----------------------------------------------------------------------------
// Output
// -----------------------------------------------------------------------------
results.meta.totalSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
const outDir = fileURLToPath(new URL("../out/", import.meta.url));
mkdirSync(outDir, { recursive: true });
const stamp = results.meta.date.replace(/[:.]/g, "-");
const json = JSON.stringify(results, null, 2);
writeFileSync(`${outDir}bench-${stamp}.json`, json);
writeFileSync(`${outDir}bench-latest.json`, json);
log(`wrote out/bench-${stamp}.json (${results.meta.totalSeconds} s)`);
if (!process.env.BENCH_NO_DOCS) {
  const written = writeReport(results, `bench-${stamp}.json`);
  for (const f of written) log(`wrote ${f}`);
}
