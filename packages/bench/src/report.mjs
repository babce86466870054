// =============================================================================
// report.mjs: turn a bench result JSON into docs/perf/README.md and
// docs/perf/cpu-per-request.svg. Never edit those two files by hand.
//
//   node src/report.mjs [path/to/bench-*.json]      (default: out/bench-latest.json)
//
// Every number in the doc is derived here from the raw JSON:
//   * ratios are PAIRED: client / floor within the same round, then
//     median (min-max) over rounds;
//   * absolute values are medians over rounds and are shown next to ratios;
//   * targets are evaluated on the median paired ratio of every cell.
// packages/bench/profiles.md (hand-written profile before/after notes) is included verbatim when present.
// CPU profiles summarised by profile.mjs (out/profiles/*.summary.json) are
// appended when present.
// =============================================================================

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PALETTE, renderChart } from "./lib/svg-chart.mjs";
import { median, pairedRatios, summary } from "./lib/stats.mjs";

const OUT_DIR = fileURLToPath(new URL("../out/", import.meta.url));
const DOCS_DIR = fileURLToPath(new URL("../../../docs/perf/", import.meta.url));
/** Hand-written notes on profiles taken before and after a change (committed; included verbatim when present). */
const PROFILE_NOTES = fileURLToPath(new URL("../profiles.md", import.meta.url));

/** Targets from the issue. */
export const TARGETS = Object.freeze({ cpuVsFloor: 1.1, telemetryVsOff: 1.03 });
const SOCKEYE = ["sockeye-interval", "sockeye-per-request", "sockeye-off"];

// -----------------------------------------------------------------------------
// Formatting helpers
// -----------------------------------------------------------------------------
const f = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
const fr = (s, d = 2) => (s && Number.isFinite(s.median) ? `${f(s.median, d)} (${f(s.min, d)}–${f(s.max, d)})` : "n/a");
/** "q1–q3" of a summary: the middle half of the rounds. */
const fiqr = (s, d = 2) => (s && Number.isFinite(s.q1) ? `${f(s.q1, d)}–${f(s.q3, d)}` : "n/a");
/**
 * Verdict of a per-cell target: met, or missed in N cells of which M clearly (the whole interquartile range of the
 * cell's paired ratios is past the limit); the others are misses of the median that the middle half of the rounds
 * straddles, i.e. within this machine's noise.
 */
const verdictOf = (x, isClear) => {
  if (x.missed.length === 0) return "**met**";
  const clear = x.missed.filter(isClear).length;
  return `**missed** in ${x.missed.length}/${x.total} cells (${clear} clearly: whole interquartile range past the limit)`;
};
const bodyLabel = (b) => (b >= 1024 ? `${b / 1024} KiB` : `${b} B`);
const pct = (r) => `${r >= 1 ? "+" : "−"}${Math.abs((r - 1) * 100).toFixed(1)} %`;
const cellLabel = (cell) => `c=${cell.c}, ${bodyLabel(cell.body)}, timeouts ${cell.timeouts}`;

// -----------------------------------------------------------------------------
// Derivations
// -----------------------------------------------------------------------------
/** Heap results are { bytesPerRequest, retainedPerRequest }; older files stored the first as a bare number. */
const heapValue = (v, key) => (typeof v === "number" ? (key === "bytesPerRequest" ? v : Number.NaN) : v?.[key]);
const series = (cell, client, key) => cell.rounds.map((r) => r.results[client]?.[key]);

/** Paired ratio summary of `client` vs `base` for `key` in one cell. */
export function ratio(cell, client, key, base = "floor") {
  return summary(pairedRatios(series(cell, client, key), series(cell, base, key)));
}

function evaluateTargets(results) {
  const cells = results.cells;
  const has = (name) => results.clients.includes(name);
  const cpu = SOCKEYE.filter(has).map((client) => {
    const rows = cells.map((cell) => ({ cell, r: ratio(cell, client, "cpuUsPerReq") }));
    const missed = rows.filter((x) => !(x.r.median <= TARGETS.cpuVsFloor));
    const worst = rows.reduce((a, b) => (b.r.median > a.r.median ? b : a), rows[0]);
    return { client, total: rows.length, met: rows.length - missed.length, missed, worst };
  });
  let telemetry;
  const readerNote = Object.entries(results.notes ?? {}).find(([k]) => k.startsWith("sockeye-interval"))?.[1]
    ?.getPoolStats;
  if (has("sockeye-interval") && has("sockeye-off")) {
    const rows = cells.map((cell) => ({ cell, r: ratio(cell, "sockeye-interval", "cpuUsPerReq", "sockeye-off") }));
    const missed = rows.filter((x) => !(x.r.median <= TARGETS.telemetryVsOff));
    const all = median(rows.map((x) => x.r.median));
    telemetry = { total: rows.length, met: rows.length - missed.length, missed, medianOfCells: all, readerNote };
  }
  const heap = results.heap.map((h) => {
    const of = (key) => (c) => summary(h.reps.map((r) => heapValue(r.results[c], key)));
    const sum = Object.fromEntries(results.clients.map((c) => [c, of("bytesPerRequest")(c)]));
    const kept = Object.fromEntries(results.clients.map((c) => [c, of("retainedPerRequest")(c)]));
    const med = Object.fromEntries(results.clients.map((c) => [c, sum[c].median]));
    return { timeouts: h.timeouts, n: h.n, med, sum, kept };
  });
  // Relative targets: below upstream (node:http handlers), and the undici handler against its two references.
  const vs = [];
  const against = (client, base, limit, op) => {
    if (!has(client) || !has(base)) return;
    const rows = cells.map((cell) => ({ cell, r: ratio(cell, client, "cpuUsPerReq", base) }));
    const ok = (m) => (op === "<" ? m < limit : m <= limit);
    const missed = rows.filter((x) => !ok(x.r.median));
    const worst = rows.reduce((a, b) => (b.r.median > a.r.median ? b : a), rows[0]);
    vs.push({
      client,
      base: limit === 1 ? base : `${f(limit)}× ${base}`,
      baseName: base,
      limit,
      op,
      total: rows.length,
      met: rows.length - missed.length,
      missed,
      worst,
    });
  };
  for (const client of SOCKEYE) against(client, "upstream", 1, "<");
  against("sockeye-undici", "smithy-undici", 1, "≤");
  against("sockeye-undici", "undici", TARGETS.cpuVsFloor, "≤");
  return { cpu, telemetry, heap, vs };
}

