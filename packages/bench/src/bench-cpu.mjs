// =============================================================================
// bench-cpu.mjs: CPU per request of each Sockeye handler against its peers, as paired checks
// (`npm run bench:focus`), or the instructions each executes per request under callgrind (`npm run bench:instr`).
//
//   node src/bench-cpu.mjs [--instr] [--quick] [check ...]
//
// A check is one question at one cell, named `<target>-c<concurrency>[-64k][-on]` (TARGETS below; "-64k" a 64 KiB
// body instead of 128 B, "-on" with timeouts, lib/clients.mjs). Any such name can be given; "prefix*" picks the
// default checks that start with it; no name runs the default checks (DEFAULT_CHECKS, about an hour on 2 cores).
// `--quick` runs 2 cycles per check (1 repeat of 1,000 requests with --instr): proof that it runs, not a result.
//
// CPU time (default). One burst's paired ratio swings by tens of % on a shared VM, and two instances of one client
// can differ by a few % for as long as they live, so a check runs in cycles: each cycle creates three clients
// afresh (the subject, the baseline and a SECOND instance of the baseline, the A/A control), warms each up, then runs
// one cycle of a Williams design (lib/run-order.mjs). A round's ratio is the subject's client CPU (process.cpuUsage;
// the server is another process) over the mean of the two baseline instances'; a cycle's value is the median of its
// rounds; the result is the median over cycles with its distribution-free 95 % interval (lib/focus-summary.mjs).
// 50 cycles, 20 at c >= 1000, 10 at c = 10000 (BENCH_CYCLES overrides). Verdict: "met" when the whole interval is
// within the limit, "missed" when all of it is past, "unresolved" otherwise, "measured" without a limit; "void" when
// the A/A interval does not hold 1 (about 1 check in 20 by chance alone: run it again).
//
// Instructions (--instr): they repeat to about 1 % between runs, so a few runs tell a few-% difference (they are
// not time: no branch or cache misses). Each run is one client in its own process under `valgrind --tool=callgrind
// --instr-atstart=no`, with its own load server: BENCH_INSTR_WARMUP requests (20,000, for TurboFan), a pause, a tenth
// as many more, a pause, then the counted window of BENCH_INSTR_REQUESTS (3,000), switched on and off by the parent
// with callgrind_control. A pause blocks the event loop (Atomics.wait on a flag file), leaving no new type feedback
// for the window to deoptimise on; no gc() anywhere. Time-driven work (the shared tick, the once-a-second
// getPoolStats() read) runs more often per request under valgrind; BENCH_INSTR_READER=off leaves the reader out.
// Subject and baseline alternate, BENCH_INSTR_REPEATS times (3); ratios are paired by repeat.
// BENCH_INSTR_KEEP=<dir> keeps each callgrind file (with V8's perf map) for callgrind_annotate. The undici clients'
// windows vary by ±20 % under callgrind: read their min-max.
//
// Output: a markdown table on stdout, and packages/bench/out/bench-cpu-latest.json (a run replaces the results of
// the checks it ran, in its mode, and keeps the others, each with its date and raw series).
// =============================================================================
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { requestsPerBurst, runBurst, warmupSize } from "./lib/burst.mjs";
import { createClients } from "./lib/clients.mjs";
import { CONTROL_SUFFIX, summarizeCheck } from "./lib/focus-summary.mjs";
import { describeRun } from "./lib/machine.mjs";
import { roundOrder, williamsRows } from "./lib/run-order.mjs";
import { startLoadServer } from "./lib/server-control.mjs";
import { median, pairedRatios, summary } from "./lib/stats.mjs";

