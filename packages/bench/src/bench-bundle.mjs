// =============================================================================
// bench-bundle.mjs: the weight of each handler beside upstream's (`npm run bench:bundle`).
//
// Question: what does choosing a Sockeye handler cost in shipped code and in cold start, against the upstream handler
// it replaces?
//
// Bytes: each handler's entry (`export { NodeHttpHandler } from "…"`) bundled by esbuild the same way for Sockeye and
// upstream (lib/handler-apps.mjs): minified, tree-shaken, ESM for Node, with the handler's own packages inside
// (for Sockeye the core `@sockeye/pool-monitor` included) and every other package an import (the Smithy packages and
// undici, which the SDK or the app load anyway). Minified bytes are the bundle's length; gzipped bytes, that bundle
// through zlib at level 9. Exact and deterministic: one build per handler.
//
// Cold load: `require()` of each handler package in a fresh `node` process, Node's built-ins and the package's
// dependencies outside its own packages loaded first (resolved as the package resolves them), so only the handler's
// own code is resolved, compiled and run. The CPU time of the process over that `require()` (`process.cpuUsage()`:
// every thread, so the compiler's and the GC's included), and its wall time. Each repetition loads the Sockeye package
// and its upstream peer in adjacent processes, in alternating order; a pair's ratio cancels most of the load other
// processes put on the machine. Median per package, median and quartiles of the paired ratios.
//
// Output: out/bundle-latest.json and docs/perf/bundle.md.
// =============================================================================

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { bundleHandler, HANDLERS } from "./lib/handler-apps.mjs";
import { describeRun } from "./lib/machine.mjs";
import { median, pairedRatios, quantile } from "./lib/stats.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const REPO = join(HERE, "..", "..", "..");
const OUT = join(HERE, "..", "out");
const REPS = Number(process.env.BENCH_REPS ?? 21);
/** Packages whose cold `require()` is timed: [upstream, Sockeye] pairs. */
const PAIRS = [
  ["@smithy/node-http-handler", "@sockeye/node-http-handler"],
  ["@smithy/undici-http-handler", "@sockeye/undici-http-handler"],
];

/** The child's script: preload, then time `require(name)`; prints `cpuMs wallMs`. */
const COLD_REQUIRE = `
const { createRequire } = require("node:module");
for (const m of ["http", "https", "http2", "stream", "net", "tls", "zlib", "crypto", "events", "url", "util"]) {
  require("node:" + m);
}
const name = process.argv[1];
const from = createRequire(require.resolve(name));
const own = name.startsWith("@sockeye/") ? (d) => d.startsWith("@sockeye/") : () => false;
for (const dep of Object.keys(from(name + "/package.json").dependencies ?? {})) if (!own(dep)) from(dep);
const c = process.cpuUsage();
const t = process.hrtime.bigint();
require(name);
const wall = Number(process.hrtime.bigint() - t) / 1e6;
const { user, system } = process.cpuUsage(c);
process.stdout.write((user + system) / 1e3 + " " + wall);
`;

/** CPU and wall milliseconds of `require(name)` in a fresh process. */
function coldRequire(name) {
  const out = execFileSync(process.execPath, ["-e", COLD_REQUIRE, name], { cwd: REPO, encoding: "utf8" });
  const [cpuMs, wallMs] = out.split(" ").map(Number);
  return { cpuMs, wallMs };
}

