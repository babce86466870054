// =============================================================================
// bench-instr.mjs: instructions executed per request, counted by valgrind's callgrind (`npm run bench:instr`).
//
// Why: CPU time on this 2-core VM swings by ±20-50 % per burst, so a 3 % difference needs hundreds of paired rounds
// (bench-focus.mjs). The number of instructions a client executes for the same requests repeats to about 1 %
// between runs, so a handful of runs tells a few-% difference, and callgrind says where it goes. It is not time
// (branch misses and IPC are not in it, cache misses only as callgrind simulates them with BENCH_INSTR_CACHE_SIM),
// so it complements the CPU ratios, never replaces them.
//
// Method: each run is one client in its own child process, under `valgrind --tool=callgrind --instr-atstart=no`
// (uninstrumented until the window, so the warm-up runs several times faster), against the same load server as bench.mjs (another, uninstrumented
// process), c concurrent closed-loop workers through lib/clients.mjs:
//   1. warm-up: WARMUP requests (so TurboFan has optimised the hot path: after 20,000 requests at c=50 the window
//      below sees no optimisation or deoptimisation of the request path, checked with --trace-opt --trace-deopt on
//      three runs; one of them re-optimised a function of the once-a-tick code);
//   2. one pause, then WARMUP / 10 more requests (whatever the pause itself leaves behind is not in the window);
//   3. pause; the parent switches instrumentation on (`callgrind_control -i on`); REQUESTS requests; pause; off.
// A pause blocks the child's event loop (Atomics.wait, polling for a flag file the parent creates) after one
// fs.writeSync: no stream write, listener or timer that would leave new type feedback for the window to deoptimise
// on. No gc() anywhere: a forced full GC made V8 re-optimise half the hot path inside the next window.
// Counted: every thread of the child (main, GC helpers, compiler threads). Time-driven work (the handler's shared
// tick, the once-a-second sample and getPoolStats() read of sockeye-interval) runs tens of times more often per
// request under valgrind (each run prints its window's wall time; at full speed 3,000 requests at c=50 take about
// 0.5 s), and is included. Clients run in rotated order, REPEATS times; a pair's ratio is taken per repeat.
//
// Knobs: BENCH_INSTR_CLIENTS (default floor,upstream,sockeye-off,sockeye-interval; the first is the base of every
// ratio, plus sockeye-interval ÷ sockeye-off and ÷ upstream, and sockeye-undici ÷ smithy-undici, when present), BENCH_INSTR_CONCURRENCY (50),
// BENCH_INSTR_BODY (128), BENCH_INSTR_TIMEOUTS (on), BENCH_INSTR_REPEATS (3), BENCH_INSTR_REQUESTS (3000), BENCH_INSTR_WARMUP (20000),
// BENCH_INSTR_READER (on; off skips the clients' burst hooks, i.e. sockeye-interval's once-a-second getPoolStats()
// read, whose per-request share valgrind's slowdown inflates: the per-request cost alone), BENCH_INSTR_CACHE_SIM
// (off; on adds callgrind's simulated cache misses per request to the output, about twice as slow), BENCH_INSTR_KEEP
// (a directory: keep each run's callgrind file, with V8's perf map beside it to name JIT code, for callgrind_annotate).
// Validated for the node:http clients (runs agree within about 1 %). The undici clients' windows are not stable: in
// six runs each at the default cell, smithy-undici measured 107,650-152,347 instructions per request and
// sockeye-undici 110,364-146,859 (cause not investigated), so their results
// need their min-max read with them, and docs/perf does not use them.
// Needs valgrind (with callgrind_control) on PATH; about 50 s per run at the defaults.
// Output: packages/bench/out/bench-instr-latest.json (one result per configuration: a run replaces the result of the
// same configuration and keeps the others) and a table on stdout; report.mjs puts each result in docs/perf.
// =============================================================================
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { callgrindEvents, callgrindTotal, mergeInstrResult, summarizeInstr } from "./lib/instr-summary.mjs";
import { describeRun } from "./lib/machine.mjs";

const SELF = fileURLToPath(import.meta.url);
const OUT_DIR = `${dirname(SELF)}/../out/`;

function intEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** An "on" / "off" knob as a boolean (`fallback` when unset); anything else is an error naming the knob. */
function onOffEnv(name, fallback) {
  const raw = process.env[name] || (fallback ? "on" : "off");
  if (raw !== "on" && raw !== "off") throw new Error(`${name} must be "on" or "off", got ${JSON.stringify(raw)}`);
  return raw === "on";
}

