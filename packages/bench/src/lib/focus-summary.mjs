// =============================================================================
// focus-summary.mjs: the statistics of one focused check (bench-cpu.mjs), from its raw CPU series.
//
// A check runs in cycles of fresh clients; the rounds of one cycle share their instances, the cycles do not. So each
// cycle contributes one value (the median of its round ratios) and the interval is taken over the cycles. Each
// round's ratio is the subject's CPU over the mean of the two baseline instances of that round; the A/A control is
// the second baseline instance over the first.
// =============================================================================
import { median, medianInterval, pairedRatios } from "./stats.mjs";

/** Name suffix of the second baseline instance (the A/A control). */
export const CONTROL_SUFFIX = " (A/A)";

/** "met" / "missed" / "unresolved" for a ratio interval against a limit; "measured" when there is no limit. */
export function focusVerdict(interval, op, limit) {
  if (limit === undefined) return "measured";
  const within = (x) => (op === "<" ? x < limit : x <= limit);
  if (within(interval.high)) return "met";
  if (!within(interval.low)) return "missed";
  return "unresolved";
}

/**
 * One value per cycle (the median of its paired round ratios), then their median and 95 % interval: the cycles are
 * independent (fresh clients), the rounds of one cycle share their instances and are not.
 */
export function cycleSummary(ratios, roundsPerCycle) {
  const perCycle = [];
  for (let i = 0; i < ratios.length; i += roundsPerCycle) perCycle.push(median(ratios.slice(i, i + roundsPerCycle)));
  return { median: median(perCycle), ...medianInterval(perCycle), perRound: median(ratios) };
}

/**
 * A check's result from its raw CPU series (µs/request per client, in round order): the subject against the mean of
 * the two baseline instances of the same round (both instances measure the baseline; their mean halves any offset
 * between them), and the A/A control (second instance ÷ first). Exported so a result file can be re-derived.
 */
export function summarizeCheck(check, cpu, roundsPerCycle) {
  const subject = cpu[check.subject];
  const base = cpu[check.base];
  const twin = cpu[check.base + CONTROL_SUFFIX];
  const baseline = base.map((b, i) => (b + twin[i]) / 2);
  const ratio = cycleSummary(pairedRatios(subject, baseline), roundsPerCycle);
  const control = cycleSummary(pairedRatios(twin, base), roundsPerCycle);
  const controlOk = control.low <= 1 && control.high >= 1;
  return {
    ratio,
    control,
    controlOk,
    verdict: controlOk ? focusVerdict(ratio, check.op, check.limit) : "void (A/A control biased)",
  };
}
