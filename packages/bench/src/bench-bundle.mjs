// =============================================================================
// bench-bundle.mjs: bundle weight and cold load time of each handler (`npm run bench:bundle`).
//
// Question: what does choosing a handler cost a Lambda-style app in bundle bytes and in cold start?
//
// Bytes: one small ESM app per handler constructs an `S3Client` with that handler (the SDK's own default handler,
// @smithy/node-http-handler, is in every bundle anyway: the client config imports it). esbuild bundles each app for
// Node, minified, tree-shaken, ESM, as a Lambda build would; its metafile gives the bytes every package contributed
// after minification (`lib/bundle-weight.mjs`). A handler's weight is the sum of its own packages (for Sockeye the
// core `@sockeye/pool-monitor` included); `undici` itself is listed apart, since an app on undici may carry it anyway.
// Deterministic: one build per app.
//
// Where the bytes go: the same apps built from the packages' TypeScript sources (with the dist's property renaming,
// scripts/mangle-props.mjs, and its Number constants, scripts/number-defines.mjs) give the bytes per source file, i.e. what each feature (detector, monitor, scheduler,
// messages…) costs.
//
// Cold load: `require()` of each handler package in a fresh `node` process (module resolution, compilation and
// evaluation of the package and its dependencies), REPS processes per package in rotated order, median and range.
// Node built-ins are loaded first so only the package's own graph is timed.
//
// Output: out/bundle-latest.json and docs/perf/bundle.md.
// =============================================================================

import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { manglePropsFor } from "../../../scripts/mangle-props.mjs";
import { NUMBER_DEFINES } from "../../../scripts/number-defines.mjs";
import { bytesByPackage, sumOf } from "./lib/bundle-weight.mjs";
import { appSource, bundleApp, HANDLERS, LIMIT_RATIO, workspaceNames } from "./lib/handler-apps.mjs";
import { describeRun } from "./lib/machine.mjs";
import { median } from "./lib/stats.mjs";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const REPO = join(HERE, "..", "..", "..");
const OUT = join(HERE, "..", "out");
const REPS = Number(process.env.BENCH_REPS ?? 15);
/** Packages whose cold `require()` is timed. */
const LOADED = [
  "@smithy/node-http-handler",
  "@smithy/undici-http-handler",
  "@sockeye/node-http-handler",
  "@sockeye/undici-http-handler",
];

/**
 * The property renaming of the packages' own builds (`scripts/mangle-props.mjs`, applied by each tsup.config.ts) for
 * a build of `dirs` from their sources, so the per-file bytes are those of the dist: one regex and one cache for all
 * (the packages' short names never overlap; a name two packages rename takes the first one's short name).
 */
function mangleOf(dirs) {
  const parts = dirs.map((dir) => manglePropsFor(join(REPO, "packages", dir), { publicEntry: "src/index.ts" }));
  const mangleCache = {};
  for (const part of parts) for (const [name, short] of Object.entries(part.mangleCache)) mangleCache[name] ??= short;
  return { mangleProps: new RegExp(parts.map((p) => p.mangleProps.source).join("|")), mangleCache };
}

/**
 * Builds `source` minified (`bundleApp`); `fromSources` (the Sockeye package folders) maps the Sockeye packages to
 * their TypeScript, renamed and with the Number constants written as their dist is.
 */
async function bundle(source, fromSources) {
  if (!fromSources) return bundleApp(REPO, source);
  const alias = {};
  for (const [dir, name] of Object.entries(workspaceNames(REPO)))
    alias[name] = join(REPO, "packages", dir, "src", "index.ts");
  alias["@sockeye/pool-monitor/internal"] = join(REPO, "packages", "pool-monitor", "src", "internal.ts");
  return bundleApp(REPO, source, { alias, ...mangleOf(fromSources), define: NUMBER_DEFINES });
}

/** Bytes per source file of the Sockeye packages in `dirs`, heaviest first. */
function bytesBySource(metafile, dirs) {
  const [output] = Object.values(metafile.outputs);
  const rows = [];
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const match = /packages\/([^/]+)\/src\/(.+)$/.exec(input);
    if (match !== null && dirs.includes(match[1])) rows.push({ file: `${match[1]}/${match[2]}`, bytes: bytesInOutput });
  }
  return rows.sort((a, b) => b.bytes - a.bytes);
}

/**
 * The feature each Sockeye source file serves (by file name), for the per-feature table; a file not listed is the
 * transport itself (the request, its pool, the handler class).
 */