// -----------------------------------------------------------------------------
// Chart
// -----------------------------------------------------------------------------
export function buildChart(results) {
  const panels = [];
  for (const timeouts of results.meta.config.timeoutModes) {
    for (const body of results.meta.config.bodies) {
      const cells = results.cells.filter((c) => c.timeouts === timeouts && c.body === body);
      panels.push({
        title: `${bodyLabel(body)} body, timeouts ${timeouts}`,
        series: results.clients.map((client, i) => ({
          name: client,
          color: PALETTE[i % PALETTE.length],
          points: cells.map((cell) => {
            const s = summary(series(cell, client, "cpuUsPerReq"));
            return { x: cell.c, y: s.median, lo: s.min, hi: s.max };
          }),
        })),
      });
    }
  }
  const m = results.meta;
  return renderChart({
    title: "Client CPU per request vs concurrency",
    subtitle: `median of ${typeof m.config.rounds === "object" ? Object.values(m.config.rounds).join("/") : m.config.rounds} rotated rounds per point, whiskers min–max · ${m.cpuModel} ×${m.cores} · Node ${m.node} · ${m.date.slice(0, 10)}`,
    xLabel: "requests in flight (log scale)",
    yLabel: "client CPU µs / request",
    panels,
  });
}

// -----------------------------------------------------------------------------
// Markdown
// -----------------------------------------------------------------------------
function loadProfiles() {
  const dir = `${OUT_DIR}profiles/`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith(".summary.json"))
    .sort()
    .map((n) => JSON.parse(readFileSync(dir + n, "utf8")));
}

/**
 * The result file `name` a separate script writes into out/ (`bench-focus-latest.json` from bench-focus.mjs,
 * `bench-instr-latest.json` from bench-instr.mjs, `bench-h2-latest.json` from bench-h2.mjs), if it exists.
 */
function loadOutJson(name) {
  const file = `${OUT_DIR}${name}`;
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
}

/** Clients shown in the allocation breakdown by category (the ones whose difference is the question). */
const ALLOC_BREAKDOWN = [
  "floor",
  "smithy-floor",
  "upstream",
  "sockeye-off",
  "sockeye-interval",
  "undici",
  "smithy-undici",
  "sockeye-undici",
];

/** The *Bytes allocated per request* section, from bench-alloc.mjs's result file. */
export function allocationSection(alloc) {
  const m = alloc.meta;
  const L = [
    "## Bytes allocated per request",
    "",
    `From \`packages/bench/out/bench-alloc-latest.json\` (${m.date.slice(0, 16)}, Node ${m.node}; \`npm run bench:alloc\`, method in the header of \`src/bench-alloc.mjs\`). Bytes each client allocates per request, garbage included: V8's sampling heap profiler (one sample about every ${m.samplingInterval} B, objects the GC collected kept in the profile), each client alone in its own process, ${m.requests.toLocaleString("en-US")} requests after 5 warm-up bursts, median (min–max) of ${m.repeats} repeats in rotated order. Allocation drives the young-generation GC, and unlike CPU time it barely depends on the machine's load, so a difference of a few bytes per request is real. Allocations that TurboFan's escape analysis removed are not made and not counted, and neither are the contents of \`Buffer\`s, which live outside the JS heap (only their JS objects count: a 64 KiB body costs about 800 B more than a 128 B one). This is not the figure of *Heap per in-flight request*: that one reads \`heapUsed\` right after dispatching requests that are then held, so it sees the dispatch only, and only the part no scavenge has collected yet.`,
    "",
  ];
  for (const r of alloc.results) {
    const by = Object.fromEntries(r.rows.map((x) => [x.client, x.bytesPerRequest]));
    const per = (name, base) => by[name]?.median / by[base]?.median;
    L.push(
      `### ${cellLabel(r.cell)}`,
      "",
      "| client | bytes per request | ÷ floor | ÷ upstream |",
      "|---|---:|---:|---:|",
      ...r.rows.map(
        (x) =>
          `| ${x.client} | ${fr(x.bytesPerRequest, 0)} | ${f(per(x.client, "floor"))} | ${f(per(x.client, "upstream"))} |`
      ),
      ""
    );
    if (by["sockeye-interval"] && by["sockeye-off"]) {
      const d = by["sockeye-interval"].median - by["sockeye-off"].median;
      L.push(
        `Telemetry (sockeye-interval − sockeye-off): ${d >= 0 ? "+" : "−"}${f(Math.abs(d), 0)} B per request (${pct(per("sockeye-interval", "sockeye-off"))}).`,
        ""
      );
    }
    for (const [name, why] of Object.entries(r.skipped ?? {})) L.push(`- ${name}: skipped (${why})`, "");
  }
  const cell = alloc.results.find((r) => r.cell.c === 50 && r.cell.body === 128) ?? alloc.results[0];
  const shown = ALLOC_BREAKDOWN.filter((name) => cell.rows.some((x) => x.client === name));
  const rowOf = Object.fromEntries(cell.rows.map((x) => [x.client, x]));
  const categories = [...new Set(shown.flatMap((name) => Object.keys(rowOf[name].categories)))]
    .map((cat) => ({ cat, max: Math.max(...shown.map((name) => rowOf[name].categories[cat] ?? 0)) }))
    .filter((x) => x.max >= 1)
    .sort((a, b) => b.max - a.max);
  L.push(
    `**By category** (${cellLabel(cell.cell)}; bytes per request by the code that allocated them, from the repeat closest to the median; the heaviest allocation sites of every client and cell are under \`sites\` in the result file):`,
    "",
    `| category | ${shown.join(" | ")} |`,
    `|---|${shown.map(() => "---:").join("|")}|`,
    ...categories.map(
      ({ cat }) => `| ${cat} | ${shown.map((name) => f(rowOf[name].categories[cat] ?? 0, 0)).join(" | ")} |`
    ),
    ""
  );
  return L;
}

