// =============================================================================
// lateness-summary.mjs: the numbers and the table of bench-lateness.mjs's "alone / under load" section (method in
// lateness-under-load.mjs), kept apart from the handlers so they are tested without starting any.
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

/** The section's Markdown: one row per (handler, kind, d), alone and under load side by side. */
export function underLoadMarkdown(cells, config) {
  const f = (x) => (Number.isNaN(x) ? "–" : x.toFixed(1));
  const signed = (x) => (Number.isNaN(x) ? "–" : `${x >= 0 ? "+" : ""}${x.toFixed(1)}`);
  const label = {
    request: "requestTimeout",
    socket: "socketTimeout",
    connection: "connectionTimeout",
    session: "sessionTimeout",
  };
  const L = [
    "## Alone and under load (the method of issue 34)",
    "",
    `Lateness in ms of each deadline, p50 / p90, beside a native \`setTimeout\` armed in the same tick (the floor's p90),`,
    `and Δ = p90 of (probe − its own floor): what the handler adds to the event loop's own lateness. "under load": ${config.loadConcurrency}`,
    "requests in flight through the same handler, back to back, each a 64 KiB response read to its end (servers in a",
    `child process); ${config.loadProbes} probes per cell, issued d / ${config.loadProbes} apart (connectionTimeout and sessionTimeout: one`,
    "after the other).",
    "elu = the client's event-loop utilisation during the cell. Method: `src/lib/lateness-under-load.mjs`.",
    "",
    "| handler | deadline | alone p50 / p90 (floor) Δ | elu | under load p50 / p90 (floor) Δ | elu |",
    "|---|---|---:|---:|---:|---:|",
  ];
  const keys = [];
  for (const c of cells) {
    const key = `${c.handler}|${c.kind}|${c.d}`;
    if (!keys.includes(key)) keys.push(key);
  }
  for (const key of keys) {
    const [handler, kind, d] = key.split("|");
    const cell = (state) => cells.find((c) => `${c.handler}|${c.kind}|${c.d}` === key && c.state === state);
    const show = (c) => {
      if (c === undefined) return ["", ""];
      if (c.n === 0) return [`no sample (${c.errors.join(", ")})`, ""];
      const errs = c.errors.length ? ` (${c.errors.length} not by the deadline)` : "";
      return [
        `${f(c.p50)} / ${f(c.p90)} (${f(c.floorP90)}) **${signed(c.deltaP90)}**${errs}`,
        `${Math.round(c.elu * 100)} %`,
      ];
    };
    L.push(
      `| ${handler} | ${label[kind]} ${Number(d) >= 1000 ? `${Number(d) / 1000} s` : `${d} ms`} | ${[...show(cell("alone")), ...show(cell("under load"))].join(" | ")} |`
    );
  }
  L.push("");
  return L;
}
