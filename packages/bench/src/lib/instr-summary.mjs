// =============================================================================
// instr-summary.mjs: the pure parts of bench-instr.mjs (reading callgrind's total, summarising runs).
//
// A run is one client in one child process under callgrind, counting the instructions executed (all threads) while
// exactly `requests` requests run, after a warm-up: `{ client, repeat, instructions, requests }`, plus callgrind's
// named event totals (`events`) and the window's wall time (`windowMs`). Instruction
// counts of the same client repeat to about 1 % on this VM (time to ±20-50 % per burst), so a few repeats give a
// usable ratio. Summaries are per client (instructions per request: median, min, max over repeats) and per pair
// (subject ÷ base of the SAME repeat, then median, min, max over repeats).
// =============================================================================
import { median } from "./stats.mjs";

/** @typedef {{ median: number, min: number, max: number }} Spread */

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
 * What identifies a bench-instr configuration: runs with the same key replace each other in the result file, others
 * are kept (so the report can show e.g. the default run beside one without the reader).
 * @param {{ clients: string[], c: number, body: number, timeouts: boolean, reader: boolean, cacheSim: boolean,
 *   requests: number, warmup: number }} meta
 * @returns {string}
 */
export function instrConfigKey(meta) {
  return [
    meta.clients.join("+"),
    `c${meta.c}`,
    `${meta.body}B`,
    `timeouts-${meta.timeouts ? "on" : "off"}`,
    `reader-${meta.reader === false ? "off" : "on"}`,
    `cache-${meta.cacheSim ? "on" : "off"}`,
    `n${meta.requests}`,
    `w${meta.warmup}`,
  ].join(" ");
}

/**
 * The result file after a run: `{ results: [...] }`, the new result replacing one with the same configuration key.
 * @template {{ meta: any }} R
 * @param {{ results?: R[] } | undefined} existing the file's content, if any
 * @param {R} result
 * @returns {{ results: R[] }}
 */
export function mergeInstrResult(existing, result) {
  const key = instrConfigKey(result.meta);
  const kept = (existing?.results ?? []).filter((r) => instrConfigKey(r.meta) !== key);
  return { results: [...kept, result] };
}

/**
 * Every event total of a callgrind output file, by the names of its `events:` line (e.g. `Ir`, and with
 * `--cache-sim=yes` also `D1mr`, `DLmr`, ...).
 * @param {string} text the callgrind.out file's content
 * @returns {Record<string, number>}
 */
export function callgrindEvents(text) {
  const names = /^events:\s+(.+)$/m.exec(text)?.[1].trim().split(/\s+/) ?? [];
  const totals = /^totals:\s+(.+)$/m.exec(text)?.[1].trim().split(/\s+/).map(Number) ?? [];
  if (names.length === 0 || totals.length === 0) throw new Error("callgrind output has no 'events:' or 'totals:' line");
  // callgrind omits trailing zero totals.
  return Object.fromEntries(names.map((name, i) => [name, totals[i] ?? 0]));
}

/**
 * @param {{ client: string, repeat: number, instructions: number, requests: number,
 *   events?: Record<string, number> }[]} runs
 * @param {[string, string][]} pairs [subject, base] client names
 * @returns {{ clients: Record<string, { perRequest: Spread, runs: number, l1DataMisses?: Spread,
 *   lastLevelMisses?: Spread }>,
 *   pairs: { subject: string, base: string, ratio: Spread, repeats: number }[] }}
 */
export function summarizeInstr(runs, pairs) {
  /** @type {Record<string, number[]>} */
  const perClient = {};
  for (const r of runs) (perClient[r.client] ??= []).push(r.instructions / r.requests);
  const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
  /** Simulated cache misses per request (runs with `--cache-sim=yes` only): L1 data, and last level (data + code). */
  const missesOf = (name, pick) => {
    const xs = runs
      .filter((r) => r.client === name && r.events?.D1mr !== undefined)
      .map((r) => pick(r.events) / r.requests);
    return xs.length > 0 ? spread(xs) : undefined;
  };
  const clients = Object.fromEntries(
    Object.entries(perClient).map(([name, xs]) => {
      const l1 = missesOf(name, (e) => e.D1mr + e.D1mw);
      const ll = missesOf(name, (e) => e.DLmr + e.DLmw + e.ILmr);
      return [
        name,
        { perRequest: spread(xs), runs: xs.length, ...(l1 ? { l1DataMisses: l1, lastLevelMisses: ll } : {}) },
      ];
    })
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