/** The questions: `subject` ÷ `base` CPU per request must be `op` `limit` (no limit: measured only). */
const TARGETS = Object.freeze({
  // NodeHttpHandler within 10 % of what any handler behind the Smithy interface pays at least.
  shaped: { subject: "sockeye-interval", base: "smithy-floor", op: "<=", limit: 1.1 },
  upstream: { subject: "sockeye-interval", base: "upstream", op: "<", limit: 1 },
  telemetry: { subject: "sockeye-interval", base: "sockeye-off", op: "<=", limit: 1.03 },
  floor: { subject: "sockeye-interval", base: "floor" },
  // This build against another (BENCH_BEFORE_MODULE): what a change costs per request.
  before: { subject: "sockeye-interval", base: "sockeye-before", op: "<=", limit: 1.02 },
  undici: { subject: "sockeye-undici", base: "smithy-undici", op: "<=", limit: 1 },
  "undici-raw": { subject: "sockeye-undici", base: "undici", op: "<=", limit: 1.05 },
  h2: { subject: "sockeye-h2", base: "upstream-h2", op: "<", limit: 1 },
  "h2-raw": { subject: "sockeye-h2", base: "http2" },
  "h2-upstream-raw": { subject: "upstream-h2", base: "http2" },
});

/** What `npm run bench:focus` runs with no check named. */
const DEFAULT_CHECKS = Object.freeze(
  [
    ...["c1", "c50", "c50-on", "c50-64k", "c1000", "c10000"].map((cell) => `shaped-${cell}`),
    ...["c1", "c50", "c1000", "c10000"].map((cell) => `upstream-${cell}`),
    "telemetry-c50-on",
    "telemetry-c1000-on",
    ...["c1", "c50-on", "c50-64k-on", "c200-64k-on"].map((cell) => `undici-${cell}`),
    ...["c1", "c50", "c1000", "c10000"].map((cell) => `undici-raw-${cell}`),
    ...["c1", "c1-on", "c50", "c50-on"].flatMap((cell) => [`h2-raw-${cell}`, `h2-upstream-raw-${cell}`]),
    "h2-c50-on",
  ].map(parseCheck)
);

/** A check from its name, or an error naming the known targets. */
function parseCheck(id) {
  const m = /^([a-z0-9-]+?)-c(\d+)(-64k)?(-on)?$/.exec(id);
  if (!m || !TARGETS[m[1]]) throw new Error(`unknown check ${JSON.stringify(id)}; targets: ${Object.keys(TARGETS)}`);
  return Object.freeze({ id, ...TARGETS[m[1]], c: Number(m[2]), body: m[3] ? 65536 : 128, timeouts: Boolean(m[4]) });
}

const args = process.argv.slice(2);
const INSTR = args.includes("--instr");
const QUICK = args.includes("--quick");
const OUT_FILE = fileURLToPath(new URL("../out/bench-cpu-latest.json", import.meta.url));
const f3 = (x) => x.toFixed(3);
const intEnv = (name, fallback) => Number(process.env[name] || fallback);

// ---- CPU time ----------------------------------------------------------------------------------------------------
const cyclesFor = (c) => (QUICK ? 2 : intEnv("BENCH_CYCLES", c >= 10000 ? 10 : c >= 1000 ? 20 : 50));

/** Runs one check in cycles of fresh clients (the header says why) and summarises it. */
async function runCpuCheck(server, check) {
  const n = requestsPerBurst(check.c);
  const path = `/${check.body}`;
  const cpu = {};
  let roundsPerCycle = 0;
  const cycles = cyclesFor(check.c);
  for (let k = 0; k < cycles; k++) {
    const options = { timeouts: check.timeouts, only: [check.subject, check.base] };
    const { clients, skipped } = await createClients(server, options);
    if (clients.length < 2) {
      for (const client of clients) await client.close();
      return { skipped: Object.values(skipped).join("; ") };
    }
    const twin = (await createClients(server, { ...options, only: [check.base] })).clients[0];
    twin.name = check.base + CONTROL_SUFFIX;
    const all = [...clients, twin];
    roundsPerCycle = williamsRows(all.length).length;
    try {
      // Fresh clients at c=10000 warm up at c=1000 (a warm-up burst of 10,000 would double the check's time).
      const warm = check.c >= 10000 ? { n: 2000, c: 1000 } : { n: warmupSize(check.c, n), c: check.c };
      for (const client of all) await runBurst(client, { ...warm, path });
      for (let r = 0; r < roundsPerCycle; r++) {
        for (const client of roundOrder(all, r)) {
          (cpu[client.name] ??= []).push((await runBurst(client, { n, c: check.c, path })).cpuUsPerReq);
        }
      }
    } finally {
      for (const client of all) await client.close();
    }
  }
  return { n, cycles, roundsPerCycle, cpuUsPerReq: cpu, ...summarizeCheck(check, cpu, roundsPerCycle) };
}

