// =============================================================================
// bench-timers.mjs: the timer-creation table (`npm run bench:timers`).
//
// Question: how many native `Timeout` objects does a client create, and how
// many are alive at once, when N requests are in flight? This is the table of
// smithy-lang/smithy-typescript#1882 (which timed 10 / 100 / 1,000 / 10,000
// bare setTimeout calls), redone with real requests through real handlers.
//
// How:
//   * load server in a separate process (answers at once, 128 B, keep-alive);
//   * per configuration one client (lib/clients.mjs: its own 50-socket pool, or
//     one HTTP/2 session), warmed up with 50 requests so connections exist;
//   * N requests are issued at once (N = 10, 100, 1,000, 10,000: 50 on sockets,
//     the rest queued) and awaited; an async_hooks hook counts `Timeout` inits
//     (created) and tracks init-minus-destroy (live at peak);
//   * REPS repetitions per cell, configurations rotated; the median is reported
//     (the range is shown when the repetitions disagree).
//
// Output: out/timers-<date>.json (+ out/timers-latest.json) and docs/perf/timers.md.
// =============================================================================

import { createClients, H2_TIMEOUTS, TIMEOUTS } from "./lib/clients.mjs";
import { describeRun, writeResults } from "./lib/machine.mjs";
import { startLoadServer } from "./lib/server-control.mjs";
import { median } from "./lib/stats.mjs";
import { TimerCounter } from "./lib/timer-counter.mjs";

const IN_FLIGHT = [10, 100, 1_000, 10_000];
const REPS = Number(process.env.BENCH_REPS ?? 3);
/** Configurations: label, client name, timeouts on/off. */
const CONFIGS = [
  { label: "floor (raw http.request)", client: "floor", timeouts: false },
  { label: "upstream 4.14.2, default config", client: "upstream", timeouts: false },
  { label: "upstream 4.14.2, all three timeouts", client: "upstream", timeouts: true },
  { label: "Sockeye interval, default config", client: "sockeye-interval", timeouts: false },
  { label: "Sockeye interval, all three timeouts", client: "sockeye-interval", timeouts: true },
  { label: "@smithy/undici-http-handler, timeouts", client: "smithy-undici", timeouts: true },
  { label: "Sockeye undici, all three timeouts", client: "sockeye-undici", timeouts: true },
  { label: "upstream NodeHttp2Handler, deadlines", client: "upstream-h2", timeouts: true },
  { label: "Sockeye NodeHttp2Handler, deadlines", client: "sockeye-h2", timeouts: true },
];

const rotate = (arr, k) => arr.map((_, i) => arr[(i + k) % arr.length]);

/**
 * Issue `n` requests at once and count native Timeouts until all have completed.
 * @param {import("./lib/clients.mjs").BenchClient} client
 */
async function countInFlight(client, n, counter) {
  const pending = new Array(n);
  counter.enable();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) pending[i] = client.request("/128");
  await Promise.all(pending);
  const wallMs = performance.now() - t0;
  return { ...counter.disable(), wallMs };
}

const startedAt = performance.now();
const meta = describeRun("npm run bench:timers");
meta.config = { inFlight: IN_FLIGHT, reps: REPS, timeouts: TIMEOUTS, serverAnswers: "immediately, 128 B" };
const server = await startLoadServer();
const results = { meta, configs: [], skipped: {} };

try {
  // One client per configuration.
  const entries = [];
  for (const cfg of CONFIGS) {
    const { clients, skipped } = await createClients(server, { timeouts: cfg.timeouts, only: [cfg.client] });
    if (clients.length === 0) {
      results.skipped[cfg.label] = skipped[cfg.client] ?? "unavailable";
      console.log(`! skipped ${cfg.label}: ${results.skipped[cfg.label]}`);
      continue;
    }
    const client = clients[0];
    await Promise.all(Array.from({ length: 50 }, () => client.request("/128")));
    entries.push({ cfg, client, cells: Object.fromEntries(IN_FLIGHT.map((n) => [n, []])) });
  }
  const counter = new TimerCounter();
  for (const n of IN_FLIGHT) {
    for (let r = 0; r < REPS; r++) {
      for (const e of rotate(entries, r)) e.cells[n].push(await countInFlight(e.client, n, counter));
    }
    console.log(
      `N=${n}: ${entries.map((e) => `${e.cfg.label}: ${median(e.cells[n].map((x) => x.created))} created, peak ${median(e.cells[n].map((x) => x.livePeak))}`).join("; ")}`
    );
  }
  for (const e of entries) {
    results.configs.push({ label: e.cfg.label, client: e.cfg.client, timeouts: e.cfg.timeouts, cells: e.cells });
    await e.client.close();
  }
} finally {
  await server.close();
}

