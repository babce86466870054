// =============================================================================
// instr-summary.mjs: the pure parts of bench-instr.mjs (reading callgrind's total, summarising runs).
//
// A run is one client in one child process under callgrind, counting the instructions executed (all threads) while
// exactly `requests` requests run, after a warm-up: `{ client, repeat, instructions, requests }`. Instruction
// counts of the same client repeat to about 1 % on this VM (time to ±20-50 % per burst), so a few repeats give a
// usable ratio. Summaries are per client (instructions per request: median, min, max over repeats) and per pair
// (subject ÷ base of the SAME repeat, then median, min, max over repeats).
// =============================================================================
import { median } from "./stats.mjs";

/**
 * The total event count of a callgrind output file (its `totals:` line; with `--instr-atstart=no` and
 * instrumentation switched on for a window, the instructions executed in that window).
 * @param {string} text the callgrind.out file's content
 * @returns {number}
 */
export function callgrindTotal(text) {
  const m = /^totals:\s+(\d+)/m.exec(text);
  if (!m) throw new Error("callgrind output has no 'totals:' line (was the measured window ever switched on?)");
  return Number(m[1]);
}

/**
 * @param {{ client: string, repeat: number, instructions: number, requests: number }[]} runs
 * @param {[string, string][]} pairs [subject, base] client names
 * @returns {{ clients: Record<string, { perRequest: { median: number, min: number, max: number }, runs: number }>,
 *   pairs: { subject: string, base: string, ratio: { median: number, min: number, max: number }, repeats: number }[] }}
 */
export function summarizeInstr(runs, pairs) {
  /** @type {Record<string, number[]>} */
  const perClient = {};
  for (const r of runs) (perClient[r.client] ??= []).push(r.instructions / r.requests);
  const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
  const clients = Object.fromEntries(
    Object.entries(perClient).map(([name, xs]) => [name, { perRequest: spread(xs), runs: xs.length }])
  );
  const byRepeat = (name) => new Map(runs.filter((r) => r.client === name).map((r) => [r.repeat, r]));
  const pairRows = [];
  for (const [subject, base] of pairs) {
    const s = byRepeat(subject);
    const b = byRepeat(base);
    const ratios = [];
    for (const [repeat, rs] of s) {
      const rb = b.get(repeat);
      if (rb) ratios.push(rs.instructions / rs.requests / (rb.instructions / rb.requests));
    }
    if (ratios.length > 0) pairRows.push({ subject, base, ratio: spread(ratios), repeats: ratios.length });
  }
  return { clients, pairs: pairRows };
}