// ---- instructions ------------------------------------------------------------------------------------------------
/** Child process under callgrind: one client, warm-up, then the counted window between two pauses. */
async function instrChild() {
  const [name, c, body, timeouts, warmup, requests, reader, flag] = JSON.parse(process.env.BENCH_INSTR_CHILD);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  const pause = (tag) => {
    writeSync(1, `${tag}\n`);
    const giveUpAt = Date.now() + 600_000;
    while (!existsSync(flag + tag)) {
      if (Date.now() > giveUpAt) throw new Error(`bench:instr child: no answer to ${tag} from the parent in 10 min`);
      Atomics.wait(sleeper, 0, 0, 20);
    }
  };
  const server = await startLoadServer();
  const client = (await createClients(server, { timeouts, only: [name] })).clients[0];
  if (!client) throw new Error(`client ${name} is not available`);
  // Not lib/burst.mjs: its clock reads and latency histogram would be counted in the window.
  const run = async (total) => {
    let issued = 0;
    const worker = async () => {
      while (issued++ < total) await client.request(`/${body}`);
    };
    await Promise.all(Array.from({ length: Math.min(c, total) }, worker));
  };
  if (reader) client.startBurst();
  await run(warmup);
  pause("WARM");
  await run(Math.ceil(warmup / 10));
  pause("READY");
  await run(requests);
  pause("DONE");
  client.endBurst();
  await client.close();
  await server.close();
  process.exit(0);
}