results.meta.totalSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
writeResults("timers", results, "Native timers per request: upstream vs Sockeye", timersMarkdown(results));

/** The lines of docs/perf/timers.md below its header. */
function timersMarkdown(res) {
  const m = res.meta;
  const cellText = (runs, key) => {
    const vals = runs.map((x) => x[key]);
    const med = median(vals);
    const lo = Math.min(...vals);
    const hi = Math.max(...vals);
    return lo === hi ? med.toLocaleString("en-US") : `${med.toLocaleString("en-US")} [${lo}–${hi}]`;
  };
  const L = [
    `Versions: ${Object.entries(m.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}.`,
    "",
    "The seed (smithy-lang/smithy-typescript#1882) timed N bare `setTimeout` calls against one shared `setInterval`.",
    "This table counts what real requests create: N requests issued at once through a handler whose agent has",
    "50 keep-alive sockets (so N − 50 wait in the agent's queue; the HTTP/2 handlers use one session of up to 4,096",
    "streams), against a local keep-alive server in another process.",
    "`created` = `Timeout` async resources initialised (async_hooks `init`) from the first request until the last",
    "response body ended; `peak` = most `Timeout`s alive at once (init minus destroy). Timers re-armed with",
    `\`refresh()\` count once. Median of ${m.config.reps} rotated repetitions (range shown when they differ).`,
    `"All three timeouts" = connectionTimeout ${m.config.timeouts.connectionTimeout} ms, requestTimeout ${m.config.timeouts.requestTimeout} ms, socketTimeout ${m.config.timeouts.socketTimeout} ms`,
    `(undici's connect, headers and body timeouts for @smithy/undici-http-handler); HTTP/2 "deadlines" = requestTimeout`,
    `${H2_TIMEOUTS.requestTimeout} ms and sessionTimeout ${H2_TIMEOUTS.sessionTimeout} ms.`,
    "",
  ];
  const skipped = Object.entries(res.skipped);
  if (skipped.length) L.push("**Skipped:**", "", ...skipped.map(([k, v]) => `- ${k}: ${v}`), "");

  L.push(
    "## Timeouts created",
    "",
    `| in flight | ${res.configs.map((c) => c.label).join(" | ")} |`,
    `|---:|${res.configs.map(() => "---:").join("|")}|`
  );
  for (const n of m.config.inFlight) {
    L.push(
      `| ${n.toLocaleString("en-US")} | ${res.configs.map((c) => `${cellText(c.cells[n], "created")} · ${(median(c.cells[n].map((x) => x.created)) / n).toFixed(3)}/req`).join(" | ")} |`
    );
  }
  L.push(
    "",
    "## Timeouts alive at peak",
    "",
    `| in flight | ${res.configs.map((c) => c.label).join(" | ")} |`,
    `|---:|${res.configs.map(() => "---:").join("|")}|`
  );
  for (const n of m.config.inFlight) {
    L.push(
      `| ${n.toLocaleString("en-US")} | ${res.configs.map((c) => cellText(c.cells[n], "livePeak")).join(" | ")} |`
    );
  }
  L.push(
    "",
    "## Reading it",
    "",
    "- Upstream creates a fixed number of timers per request however many are in flight: with the default configuration the",
    "  socket-usage warning timer, the socket-timeout deferral and the keep-alive deferral; with all three timeouts also",
    "  the request timer and the connection-timeout deferral. Each lives until its request ends, so the peak grows with N.",
    "- Sockeye keeps deadlines as nodes of its per-request state, in lists per duration under one unref'd native timer",
    "  per handler armed for the earliest expiry; `created` counts that timer's re-arms (a few per run, not per request);",
    "  a peak of 2 is a re-arm seen before async_hooks reports the cleared timer's `destroy`.",
    "  How late deadlines fire, beside upstream's native timers: [lateness.md](lateness.md).",
    "- The undici handlers show about one per request: undici's own keep-alive timer, armed natively each time a",
    "  connection goes idle (raw `Pool.request` shows it too); Sockeye's deadlines add none.",
    "- Timer counts are deterministic up to connection churn; CPU and heap figures are in [README.md](README.md).",
    ""
  );
  return L;
}