export function buildMarkdown(results, sourceName) {
  const m = results.meta;
  const t = evaluateTargets(results);
  const focus = loadOutJson("bench-focus-latest.json");
  const L = [];
  const push = (...xs) => L.push(...xs);

  push(
    "# Sockeye performance",
    "",
    `<!-- GENERATED by packages/bench/src/report.mjs from packages/bench/out/${sourceName}. Do not edit by hand; re-run \`npm run bench\`. -->`,
    "",
    "| | |",
    "|---|---|",
    `| Machine | ${m.cpuModel}, ${m.cores} cores, ${m.totalMemGiB} GiB, ${m.platform} |`,
    `| Node | ${m.node} |`,
    `| Date | ${m.date} |`,
    `| Command | \`${m.command}\` (from the repository root; \`node ${m.execArgv.join(" ")} src/bench.mjs\` in packages/bench) |`,
    `| Versions | ${Object.entries(m.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")} |`,
    `| Rounds (pairs) per cell | ${
      typeof m.config.rounds === "object"
        ? Object.entries(m.config.rounds)
            .map(([c, r]) => `c=${c}: ${r}`)
            .join(", ")
        : m.config.rounds
    }, plus one unrecorded warm-up burst per client of ${Object.entries(m.config.warmupPerCell ?? {})
      .map(([c, n]) => `c=${c}: ${n}`)
      .join(", ")} requests |`,
    `| Requests per burst | ${Object.entries(m.config.requestsPerBurst)
      .map(([c, n]) => `c=${c}: ${n}`)
      .join(", ")} |`,
    `| Timeouts "on" | connectionTimeout ${m.config.timeouts.connectionTimeout} ms, requestTimeout ${m.config.timeouts.requestTimeout} ms, socketTimeout ${m.config.timeouts.socketTimeout} ms (undici: connectTimeout / headersTimeout / bodyTimeout; "off" disables undici's) |`,
    `| Total run time | ${m.totalSeconds} s |`,
    ""
  );
  const skipped = Object.entries(results.skipped ?? {});
  if (skipped.length) {
    push("**Skipped clients:**", "", ...skipped.map(([k, v]) => `- ${k}: ${v}`), "");
  }

  // ---- Method ----
  push(
    "## Method",
    "",
    "- The load server (`packages/bench/src/lib/load-server.mjs`) runs in a **separate process** on 127.0.0.1, keep-alive (`keepAliveTimeout` 120 s), answering 128 B or 64 KiB.",
    `- All clients run in **one** process, each with its **own** keep-alive agent (${m.config.maxSockets} sockets; undici \`Pool\` with ${m.config.maxSockets} connections). Every request fully consumes its body.`,
    '- `floor` is the control: raw `http.request` with a keep-alive `http.Agent`. `sockeye-interval` (the default configuration) reads `getPoolStats()` at the start of each of its bursts and then once a second (if the method exists; see notes). `sockeye-per-request` is `socketMonitor: "per-request"`. `sockeye-off` is `socketMonitor: "off", telemetry: false`: no saturation monitor and no per-request pool tracking, the baseline for the telemetry-cost target. `smithy-floor` (diagnostic, not a handler) is the floor\'s `http.request` behind the Smithy shapes only: an async call with an `HttpRequest` in and an `HttpResponse` with a plain header bag out; floor → smithy-floor is what the Smithy handler interface itself costs, smithy-floor → a handler is that handler\'s own cost. `undici` is a raw undici `Pool`, `smithy-undici` `@smithy/undici-http-handler` 3.2.4, `sockeye-undici` `@sockeye/undici-http-handler` (defaults: telemetry on, `getPoolStats()` read like sockeye-interval).',
    "- Each cell: one warm-up burst per client (none at c=10000: the c=1000 cell just before has warmed every client up), then rounds of one short burst per client, the **order rotated** by one each round. Each number below is a **paired ratio** to the floor burst of the same round: median (min–max) over rounds; the target tables add the interquartile range (the middle half of the rounds), and a miss is called *clear* when that whole range is past the limit. Absolute medians are shown for orientation only.",
    "- Client CPU = `process.cpuUsage()` delta (user + system) of the client process over the burst ÷ requests. Latency from `perf_hooks.createHistogram`. ELU = `performance.eventLoopUtilization()` delta.",
    "- Native timers are counted in a **separate pass** (async_hooks `init` of type `Timeout`; hooks cost CPU). Heap per in-flight request is another separate pass (`gc()` before the baseline only; N requests held by the server, the rest queued in the client).",
    "- No GC is forced before a measured window. The machine is a noisy shared VM: read ratios and their spread, not single values.",
    "- Each client is one instance for every cell of a timeouts mode. Two instances of the same client can differ by a few % for as long as they live (see *Focused checks*), so a difference of a few % in one run's tables can be such an offset rather than the code; the focused checks measure the closest cells again with fresh instances and an A/A control.",
    ""
  );

  // ---- Targets ----
  push("## Targets", "", "| Target | Result | Verdict |", "|---|---|---|");
  for (const x of t.cpu) {
    const w = x.worst;
    const verdict = verdictOf(x, (y) => y.r.q1 > TARGETS.cpuVsFloor);
    push(
      `| ${x.client} CPU/request ≤ ${TARGETS.cpuVsFloor.toFixed(2)}× floor, every cell | ${x.met}/${x.total} cells met; worst ${f(w.r.median)}× at ${cellLabel(w.cell)} | ${verdict} |`
    );
  }
  if (t.telemetry) {
    const x = t.telemetry;
    push(
      `| Telemetry on vs off ≤ ${TARGETS.telemetryVsOff.toFixed(2)}× CPU/request (sockeye-interval + reader ÷ sockeye-off) | ${x.met}/${x.total} cells met; median over cells ${f(x.medianOfCells, 3)}×${x.readerNote ? `; reader: ${x.readerNote}` : ""} | ${verdictOf(x, (y) => y.r.q1 > TARGETS.telemetryVsOff)} |`
    );
  } else {
    push("| Telemetry on vs off ≤ 1.03× | sockeye-interval or sockeye-off did not run | not evaluated |");
  }
  for (const x of t.vs) {
    push(
      `| ${x.client} CPU/request ${x.op} ${x.base}, every cell | ${x.met}/${x.total} cells met; worst ${f(x.worst.r.median)}× ${x.baseName} at ${cellLabel(x.worst.cell)} | ${verdictOf(x, (y) => (x.op === "<" ? y.r.q1 >= x.limit : y.r.q1 > x.limit))} |`
    );
  }
  for (const h of t.heap) {
    const up = h.med.upstream;
    for (const client of SOCKEYE.filter((c) => c in h.med)) {
      const s = h.med[client];
      const k = h.kept[client].median;
      const ku = h.kept.upstream?.median;
      // The target is what a request holds (retained after gc()); the no-gc reading depends on whether a scavenge
      // happened to run during the dispatch (see the heap section) and is shown beside it.
      const held = Number.isFinite(k) && Number.isFinite(ku);
      const ok = held ? k < ku : s < up;
      push(
        held
          ? `| ${client} heap held per in-flight request (retained after gc()) < upstream (timeouts ${h.timeouts}) | ${f(k, 0)} B vs ${f(ku, 0)} B (${pct(k / ku)}); without gc(): ${f(s, 0)} B vs ${f(up, 0)} B (${pct(s / up)}) | ${ok ? "**met**" : "**missed**"} |`
          : `| ${client} heap per in-flight request < upstream (timeouts ${h.timeouts}) | ${f(s, 0)} B vs ${f(up, 0)} B (${pct(s / up)}) | ${ok ? "**met**" : "**missed**"} |`
      );
    }
  }
  push("");
  if (focus) {
    push(
      "Verdicts here are per-cell medians of one run. *Focused checks* (below) measures the cells closest to a limit again, with fresh instances, an A/A control and 95 % intervals.",
      ""
    );
  }
  for (const x of t.cpu) {
    if (x.missed.length === 0) continue;
    push(
      `<details><summary>${x.client}: cells over ${TARGETS.cpuVsFloor.toFixed(2)}× (${x.missed.length})</summary>`,
      "",
      "| cell | CPU ratio vs floor, median (min–max) | interquartile range | over the limit by |",
      "|---|---|---|---|",
      ...x.missed.map(
        (y) => `| ${cellLabel(y.cell)} | ${fr(y.r)} | ${fiqr(y.r)} | ${pct(y.r.median / TARGETS.cpuVsFloor)} |`
      ),
      "",
      "</details>",
      ""
    );
  }
  for (const x of t.vs) {
    if (x.missed.length === 0) continue;
    push(
      `<details><summary>${x.client} vs ${x.base}: cells missed (${x.missed.length})</summary>`,
      "",
      `| cell | ${x.client} ÷ ${x.baseName} CPU, median (min–max) | interquartile range |`,
      "|---|---|---|",
      ...x.missed.map((y) => `| ${cellLabel(y.cell)} | ${fr(y.r)} | ${fiqr(y.r)} |`),
      "",
      "</details>",
      ""
    );
  }
  if (t.telemetry?.missed.length) {
    push(
      `<details><summary>telemetry: cells over ${TARGETS.telemetryVsOff.toFixed(2)}× (${t.telemetry.missed.length})</summary>`,
      "",
      "| cell | sockeye-interval ÷ sockeye-off CPU, median (min–max) | interquartile range |",
      "|---|---|---|",
      ...t.telemetry.missed.map((y) => `| ${cellLabel(y.cell)} | ${fr(y.r, 3)} | ${fiqr(y.r, 3)} |`),
      "",
      "</details>",
      ""
    );
  }

  // ---- Where the gap to the floor is (needs the diagnostic smithy-floor client) ----
  const hasAll = ["smithy-floor", "sockeye-off", "sockeye-interval"].every((c) => results.clients.includes(c));
  if (hasAll) {
    push(
      "### Where the gap to the floor is",
      "",
      "Each column is a paired ratio of the same rounds, median (min–max): the Smithy interface itself (smithy-floor ÷ floor: an async call, `HttpRequest` in, `HttpResponse` with a header bag out), Sockeye's handler without telemetry on top of that (sockeye-off ÷ smithy-floor: deadlines, validation, the request state, the live list), and telemetry with the detector on top of that (sockeye-interval ÷ sockeye-off). Their product is roughly sockeye-interval ÷ floor.",
      "",
      "| cell | smithy-floor ÷ floor | sockeye-off ÷ smithy-floor | sockeye-interval ÷ sockeye-off | sockeye-interval ÷ floor |",
      "|---|---|---|---|---|",
      ...results.cells.map(
        (cell) =>
          `| ${cellLabel(cell)} | ${fr(ratio(cell, "smithy-floor", "cpuUsPerReq"))} | ${fr(ratio(cell, "sockeye-off", "cpuUsPerReq", "smithy-floor"))} | ${fr(ratio(cell, "sockeye-interval", "cpuUsPerReq", "sockeye-off"))} | ${fr(ratio(cell, "sockeye-interval", "cpuUsPerReq"))} |`
      ),
      ""
    );
  }

  push(
    "Timer creation at 10 / 100 / 1,000 / 10,000 requests in flight: [timers.md](timers.md). How late deadlines fire: [lateness.md](lateness.md). The handler-side queue, before vs after (heap per queued request, drain, uploads): [handler-queue.md](handler-queue.md).",
    ""
  );

  // ---- Focused checks (bench-focus.mjs writes its own result file; `npm run bench` runs it after bench-h2.mjs) ----
  if (focus) {
    const fi = (x) => `${f(x.median, 3)} (${f(x.low, 3)}–${f(x.high, 3)})`;
    push(
      "## Focused checks",
      "",
      `From \`packages/bench/out/bench-focus-latest.json\` (${focus.meta.date}, Node ${focus.meta.node}; \`src/bench-focus.mjs\`, method in its header). A full-run cell has 21 rounds, and the 95 % interval of its median is about its interquartile range: too wide to tell a 3 % difference. The cells the full runs left closest to a limit are measured again here, in *cycles*: each cycle creates three clients afresh (the subject, the baseline, and a second, independent instance of the baseline as an A/A control), gives each a warm-up burst, and runs the 6 rounds of a Williams design (every client in every position and right after every other client equally often). Fresh clients per cycle because two instances of the same client can differ by a few % for as long as they live (an A/A pair kept for 121 rounds at c=1000 measured 0.955, interval 0.934–0.996). Shown: the median over cycles of each cycle's median paired CPU ratio (the subject ÷ the mean of the two baseline instances of the same round; the control: second instance ÷ first), with its distribution-free 95 % interval (order statistics of the binomial(n, ½) interval over the cycles). **met**: the whole interval is within the limit; **missed**: the whole interval is past it; **unresolved**: the interval straddles the limit, a difference smaller than this machine resolves in that many cycles; **void**: the A/A control's interval does not hold 1 (by chance alone about 1 check in 20; such a check is re-run). Checks may come from separate runs (dates per row), some with more cycles than the default 50 (20 at c ≥ 1000, 10 at c=10000, whose fresh clients get their warm-up burst at c=1000) to narrow an interval (\`BENCH_FOCUS=<id> BENCH_FOCUS_CYCLES=<n>\`).`,
      "",
      "| check | cell | cycles (rounds) | ratio, median (95 % interval) | A/A control (95 % interval) | target | verdict | run |",
      "|---|---|---:|---|---|---|---|---|",
      ...focus.checks.map((x) =>
        x.skipped
          ? `| ${x.id} | ${cellLabel({ c: x.c, body: x.body, timeouts: x.timeouts ? "on" : "off" })} | | skipped: ${x.skipped} | | ${x.target} | not evaluated | ${x.date?.slice(0, 16) ?? ""} |`
          : `| ${x.id} | ${cellLabel({ c: x.c, body: x.body, timeouts: x.timeouts ? "on" : "off" })} | ${x.cycles} (${x.rounds}) | ${x.subject} ÷ ${x.base}: ${fi(x.ratio)} | ${fi(x.control)} | ${x.op === "<=" ? "≤" : x.op} ${f(x.limit, 2)} | **${x.verdict}** | ${x.date?.slice(0, 16) ?? ""} |`
      ),
      "",
      "Rows dated before 2026-11-26 predate `NodeHttpHandler`'s handler-side queue (issue 25), which changes the cells at c ≥ 1,000; what it changed, and the `shaped-*` checks of its target, are in [handler-queue.md](handler-queue.md).",
      ""
    );
    const shape = focus.checks.filter((x) => x.subject === "smithy-floor").map((x) => `\`${x.id}\``);
    if (shape.length) {
      push(
        `${shape.join(", ")}: not a target of its own. It measures how much of the floor target's 10 % the bare Smithy shape (\`smithy-floor\`: an async call, \`HttpRequest\` in, \`HttpResponse\` with a header bag out, around the floor's \`http.request\`) already uses at that cell. Missed would mean that no handler behind the Smithy interface that sends through \`http.request\` can meet the floor target there.`,
        ""
      );
    }
  }

  // ---- Executed instructions (bench-instr.mjs writes its own result file; needs valgrind, not part of `npm run bench`) ----
  const instr = loadOutJson("bench-instr-latest.json");
  if (instr?.results?.length) {
    const first = instr.results[0].meta;
    push(
      "## Executed instructions",
      "",
      `From \`packages/bench/out/bench-instr-latest.json\` (\`npm run bench:instr\`, method in the header of \`src/bench-instr.mjs\`; Node ${first.node}). Instructions the client process executed (all its threads, counted by valgrind's callgrind) in a window of requests after a warm-up; each client in its own process, repeats in rotated order, ratios paired by repeat, median (min–max). An instruction count repeats to within about 1 % where CPU time swings ±20–50 % per burst, so it resolves a few-% difference in a few runs; it is not time (no cache or branch misses; where shown, the cache misses are callgrind's simulation of this machine's caches). Work driven by wall time (the shared tick, the once-a-second sample, and sockeye-interval's once-a-second \`getPoolStats()\` read unless the burst hooks are off) runs tens of times more often per request under valgrind (the window's wall time is shown where the run recorded it; at full speed 3,000 requests at c=50 take about 0.5 s on the node:http clients) and is included.`,
      ""
    );
    for (const r of instr.results) {
      const m = r.meta;
      const cache = Object.values(r.summary.clients).some((x) => x.l1DataMisses);
      const windowS = median(r.runs.map((x) => x.windowMs).filter((x) => Number.isFinite(x))) / 1000;
      push(
        `### ${cellLabel({ c: m.c, body: m.body, timeouts: m.timeouts ? "on" : "off" })}, burst hooks ${m.reader === false ? "off" : "on"}${m.cacheSim ? ", cache simulation" : ""} (${m.date.slice(0, 16)})`,
        "",
        `${m.repeats} repeats × ${m.requests} requests after ${m.warmup} warm-up requests${Number.isFinite(windowS) ? `; window ${f(windowS, 1)} s (median)` : ""}.`,
        "",
        cache
          ? "| client | instructions per request | L1 data misses per request | last-level misses per request |"
          : "| client | instructions per request |",
        cache ? "|---|---:|---:|---:|" : "|---|---:|",
        ...Object.entries(r.summary.clients).map(([name, x]) =>
          cache
            ? `| ${name} | ${fr(x.perRequest, 0)} | ${x.l1DataMisses ? fr(x.l1DataMisses, 0) : ""} | ${x.lastLevelMisses ? fr(x.lastLevelMisses, 1) : ""} |`
            : `| ${name} | ${fr(x.perRequest, 0)} |`
        ),
        "",
        "| ratio of instructions | median (min–max) |",
        "|---|---|",
        ...r.summary.pairs.map((p) => `| ${p.subject} ÷ ${p.base} | ${fr(p.ratio, 3)} |`),
        ""
      );
    }
  }

  // ---- Chart ----
  push("## CPU per request", "", "![Client CPU µs per request vs concurrency](cpu-per-request.svg)", "");

  // ---- Tables ----
  push(
    "## Results by cell",
    "",
    "Ratios are client ÷ floor of the same round, median (min–max) over rounds. For CPU and latency lower is better; for req/s higher is better. `CPU µs` and `ELU` are absolute medians.",
    ""
  );
  for (const timeouts of m.config.timeoutModes) {
    for (const body of m.config.bodies) {
      push(
        `### ${bodyLabel(body)} body, timeouts ${timeouts}`,
        "",
        "| c | client | CPU µs/req | CPU ÷ floor | req/s ÷ floor | p50 ÷ floor | p99 ÷ floor | ELU |",
        "|---:|---|---:|---|---|---|---|---:|"
      );
      for (const cell of results.cells.filter((c) => c.timeouts === timeouts && c.body === body)) {
        for (const client of results.clients) {
          const abs = median(series(cell, client, "cpuUsPerReq"));
          const cpu = client === "floor" ? "1 (control)" : fr(ratio(cell, client, "cpuUsPerReq"));
          const rps =
            client === "floor"
              ? `(${f(median(series(cell, client, "reqPerSec")), 0)} req/s)`
              : fr(ratio(cell, client, "reqPerSec"));
          const p50 =
            client === "floor"
              ? `(${f(median(series(cell, client, "p50Us")), 0)} µs)`
              : fr(ratio(cell, client, "p50Us"));
          const p99 =
            client === "floor"
              ? `(${f(median(series(cell, client, "p99Us")), 0)} µs)`
              : fr(ratio(cell, client, "p99Us"));
          push(
            `| ${cell.c} | ${client} | ${f(abs, 1)} | ${cpu} | ${rps} | ${p50} | ${p99} | ${f(median(series(cell, client, "elu")), 2)} |`
          );
        }
      }
      push("");
    }
  }

  if (results.clients.includes("upstream")) {
    const mine = SOCKEYE.filter((c) => results.clients.includes(c));
    push(
      "### Sockeye ÷ upstream (paired, CPU per request)",
      "",
      "Same rounds, same method, upstream as the denominator: below 1 means Sockeye used less CPU per request than upstream 4.14.2.",
      "",
      `| cell | ${mine.join(" | ")} |`,
      `|---|${mine.map(() => "---").join("|")}|`,
      ...results.cells.map(
        (cell) =>
          `| ${cellLabel(cell)} | ${mine.map((c) => fr(ratio(cell, c, "cpuUsPerReq", "upstream"))).join(" | ")} |`
      ),
      ""
    );
  }
  if (t.telemetry) {
    push(
      "### Telemetry cost: sockeye-interval (+ getPoolStats reader) ÷ sockeye-off",
      "",
      "| cell | CPU/request ratio, median (min–max) |",
      "|---|---|",
      ...results.cells.map(
        (cell) => `| ${cellLabel(cell)} | ${fr(ratio(cell, "sockeye-interval", "cpuUsPerReq", "sockeye-off"), 3)} |`
      ),
      ""
    );
  }

  // ---- Timers ----
  push(
    "## Native timers per request",
    "",
    "Separate counting pass, 128 B body: `Timeout` resources initialised (async_hooks) ÷ requests, and the peak number alive at once. Includes every native timer in the client process during the burst (socket timeouts, the telemetry reader's interval). The ~1 native `Timeout` per request on the undici clients (undici, smithy-undici, sockeye-undici) is undici's own keep-alive timer: `lib/dispatcher/client-h1.js` arms a native (`USE_NATIVE_TIMER`) keep-alive timeout each time a connection goes idle, so raw undici `Pool.request` shows it too; Sockeye's deadlines add 0.",
    "",
    `| timeouts | c | requests | ${results.clients.join(" | ")} |`,
    `|---|---:|---:|${results.clients.map(() => "---").join("|")}|`
  );
  for (const e of results.timerCounts) {
    push(
      `| ${e.timeouts} | ${e.c} | ${e.n} | ${results.clients.map((c) => (e.results[c] ? `${f(e.results[c].perReq, 3)} (peak ${e.results[c].livePeak})` : "n/a")).join(" | ")} |`
    );
  }
  push("");

  // ---- Heap ----
  push(
    "## Heap per in-flight request",
    "",
    `N requests issued at once against a server that holds its answers (${m.config.maxSockets} on sockets, the rest queued in the client). **heapUsed delta ÷ N** with \`gc()\` before the baseline only (the reported figure: what holding N requests costs the heap, garbage from dispatching included), median (min–max) of ${m.config.heapReps} rotated repetitions. *Retained* is a reading taken after that one, after \`gc()\`: what the in-flight requests keep alive (the figure the heap target uses); the gap is not-yet-collected garbage. The no-gc figure is bimodal: 2,000 requests allocate about as much as the young generation holds, so whether a scavenge happens to run during the dispatch decides whether the dispatch garbage is still counted (a client that allocates *more* can read lower); a repetition far below the others is such a scavenge.`,
    "",
    "| client | timeouts | N | bytes / in-flight request | ÷ upstream | retained after gc() | retained ÷ upstream |",
    "|---|---|---:|---|---|---|---|"
  );
  for (const h of t.heap) {
    for (const client of results.clients) {
      push(
        `| ${client} | ${h.timeouts} | ${h.n} | ${fr(h.sum[client], 0)} | ${f(h.med[client] / h.med.upstream)} | ${fr(h.kept[client], 0)} | ${f(h.kept[client].median / h.kept.upstream?.median)} |`
      );
    }
  }
  push("");
  const counts = (timeouts) => results.timerCounts.find((e) => e.timeouts === timeouts && e.c === 1000)?.results;
  const explain = [];
  for (const h of t.heap) {
    const tc = counts(h.timeouts);
    for (const client of SOCKEYE.filter((c) => Number.isFinite(h.med[c]))) {
      const d = h.med.upstream - h.med[client];
      const dk = h.kept.upstream?.median - h.kept[client].median;
      explain.push(
        `- timeouts ${h.timeouts}, ${client}: ${f(Math.abs(d), 0)} B ${d >= 0 ? "less" : "more"} than upstream per in-flight request, of which ${f(Math.abs(dk), 0)} B ${dk >= 0 ? "less" : "more"} retained and ${f(Math.abs(d - dk), 0)} B ${d - dk >= 0 ? "less" : "more"} garbage.` +
          (tc
            ? ` Live native timers per request at c=1000: upstream ${f(tc.upstream?.livePeak / 1000, 2)}, ${client} ${f(tc[client]?.livePeak / 1000, 3)}.`
            : "")
      );
    }
  }
  if (explain.length) {
    push(
      "**Where the difference comes from.** Everything Node's `http` client allocates per request (ClientRequest, its headers, listeners, the agent-queue entry) is common to floor, upstream and Sockeye. Upstream adds per request: a Promise with resolve/reject closures, the `HttpRequest`/`HttpResponse` objects, and one native `Timeout` per armed timer (~150 B each plus ~128 B for its per-request closure), all alive while the request waits. Sockeye replaces the timers with fields on one per-request state object scheduled on one shared timer per handler, and adds its pool-monitor state (per-request record and listeners). undici's requests are far lighter than any `http.ClientRequest` (no per-request socket-bound objects while queued).",
      "",
      ...explain,
      ""
    );
  }

  // ---- Allocation (bench-alloc.mjs writes its own result file; not part of `npm run bench`) ----
  const alloc = loadOutJson("bench-alloc-latest.json");
  if (alloc?.results?.length) push(...allocationSection(alloc));

  // ---- HTTP/2 (bench-h2.mjs writes its own result file; `npm run bench` runs it after bench.mjs) ----
  const h2 = loadOutJson("bench-h2-latest.json");
  if (h2) {
    push(
      "## HTTP/2 (`NodeHttp2Handler`)",
      "",
      `From \`packages/bench/out/bench-h2-latest.json\` (${h2.meta.date}, Node ${h2.meta.node}; \`src/bench-h2.mjs\`): all clients on ONE session to one origin; floor = raw \`node:http2\` \`session.request()\`; "on" = requestTimeout 30 s + sessionTimeout 60 s on both handlers. ${h2.meta.rounds} rounds per cell, order rotated; ratios are paired per round, median (min–max).`,
      "",
      "| c | timeouts | requests/burst | CPU µs/req floor | upstream | sockeye | upstream ÷ floor | sockeye ÷ floor | sockeye ÷ upstream |",
      "|---:|---|---:|---:|---:|---:|---|---|---|",
      ...h2.cells.map(
        (x) =>
          `| ${x.concurrency} | ${x.timeouts ? "on" : "off"} | ${x.requestsPerBurst} | ${f(x.cpuUsPerRequest.floor.median, 1)} | ${f(x.cpuUsPerRequest.upstream.median, 1)} | ${f(x.cpuUsPerRequest.sockeye.median, 1)} | ${fr(x.ratios.upstreamVsFloor)} | ${fr(x.ratios.sockeyeVsFloor)} | ${fr(x.ratios.sockeyeVsUpstream)} |`
      ),
      ""
    );
    if (h2.timersPerRequest) {
      push(
        `Native Timeouts created per request (c=50, timeouts on): ${Object.entries(h2.timersPerRequest)
          .map(([k, v]) => `${k} ${f(v.perRequest, 3)} (live peak ${v.livePeak})`)
          .join(", ")}.`,
        ""
      );
    }
  }

  // ---- Notes ----
  if (results.notes) {
    push("## Notes", "");
    for (const [k, v] of Object.entries(results.notes)) {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined);
      if (entries.length)
        push(`- ${k}: ${entries.map(([a, b]) => `${a}: ${typeof b === "object" ? JSON.stringify(b) : b}`).join("; ")}`);
    }
    push("");
  }

  // ---- Profiles ----
  if (existsSync(PROFILE_NOTES)) {
    // A committed fragment (its own headings), so it survives regeneration of this file.
    push(readFileSync(PROFILE_NOTES, "utf8").trimEnd(), "");
  }
  const profiles = loadProfiles();
  if (profiles.length) {
    push(
      "## CPU profiles",
      "",
      "From `npm run --workspace @sockeye/bench bench:profile -- <client> <c> <body> <on|off>` (`node --cpu-prof`, one client alone in the process, several seconds of bursts). Self time per category, converted to µs per request (category share of non-idle samples × the run's measured CPU µs/request; includes warm-up, so approximate). Δ is against the floor profile of the same cell. Each profile is a separate run: totals of different clients differ by the machine's drift as much as by the clients (compare them with the paired tables above, not here), and V8's inlining moves self time between functions and categories from run to run (e.g. `nextTick` counted on its own or inside its callers). Read each profile's shares and its own functions.",
      ""
    );
    const groups = new Map();
    for (const p of profiles) {
      const key = `c=${p.c}, ${bodyLabel(p.body)}, timeouts ${p.timeouts}`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(p);
    }
    for (const [key, ps] of groups) {
      ps.sort((a, b) => (a.client === "floor" ? -1 : b.client === "floor" ? 1 : a.client.localeCompare(b.client)));
      const floorP = ps.find((p) => p.client === "floor");
      const us = (p, cat) => ((p.categories.find((c) => c.name === cat)?.percent ?? 0) / 100) * p.cpuUsPerReq;
      const cats = [...new Set(ps.flatMap((p) => p.categories.map((c) => c.name)))];
      push(
        `### ${key}`,
        "",
        `| category (µs/request) | ${ps.map((p) => p.client + (floorP && p !== floorP ? " (Δ vs floor)" : "")).join(" | ")} |`,
        `|---|${ps.map(() => "---:").join("|")}|`,
        `| **total CPU** | ${ps.map((p) => `**${f(p.cpuUsPerReq, 1)}**${floorP && p !== floorP ? ` (${p.cpuUsPerReq >= floorP.cpuUsPerReq ? "+" : ""}${f(p.cpuUsPerReq - floorP.cpuUsPerReq, 1)})` : ""}`).join(" | ")} |`
      );
      for (const cat of cats) {
        push(
          `| ${cat} | ${ps
            .map((p) => {
              const v = us(p, cat);
              if (!floorP || p === floorP) return f(v, 1);
              const d = v - us(floorP, cat);
              return `${f(v, 1)} (${d >= 0 ? "+" : ""}${f(d, 1)})`;
            })
            .join(" | ")} |`
        );
      }
      push("");
      if (floorP) {
        for (const p of ps) {
          if (p === floorP) continue;
          const deltas = cats
            .map((cat) => ({ cat, d: us(p, cat) - us(floorP, cat) }))
            .filter((x) => x.d > 0)
            .sort((a, b) => b.d - a.d)
            .slice(0, 3);
          push(
            `- ${p.client} vs floor: ${p.cpuUsPerReq >= floorP.cpuUsPerReq ? "+" : ""}${f(p.cpuUsPerReq - floorP.cpuUsPerReq, 1)} µs/request; largest increases: ${deltas.map((x) => `${x.cat} +${f(x.d, 1)}`).join(", ") || "none"}.`
          );
        }
        push("");
      }
      for (const p of ps) {
        push(
          `<details><summary>${p.client}: top functions by self time (${p.requests} requests)</summary>`,
          "",
          "| function | location | self % |",
          "|---|---|---:|",
          ...p.top.map((x) => `| \`${x.functionName || "(anonymous)"}\` | ${x.location} | ${f(x.percent, 1)} |`),
          "",
          "</details>",
          ""
        );
      }
    }
  }
  return `${L.join("\n")}\n`;
}