const FEATURE_OF = {
  "saturation-detector.ts": "saturation detector and its messages",
  "format-saturation-message.ts": "saturation detector and its messages",
  "detector-tuning.ts": "saturation detector and its messages",
  "telemetry-core.ts": "telemetry: origin table, stats, delivery",
  "origin-telemetry.ts": "telemetry: origin table, stats, delivery",
  "pool-reading.ts": "telemetry: origin table, stats, delivery",
  "duration-histogram.ts": "telemetry: origin table, stats, delivery",
  "diagnostics.ts": "telemetry: origin table, stats, delivery",
  "normalize-origin.ts": "telemetry: origin table, stats, delivery",
  "unpooled-request.ts": "telemetry: origin table, stats, delivery",
  "pool-monitor.ts": "telemetry: the transport's pool reader",
  "http1-pool-monitor.ts": "telemetry: the transport's pool reader",
  "request-forwarding.ts": "telemetry: the transport's pool reader",
  "request-listeners.ts": "telemetry: the transport's pool reader",
  "tracking-state.ts": "telemetry: the transport's pool reader",
  "http2-pool-monitor.ts": "telemetry: the transport's pool reader",
  "undici-pool-monitor.ts": "telemetry: the transport's pool reader",
  "origin-pool-state.ts": "telemetry: the transport's pool reader",
  "request-finished.ts": "request:finished events",
  "http2-request-finished.ts": "request:finished events",
  "deadline-scheduler.ts": "deadline scheduler and idle watches",
  "deadline-kind.ts": "deadline scheduler and idle watches",
  "lazy-interval.ts": "deadline scheduler and idle watches",
  "timing.ts": "deadline scheduler and idle watches",
  "idle-watch-list.ts": "deadline scheduler and idle watches",
  "http2-idle-watch.ts": "deadline scheduler and idle watches",
  "option-rules.ts": "option validation",
  "pool-monitor-options.ts": "option validation",
  "resolve-shared-options.ts": "option validation",
  "socket-monitor-mode.ts": "option validation",
  "invalid-option.ts": "option validation",
  "resolve-handler-config.ts": "option validation",
  "resolve-http2-config.ts": "option validation",
  "resolve-undici-config.ts": "option validation",
  "validate-request.ts": "option validation",
  "request-errors.ts": "error vocabulary",
  "sockeye-error-kind.ts": "error vocabulary",
  "agent-gate.ts": "handler-side queue (AgentGate)",
  "check-socket-usage.ts": 'upstream\'s per-request warning (socketMonitor: "per-request")',
  "socket-usage-warning.ts": 'upstream\'s per-request warning (socketMonitor: "per-request")',
};