async function main() {
  const startedAt = performance.now();
  const weights = [];
  for (const handler of HANDLERS) {
    const code = await bundleHandler(REPO, handler);
    const bytes = Buffer.byteLength(code);
    weights.push({
      id: handler.id,
      package: /from "([^"]+)"/.exec(handler.source)[1],
      peer: handler.peer,
      label: handler.label,
      bytes,
      gzip: gzipSync(code, { level: 9 }).length,
    });
  }

  const cpu = {};
  const wall = {};
  for (const name of PAIRS.flat()) [cpu[name], wall[name]] = [[], []];
  for (let rep = 0; rep < REPS; rep++) {
    for (const pair of PAIRS) {
      for (const name of rep % 2 === 0 ? pair : [...pair].reverse()) {
        const t = coldRequire(name);
        cpu[name].push(t.cpuMs);
        wall[name].push(t.wallMs);
      }
    }
  }
  const load = PAIRS.map(([upstream, sockeye]) => {
    const ratios = pairedRatios(cpu[sockeye], cpu[upstream]);
    return {
      upstream,
      sockeye,
      cpuMs: { [upstream]: median(cpu[upstream]), [sockeye]: median(cpu[sockeye]) },
      wallMs: { [upstream]: median(wall[upstream]), [sockeye]: median(wall[sockeye]) },
      cpuRatio: { median: median(ratios), q1: quantile(ratios, 0.25), q3: quantile(ratios, 0.75) },
    };
  });

  const result = {
    run: describeRun("npm run bench:bundle"),
    wallSeconds: (performance.now() - startedAt) / 1000,
    reps: REPS,
    weights,
    load,
    samples: { cpu, wall },
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "bundle-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(REPO, "docs", "perf", "bundle.md"), render(result));
  process.stdout.write(render(result));
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const times = (x) => `${x.toFixed(2)}×`;

function render({ run, wallSeconds, reps, weights, load }) {
  const byId = new Map(weights.map((w) => [w.id, w]));
  const lines = [
    "# Weight: bytes and cold load per handler",
    "",
    "<!-- GENERATED by packages/bench/src/bench-bundle.mjs from packages/bench/out/bundle-latest.json. Do not edit by hand; re-run `npm run bench:bundle`. -->",
    "",
    `Machine: ${run.cpuModel}, ${run.cores} cores · Node ${run.node} · ${run.date} · ${wallSeconds.toFixed(1)} s.`,
    "",
    '**Bytes**: each handler\'s entry (`export { NodeHttpHandler } from "…"`) bundled by esbuild the same way for',
    "Sockeye and upstream: minified, tree-shaken, ESM for Node, the handler's own packages inside (Sockeye's core",
    "`@sockeye/pool-monitor` included), every other package an import (the Smithy packages and undici, which the SDK or",
    "the app load anyway). Gzipped: that bundle through zlib, level 9. Exact, one build each.",
    "",
    "**Cold `require`**: the handler's package loaded in a fresh `node` process after Node's built-ins and the",
    "package's other dependencies; CPU time of the process over that `require()`. Sockeye and upstream alternate in",
    `adjacent processes, ${reps} pairs per package; medians, and the median (quartiles) of the paired ratios. Both`,
    "handlers of `@sockeye/node-http-handler` load with the package, so they share a figure. The machine may have been",
    "busy: the ratios hold better than the milliseconds.",
    "",
    "| handler | minified | gzipped | cold `require` (CPU) |",
    "|---|---:|---:|---:|",
  ];
  for (const w of weights.filter((x) => x.peer !== undefined).flatMap((x) => [byId.get(x.peer), x])) {
    const peer = w.peer === undefined ? undefined : byId.get(w.peer);
    const pkg = w.package;
    const pair = load.find((l) => l.upstream === pkg || l.sockeye === pkg);
    const ms = pair === undefined ? "—" : `${pair.cpuMs[pkg].toFixed(1)} ms`;
    if (peer === undefined) {
      lines.push(`| ${w.label} | ${kb(w.bytes)} | ${kb(w.gzip)} | ${ms} |`);
    } else {
      const r = pair.cpuRatio;
      lines.push(
        `| **${w.label}** | ${kb(w.bytes)} (${times(w.bytes / peer.bytes)}) | ${kb(w.gzip)} (${times(w.gzip / peer.gzip)}) | ${ms} (${times(r.median)}, ${r.q1.toFixed(2)}–${r.q3.toFixed(2)}) |`
      );
    }
  }
  lines.push(
    "",
    "In brackets: Sockeye ÷ the upstream handler above it (`@smithy/node-http-handler`'s `NodeHttpHandler` and",
    "`NodeHttp2Handler`, `@smithy/undici-http-handler`).",
    "",
    "Reproduce: `npm run bench:bundle` (builds the packages, ~1 min; `BENCH_REPS` pairs, default 21). Method in the",
    "header of `packages/bench/src/bench-bundle.mjs`; raw samples in `packages/bench/out/bundle-latest.json`.",
    ""
  );
  return lines.join("\n");
}

await main();