// -----------------------------------------------------------------------------
// Entry points
// -----------------------------------------------------------------------------
/** Write docs/perf/README.md and docs/perf/cpu-per-request.svg. @returns {string[]} written paths */
export function writeReport(results, sourceName = "bench-latest.json") {
  mkdirSync(DOCS_DIR, { recursive: true });
  const md = `${DOCS_DIR}README.md`;
  const svg = `${DOCS_DIR}cpu-per-request.svg`;
  writeFileSync(md, buildMarkdown(results, sourceName));
  writeFileSync(svg, buildChart(results));
  return [md, svg];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.env.BENCH_NO_DOCS) {
    console.log("BENCH_NO_DOCS set: docs/perf not regenerated");
    process.exit(0);
  }
  const src = process.argv[2] ?? `${OUT_DIR}bench-latest.json`;
  if (process.argv[2] === undefined && !existsSync(src)) {
    // e.g. `npm run bench:focus` on a fresh clone: the report needs a full run's results as its base.
    console.log("docs/perf not regenerated: no out/bench-latest.json yet (run `npm run bench` once)");
    process.exit(0);
  }
  const results = JSON.parse(readFileSync(src, "utf8"));
  const name = src.split("/").pop();
  for (const file of writeReport(results, name)) console.log(`wrote ${file}`);
}