/** `bySource` rows summed per feature, heaviest first. */
function bytesByFeature(bySource) {
  const sums = new Map();
  for (const { file, bytes } of bySource) {
    const feature =
      FEATURE_OF[file.slice(file.lastIndexOf("/") + 1)] ?? "transport: the request, its pool, the handler";
    sums.set(feature, (sums.get(feature) ?? 0) + bytes);
  }
  return [...sums].map(([feature, bytes]) => ({ feature, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** Milliseconds to `require(name)` in a fresh process (built-ins preloaded). */
function coldRequireMs(name) {
  const script = `require("node:http");require("node:https");require("node:http2");require("node:stream");require("node:net");require("node:tls");
const t = process.hrtime.bigint(); require(${JSON.stringify(name)}); process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));`;
  return Number(execFileSync(process.execPath, ["-e", script], { cwd: REPO, encoding: "utf8" }));
}

const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

async function main() {
  const names = workspaceNames(REPO);
  const startedAt = performance.now();

  const weights = [];
  for (const handler of HANDLERS) {
    const { packages, total } = bytesByPackage(await bundle(appSource(handler), undefined), names);
    const bySource = handler.sources
      ? bytesBySource(await bundle(appSource(handler), handler.sources), handler.sources)
      : [];
    weights.push({
      id: handler.id,
      label: handler.label,
      bytes: sumOf(packages, handler.packages),
      perPackage: Object.fromEntries(handler.packages.map((p) => [p, packages[p] ?? 0])),
      undici: packages.undici ?? 0,
      bundleTotal: total,
      bySource,
    });
  }

  const samples = Object.fromEntries(LOADED.map((name) => [name, []]));
  for (let rep = 0; rep < REPS; rep++) {
    for (let i = 0; i < LOADED.length; i++) {
      const name = LOADED[(i + rep) % LOADED.length];
      samples[name].push(coldRequireMs(name));
    }
  }
  const load = LOADED.map((name) => ({
    name,
    medianMs: median(samples[name]),
    minMs: Math.min(...samples[name]),
    maxMs: Math.max(...samples[name]),
  }));

  const result = {
    run: describeRun("npm run bench:bundle"),
    wallSeconds: (performance.now() - startedAt) / 1000,
    reps: REPS,
    weights,
    load,
  };
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "bundle-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(REPO, "docs", "perf", "bundle.md"), render(result));
  process.stdout.write(render(result));
}

function render({ run, wallSeconds, reps, weights, load }) {
  const upstream = weights.find((w) => w.id === "upstream").bytes;
  const lines = [
    "# Bundle weight and cold load per handler",
    "",
    "<!-- GENERATED by packages/bench/src/bench-bundle.mjs from packages/bench/out/bundle-latest.json. Do not edit by hand; re-run `npm run bench:bundle`. -->",
    "",
    `Machine: ${run.cpuModel}, ${run.cores} cores · Node ${run.node} · ${run.date} · command \`${run.command}\` · ${wallSeconds.toFixed(1)} s.`,
    "",
    "Each app constructs an `S3Client` with one handler and is bundled by esbuild for Node: minified, tree-shaken, ESM.",
    "A handler's weight is what its own packages contribute to that bundle (Sockeye's core `@sockeye/pool-monitor`",
    "included); `undici` is listed apart. The SDK's default handler (upstream) is in every bundle anyway, because the",
    "client's config imports it.",
    "",
    `| handler | bytes | × upstream | per package | undici |`,
    "|---|---:|---:|---|---:|",
  ];
  for (const w of weights) {
    const per = Object.entries(w.perPackage)
      .map(([p, b]) => `${p} ${kb(b)}`)
      .join(", ");
    const ratio = w.bytes / upstream;
    const mark = w.id.startsWith("sockeye")
      ? ratio <= LIMIT_RATIO
        ? ` (≤ ${LIMIT_RATIO}×: met)`
        : ` (> ${LIMIT_RATIO}×: missed)`
      : "";
    lines.push(
      `| ${w.label} | ${kb(w.bytes)} | ${ratio.toFixed(2)}×${mark} | ${per} | ${w.undici ? kb(w.undici) : "—"} |`
    );
  }
  const measured = weights.filter((x) => x.bySource.length > 0);
  lines.push(
    "",
    "## What each feature costs",
    "",
    "Bytes per feature, from the same apps built from the TypeScript sources (minified, built as the dist is: members",
    "renamed by `scripts/mangle-props.mjs`, `Number` constants by `scripts/number-defines.mjs`); a feature is a group of",
    "source files (`FEATURE_OF` in `bench-bundle.mjs`).",
    "",
    `| feature | ${measured.map((w) => w.label).join(" | ")} |`,
    `|---|${measured.map(() => "---:").join("|")}|`
  );
  const features = measured.map((w) => new Map(bytesByFeature(w.bySource).map((r) => [r.feature, r.bytes])));
  const names = [...new Set(measured.flatMap((w) => bytesByFeature(w.bySource).map((r) => r.feature)))];
  for (const feature of names) {
    lines.push(`| ${feature} | ${features.map((f) => (f.has(feature) ? kb(f.get(feature)) : "—")).join(" | ")} |`);
  }
  lines.push(
    "",
    "## Where Sockeye's bytes go",
    "",
    "Bytes per source file, from the same apps built from the TypeScript sources (minified, built as the dist is).",
    ""
  );
  for (const w of weights.filter((x) => x.bySource.length > 0)) {
    lines.push(`### ${w.label}`, "", "| source file | bytes |", "|---|---:|");
    for (const row of w.bySource.slice(0, 15)) lines.push(`| \`${row.file}\` | ${row.bytes} |`);
    const rest = w.bySource.slice(15).reduce((sum, row) => sum + row.bytes, 0);
    if (rest > 0) lines.push(`| ${w.bySource.length - 15} more files | ${rest} |`);
    lines.push("");
  }
  lines.push(
    "## Cold load",
    "",
    `\`require()\` of the package in a fresh \`node\` process (Node built-ins loaded first), ${reps} processes per package in rotated order.`,
    "",
    "| package | median | range |",
    "|---|---:|---:|"
  );
  for (const l of load)
    lines.push(`| \`${l.name}\` | ${l.medianMs.toFixed(1)} ms | ${l.minMs.toFixed(1)}–${l.maxMs.toFixed(1)} ms |`);
  lines.push("");
  return lines.join("\n");
}

await main();