// ---- child: one client, warm-up, then the measured window between two pauses ---------------------------------
async function child() {
  const { createClients } = await import("./lib/clients.mjs");
  const { startLoadServer } = await import("./lib/server-control.mjs");
  const name = process.env.INSTR_CLIENT;
  const c = Number(process.env.INSTR_C);
  const path = `/${process.env.INSTR_BODY}`;
  const warmup = Number(process.env.INSTR_WARMUP);
  const requests = Number(process.env.INSTR_REQUESTS);
  const flag = process.env.INSTR_FLAG;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const pause = (tag) => {
    writeSync(1, `${tag}\n`);
    // The parent answers within seconds; if it is gone, do not stay blocked under valgrind for ever.
    const giveUpAt = Date.now() + 600_000;
    while (!existsSync(flag + tag)) {
      if (Date.now() > giveUpAt) throw new Error(`bench-instr child: no answer to ${tag} from the parent in 10 min`);
      Atomics.wait(sleeper, 0, 0, 20);
    }
  };
  const server = await startLoadServer();
  const { clients } = await createClients(server.origin, {
    timeouts: process.env.INSTR_TIMEOUTS === "on",
    only: [name],
  });
  const client = clients[0];
  if (!client) throw new Error(`client ${name} is not available`);
  // Not lib/burst.mjs's runBurst: its per-request clock reads and latency histogram would be counted in the window.
  const run = async (n) => {
    let issued = 0;
    const worker = async () => {
      while (issued < n) {
        issued++;
        await client.request(path);
      }
    };
    await Promise.all(Array.from({ length: Math.min(c, n) }, worker));
  };
  const reader = process.env.INSTR_READER === "on";
  if (reader) client.startBurst();
  await run(warmup);
  pause("WARM");
  await run(Math.ceil(warmup / 10));
  pause("READY");
  await run(requests);
  pause("DONE");
  if (reader) client.endBurst();
  await client.close();
  await server.close();
  process.exit(0);
}

