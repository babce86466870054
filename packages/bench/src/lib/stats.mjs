// =============================================================================
// stats.mjs: small, dependency-free statistics used by the report.
// =============================================================================

/** @param {number[]} xs */
export function median(xs) {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
  if (a.length === 0) return Number.NaN;
  const mid = a.length >> 1;
  return a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2;
}

/**
 * Quantile `p` (0..1) of `xs`, linearly interpolated between the two nearest order statistics.
 * @param {number[]} xs @param {number} p
 */
export function quantile(xs, p) {
  const a = xs.filter((x) => Number.isFinite(x)).sort((u, v) => u - v);
  if (a.length === 0) return Number.NaN;
  const pos = (a.length - 1) * p;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, a.length - 1);
  return a[lo] + (a[hi] - a[lo]) * (pos - lo);
}

/**
 * Median, interquartile range (q1, q3), min, max and count of the finite values of `xs`.
 * @param {number[]} xs @returns {{median:number,q1:number,q3:number,min:number,max:number,n:number}}
 */
export function summary(xs) {
  const a = xs.filter((x) => Number.isFinite(x));
  return {
    median: median(a),
    q1: quantile(a, 0.25),
    q3: quantile(a, 0.75),
    min: Math.min(...a),
    max: Math.max(...a),
    n: a.length,
  };
}

/** Paired ratios a[i] / b[i] for rounds where both exist. */
export function pairedRatios(a, b) {
  const out = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (Number.isFinite(a[i]) && Number.isFinite(b[i]) && b[i] !== 0) out.push(a[i] / b[i]);
  }
  return out;
}
