// =============================================================================
// lateness-summary.mjs: the numbers and the page of bench-lateness.mjs (method in its header), kept apart from the
// handlers so they are tested without starting any.
// =============================================================================

/** The `p`-th percentile (0-100) of an ascending array, nearest rank; NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * A cell's probes (`{ late, floor }` each, or `{ error }` for one that ended otherwise than by its deadline) in
 * numbers: n, p50 / p90 / max of the probes, p50 / p90 of their floors, and `deltaP90`, the p90 of each probe's
 * lateness minus its own floor's (what the handler adds at the same moments).
 */
export function summarizeProbes(results) {
  const late = results.filter((r) => r.late !== undefined);
  const ascending = (values) => values.sort((a, b) => a - b);
  const byLate = ascending(late.map((r) => r.late));
  const byFloor = ascending(late.map((r) => r.floor));
  return {
    n: late.length,
    p50: percentile(byLate, 50),
    p90: percentile(byLate, 90),
    max: byLate.at(-1) ?? Number.NaN,
    floorP50: percentile(byFloor, 50),
    floorP90: percentile(byFloor, 90),
    deltaP90: percentile(ascending(late.map((r) => r.late - r.floor)), 90),
    errors: results.filter((r) => r.error !== undefined).map((r) => r.error),
    samples: late,
  };
}

/** The results' Markdown: the method, then one row per (handler, kind, d), each state of `config.states` beside. */
export function latenessMarkdown(cells, config) {
  const f = (x) => (Number.isNaN(x) ? "–" : x.toFixed(1));
  const signed = (x) => (Number.isNaN(x) ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(1)}`);
  const label = { request: "requestTimeout", socket: "socketTimeout", connection: "connectionTimeout" };
  const stateName = (state) => (state === "in flight" ? `${config.many.toLocaleString("en-US")} in flight` : state);
  const L = [
    "Lateness in ms of each deadline after its due time, p50 / p90, beside a native `setTimeout` armed in the same",
    "tick (the floor's p90), and Δ = p90 of (probe − its own floor): what the handler adds to the event loop's own",
    `lateness. ${config.probes} probes per cell, issued d / ${config.probes} apart (connectionTimeout and sessionTimeout: one after`,
    `the other). "under load": ${config.loadConcurrency} requests in flight through the same handler, back to back, each a 64 KiB`,
    "response read to its end.",
    ...(config.states.includes("in flight")
      ? [
          `"${stateName("in flight")}": that many requests through the same handler to a server that never answers, each`,
          "with a 10-minute requestTimeout (that many armed deadlines, most queued for a socket).",
        ]
      : []),
    "Servers in a child process; elu = the client's event-loop utilisation during the cell. Method: the header of",
    "`packages/bench/src/bench-lateness.mjs`.",
    "",
    `| handler | deadline | ${config.states.map((s) => `${stateName(s)} p50 / p90 (floor) Δ | elu`).join(" | ")} |`,
    `|---|---|${config.states.map(() => "---:|---:|").join("")}`,
  ];
  const keys = [...new Set(cells.map((c) => `${c.handler}|${c.kind}|${c.d}`))];
  for (const key of keys) {
    const [handler, kind, d] = key.split("|");
    const show = (state) => {
      const c = cells.find((x) => `${x.handler}|${x.kind}|${x.d}` === key && x.state === state);
      if (c === undefined) return ["", ""];
      if (c.n === 0) return [`no sample (${c.errors.join(", ")})`, ""];
      const errs = c.errors.length ? ` (${c.errors.length} not by the deadline)` : "";
      return [
        `${f(c.p50)} / ${f(c.p90)} (${f(c.floorP90)}) **${signed(c.deltaP90)}**${errs}`,
        `${Math.round(c.elu * 100)} %`,
      ];
    };
    const duration = Number(d) >= 1000 ? `${Number(d) / 1000} s` : `${d} ms`;
    L.push(
      `| ${handler} | ${label[kind] ?? "sessionTimeout"} ${duration} | ${config.states.flatMap(show).join(" | ")} |`
    );
  }
  L.push("");
  return L;
}

/** The page's closing section: how to read the table. */
export const LATENESS_READING = [
  "## Reading it",
  "",
  "- Sockeye's deadlines sit in lists per duration under one native timer per handler (ref'd only while a request waits",
  "  on one), armed for the earliest expiry (`deadline-scheduler.ts`): a deadline fires when that timer does, confirmed",
  "  after the poll phase, so its lateness is a native timer's plus one poll phase. There is no tick: the duration does",
  "  not change the lateness, and 10 s or 10 minutes are scheduled exactly like 1 s, so they are reasoned, not run.",
  "- The socket idle watch notes every read and write of the request's socket (Node's own activity hook,",
  "  `_unrefTimer`) and, when its deadline comes due, re-arms it from the last one, so `socket` lateness is measured",
  "  from the last byte, as upstream's `socket.setTimeout()`.",
  "- Each cell starts on an established connection (a warm-up request the server answers), for every handler alike, so",
  "  a row is the deadline's alone, not a reconnect's: a stream that times out while its whole HTTP/2 session was",
  "  silent retires that session (docs/upstream-parity.md), and the next probe would pay a TLS handshake.",
  "- The floor is how late the event loop itself runs a timer at that moment; Δ is the handler's own share, for",
  "  Sockeye and upstream alike. Under load and with many in flight, the background goes through the same handler",
  "  (its deadlines on the same scheduler, its frames and bodies on the same event loop). Upstream's",
  "  `UndiciHttpHandler` leaves its timeouts to undici's own timers (coarse by design) and its pool has no socket",
  "  limit, so it has no in-flight cells.",
  "- Empty cells: a kind the handler does not have (HTTP/1 has no sessionTimeout, HTTP/2 no socketTimeout; upstream's",
  "  HTTP/2 handler has no connectionTimeout), or the in-flight state, which only the request kind runs (every kind is",
  "  the same `Deadline` on the same scheduler). `npm run bench:lateness -- --quick` (about 2 minutes) runs alone and",
  "  under load only, 8 probes per cell, and prints the table without touching this file.",
  "",
];