// ---- parent: one callgrind run per (client, repeat) -------------------------------------------------------------
function runOne(client, cfg) {
  const keep = process.env.BENCH_INSTR_KEEP;
  if (keep) mkdirSync(keep, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), "sockeye-instr-"));
  const flag = join(dir, "flag-");
  const out = join(dir, "callgrind.out");
  return new Promise((resolve, reject) => {
    const proc = spawn(
      "valgrind",
      [
        "--tool=callgrind",
        "--instr-atstart=no",
        `--cache-sim=${cfg.cacheSim ? "yes" : "no"}`,
        `--callgrind-out-file=${out}`,
        process.execPath,
        // With BENCH_INSTR_KEEP, V8 writes /tmp/perf-<pid>.map so JIT code in the kept file can be named.
        ...(keep ? ["--perf-basic-prof"] : []),
        SELF,
        "--child",
      ],
      {
        env: {
          ...process.env,
          INSTR_CLIENT: client,
          INSTR_C: String(cfg.c),
          INSTR_BODY: String(cfg.body),
          INSTR_TIMEOUTS: cfg.timeouts ? "on" : "off",
          INSTR_READER: cfg.reader ? "on" : "off",
          INSTR_WARMUP: String(cfg.warmup),
          INSTR_REQUESTS: String(cfg.requests),
          INSTR_FLAG: flag,
        },
        stdio: ["ignore", "pipe", "pipe"],
      }
    );
    let stderr = "";
    let pending = "";
    let windowStart = 0;
    let windowMs = 0;
    const toggle = (on) => {
      const r = spawnSync("callgrind_control", ["-i", on ? "on" : "off", String(proc.pid)], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`callgrind_control -i ${on ? "on" : "off"} failed: ${r.stderr || r.error}`);
    };
    proc.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    proc.stdout.on("data", (d) => {
      pending += d;
      let nl = pending.indexOf("\n");
      while (nl !== -1) {
        const tag = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        nl = pending.indexOf("\n");
        try {
          if (tag === "READY") {
            toggle(true);
            windowStart = performance.now();
          }
          if (tag === "DONE") {
            windowMs = performance.now() - windowStart;
            toggle(false);
          }
          if (tag === "WARM" || tag === "READY" || tag === "DONE") writeFileSync(flag + tag, "");
        } catch (error) {
          proc.kill("SIGKILL");
          reject(error);
        }
      }
    });
    proc.on("error", reject);
    proc.on("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`${client}: child exited with ${code}\n${stderr}`);
        const text = readFileSync(out, "utf8");
        resolve({ instructions: callgrindTotal(text), events: callgrindEvents(text), windowMs });
      } catch (error) {
        reject(error);
      } finally {
        if (keep) {
          const name = `${client}-${Date.now()}`;
          if (existsSync(out)) copyFileSync(out, join(keep, `${name}.callgrind`));
          const map = `/tmp/perf-${proc.pid}.map`;
          if (existsSync(map)) renameSync(map, join(keep, `${name}.callgrind.map`));
        }
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

async function parent() {
  const probe = spawnSync("valgrind", ["--version"], { encoding: "utf8" });
  const control = spawnSync("callgrind_control", ["--version"], { encoding: "utf8" });
  if (probe.status !== 0 || control.error) {
    console.error("bench:instr needs valgrind (with callgrind_control) on PATH, e.g. `apt-get install valgrind`.");
    process.exit(1);
  }
  const clients = (process.env.BENCH_INSTR_CLIENTS || "floor,upstream,sockeye-off,sockeye-interval")
    .split(",")
    .map((s) => s.trim());
  const { CLIENT_NAMES } = await import("./lib/clients.mjs");
  const unknown = clients.filter((n) => !CLIENT_NAMES.includes(n));
  if (unknown.length > 0 || clients.length === 0) {
    throw new Error(`BENCH_INSTR_CLIENTS: unknown client(s) ${unknown.join(", ")}; known: ${CLIENT_NAMES.join(", ")}`);
  }
  const cfg = {
    cacheSim: onOffEnv("BENCH_INSTR_CACHE_SIM", false),
    reader: onOffEnv("BENCH_INSTR_READER", true),
    c: intEnv("BENCH_INSTR_CONCURRENCY", 50),
    body: intEnv("BENCH_INSTR_BODY", 128),
    timeouts: onOffEnv("BENCH_INSTR_TIMEOUTS", true),
    repeats: intEnv("BENCH_INSTR_REPEATS", 3),
    requests: intEnv("BENCH_INSTR_REQUESTS", 3000),
    warmup: intEnv("BENCH_INSTR_WARMUP", 20000),
  };
  console.log(
    `bench:instr: ${clients.join(", ")} at c=${cfg.c}, ${cfg.body} B, timeouts ${cfg.timeouts ? "on" : "off"}, burst hooks ${cfg.reader ? "on" : "off"}; ${cfg.repeats} repeats × ${cfg.requests} requests after ${cfg.warmup} warm-up`
  );
  const runs = [];
  for (let repeat = 1; repeat <= cfg.repeats; repeat++) {
    // Rotated order: each client goes first in turn.
    const order = clients.map((_, i) => clients[(i + repeat - 1) % clients.length]);
    for (const client of order) {
      const { instructions, events, windowMs } = await runOne(client, cfg);
      runs.push({ client, repeat, instructions, requests: cfg.requests, windowMs, events });
      const misses = cfg.cacheSim
        ? `, L1 data misses ${((events.D1mr + events.D1mw) / cfg.requests).toFixed(0)}, last-level misses ${((events.DLmr + events.DLmw + events.ILmr) / cfg.requests).toFixed(1)}`
        : "";
      console.log(
        `  repeat ${repeat} ${client.padEnd(20)} ${(instructions / cfg.requests).toFixed(0)} instructions/request${misses} (window ${(windowMs / 1000).toFixed(1)} s)`
      );
    }
  }
  const pairs = clients.slice(1).map((name) => [name, clients[0]]);
  // The relative targets, when their clients are in the run: telemetry on vs off, below upstream, and the
  // undici handler at or below @smithy/undici-http-handler.
  for (const [subject, base] of [
    ["sockeye-interval", "sockeye-off"],
    ["sockeye-interval", "upstream"],
    ["sockeye-undici", "smithy-undici"],
  ]) {
    if (clients.includes(subject) && clients.includes(base) && clients[0] !== base) pairs.push([subject, base]);
  }
  const summary = summarizeInstr(runs, pairs);
  const result = { meta: { ...describeRun("npm run bench:instr"), ...cfg, clients }, runs, summary };
  mkdirSync(OUT_DIR, { recursive: true });
  const file = `${OUT_DIR}bench-instr-latest.json`;
  const existing = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
  writeFileSync(file, `${JSON.stringify(mergeInstrResult(existing, result), null, 2)}\n`);
  for (const [name, s] of Object.entries(summary.clients)) {
    console.log(
      `${name.padEnd(20)} ${s.perRequest.median.toFixed(0)} (${s.perRequest.min.toFixed(0)}–${s.perRequest.max.toFixed(0)}) instructions/request`
    );
  }
  for (const p of summary.pairs) {
    console.log(
      `${p.subject} ÷ ${p.base}: ${p.ratio.median.toFixed(3)} (${p.ratio.min.toFixed(3)}–${p.ratio.max.toFixed(3)})`
    );
  }
  console.log(
    "wrote out/bench-instr-latest.json (a run of another configuration there is kept; the report shows each)"
  );
}

if (process.argv.includes("--child")) {
  await child();
} else {
  await parent();
}