/** One callgrind run of one client: instructions per request in the window. */
function instrRun(name, check, cfg) {
  const dir = mkdtempSync(join(tmpdir(), "sockeye-instr-"));
  const out = join(dir, "callgrind.out");
  const flag = join(dir, "flag-");
  const childArgs = [name, check.c, check.body, check.timeouts, cfg.warmup, cfg.requests, cfg.reader, flag];
  const node = [process.execPath, ...(cfg.keep ? ["--perf-basic-prof"] : []), fileURLToPath(import.meta.url)];
  const proc = spawn("valgrind", ["--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${out}`, ...node], {
    env: { ...process.env, BENCH_INSTR_CHILD: JSON.stringify(childArgs) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const toggle = (on) => {
    const r = spawnSync("callgrind_control", ["-i", on, String(proc.pid)], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`callgrind_control -i ${on} failed: ${r.stderr || r.error}`);
  };
  return new Promise((resolve, reject) => {
    let stderr = "";
    let pending = "";
    proc.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    proc.stdout.on("data", (d) => {
      pending += d;
      const lines = pending.split("\n");
      pending = lines.pop();
      try {
        for (const tag of lines.map((l) => l.trim())) {
          if (tag === "READY") toggle("on");
          if (tag === "DONE") toggle("off");
          if (tag === "WARM" || tag === "READY" || tag === "DONE") writeFileSync(flag + tag, "");
        }
      } catch (error) {
        proc.kill("SIGKILL");
        reject(error);
      }
    });
    proc.on("error", reject);
    proc.on("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`${name}: child exited with ${code}\n${stderr}`);
        const total = /^totals:\s+(\d+)/m.exec(readFileSync(out, "utf8"));
        if (!total) throw new Error(`${name}: callgrind output has no 'totals:' line`);
        resolve(Number(total[1]) / cfg.requests);
      } catch (error) {
        reject(error);
      } finally {
        if (cfg.keep && existsSync(out)) {
          mkdirSync(cfg.keep, { recursive: true });
          const kept = join(cfg.keep, `${name}-${Date.now()}.callgrind`);
          copyFileSync(out, kept);
          if (existsSync(`/tmp/perf-${proc.pid}.map`)) copyFileSync(`/tmp/perf-${proc.pid}.map`, `${kept}.map`);
        }
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** Subject and baseline in alternating order, `repeats` times; the ratio paired by repeat. */
async function runInstrCheck(check) {
  const cfg = {
    repeats: QUICK ? 1 : intEnv("BENCH_INSTR_REPEATS", 3),
    requests: QUICK ? 1000 : intEnv("BENCH_INSTR_REQUESTS", 3000),
    warmup: QUICK ? 2000 : intEnv("BENCH_INSTR_WARMUP", 20000),
    reader: process.env.BENCH_INSTR_READER !== "off",
    keep: process.env.BENCH_INSTR_KEEP,
  };
  const perRequest = { [check.subject]: [], [check.base]: [] };
  for (let repeat = 0; repeat < cfg.repeats; repeat++) {
    const order = repeat % 2 ? [check.base, check.subject] : [check.subject, check.base];
    for (const name of order) perRequest[name].push(await instrRun(name, check, cfg));
  }
  const ratio = summary(pairedRatios(perRequest[check.subject], perRequest[check.base]));
  return { ...cfg, instructionsPerReq: perRequest, ratio };
}

// ---- main --------------------------------------------------------------------------------------------------------
function describeResult(r) {
  const cell = `c=${r.c}, ${r.body} B, timeouts ${r.timeouts ? "on" : "off"}`;
  if (r.skipped) return `| ${r.id} | ${cell} | skipped: ${r.skipped} | | |`;
  if (r.mode === "instr") {
    const k = (name) => `${(median(r.instructionsPerReq[name]) / 1000).toFixed(1)}k`;
    const spread = `${f3(r.ratio.median)} (${f3(r.ratio.min)}–${f3(r.ratio.max)})`;
    return `| ${r.id} | ${cell} | ${r.subject} ÷ ${r.base}: ${k(r.subject)} ÷ ${k(r.base)} = ${spread} | ${r.repeats} repeats | |`;
  }
  const ratio = `${f3(r.ratio.median)} [${f3(r.ratio.low)}–${f3(r.ratio.high)}]`;
  const aa = `${f3(r.control.median)} [${f3(r.control.low)}–${f3(r.control.high)}]`;
  const limit = r.limit === undefined ? "" : ` (${r.op} ${r.limit})`;
  return `| ${r.id} | ${cell} | ${r.subject} ÷ ${r.base}${limit}: ${ratio} | A/A ${aa}, ${r.cycles} cycles | ${r.verdict} |`;
}

if (process.env.BENCH_INSTR_CHILD) {
  await instrChild();
} else {
  const names = args.filter((a) => !a.startsWith("--"));
  const checks = names.length === 0 ? DEFAULT_CHECKS : [];
  for (const name of names) {
    if (!name.endsWith("*")) checks.push(parseCheck(name));
    else checks.push(...DEFAULT_CHECKS.filter((c) => c.id.startsWith(name.slice(0, -1))));
  }
  if (INSTR && spawnSync("callgrind_control", ["--version"]).error) {
    throw new Error("--instr needs valgrind (with callgrind_control) on PATH, e.g. `apt-get install valgrind`");
  }
  const mode = INSTR ? "instr" : "cpu";
  const meta = describeRun(`node src/bench-cpu.mjs ${args.join(" ")}`.trim());
  const server = INSTR ? undefined : await startLoadServer();
  const fresh = [];
  console.log("| check | cell | ratio | spread | verdict |\n|---|---|---|---|---|");
  try {
    for (const check of checks) {
      const started = performance.now();
      const measured = INSTR ? await runInstrCheck(check) : await runCpuCheck(server, check);
      const seconds = Math.round(performance.now() - started) / 1000;
      const result = { ...check, mode, ...measured, quick: QUICK, seconds, date: new Date().toISOString() };
      fresh.push(result);
      console.log(describeResult(result));
    }
  } finally {
    await server?.close();
  }
  const previous = existsSync(OUT_FILE) ? JSON.parse(readFileSync(OUT_FILE, "utf8")).results : [];
  const replaced = (r) => fresh.some((f) => f.id === r.id && f.mode === r.mode);
  mkdirSync(fileURLToPath(new URL("../out/", import.meta.url)), { recursive: true });
  writeFileSync(
    OUT_FILE,
    `${JSON.stringify({ meta, results: [...previous.filter((r) => !replaced(r)), ...fresh] }, null, 1)}\n`
  );
  console.log(`wrote ${OUT_FILE}`);
}
