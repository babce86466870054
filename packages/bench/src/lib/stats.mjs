// =============================================================================
// stats.mjs: small, dependency-free statistics of the benchmarks.
// =============================================================================

/** @param {number[]} xs */
export function median(xs) {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
  if (a.length === 0) return Number.NaN;
  const mid = a.length >> 1;
  return a.length % 2 ? a[mid] : (a[mid - 1] + a[mid]) / 2;
}

/** The `q` quantile (0..1) of the finite values of `xs`, linearly interpolated. */
export function quantile(xs, q) {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, r) => p - r);
  if (a.length === 0) return Number.NaN;
  const at = (a.length - 1) * q;
  const lo = Math.floor(at);
  return a[lo] + (a[Math.min(lo + 1, a.length - 1)] - a[lo]) * (at - lo);
}

/**
 * Median, min, max and count of the finite values of `xs`.
 * @param {number[]} xs @returns {{ median: number, min: number, max: number, n: number }}
 */
export function summary(xs) {
  const a = xs.filter((x) => Number.isFinite(x));
  return { median: median(a), min: Math.min(...a), max: Math.max(...a), n: a.length };
}

/** Paired ratios a[i] / b[i] for rounds where both exist. */
export function pairedRatios(a, b) {
  const out = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (Number.isFinite(a[i]) && Number.isFinite(b[i]) && b[i] !== 0) out.push(a[i] / b[i]);
  }
  return out;
}

/**
 * Distribution-free confidence interval for the median of `xs` (no assumption about the shape of the spread): the
 * order statistics x(k) and x(n+1-k) (1-based) with the largest k for which P(Binomial(n, 1/2) <= k-1) <= (1-level)/2.
 * Its actual coverage (>= level) is returned with it. Fewer than 6 values cannot give a 95 % interval: the whole range
 * is returned then, with its (lower) coverage.
 * @param {number[]} xs @param {number} [level] 0..1, default 0.95
 * @returns {{ low: number, high: number, coverage: number, k: number, n: number }}
 */
export function medianInterval(xs, level = 0.95) {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
  const n = a.length;
  if (n === 0) return { low: Number.NaN, high: Number.NaN, coverage: 0, k: 0, n };
  const alpha = (1 - level) / 2;
  // k is the largest j with P(X <= j-1) <= alpha; P(X = i) is walked up in log space (exact enough for any n here).
  let logPmf = -n * Math.LN2; // P(X = 0)
  let cdf = 0;
  let k = 0;
  let tail = 0;
  for (let j = 1; j <= (n + 1) / 2; j++) {
    cdf += Math.exp(logPmf); // P(X <= j-1)
    if (cdf > alpha) break;
    k = j;
    tail = cdf;
    logPmf += Math.log((n - (j - 1)) / j); // P(X = j)
  }
  if (k === 0) {
    // Even the whole range covers less than asked: return it with its coverage.
    return { low: a[0], high: a[n - 1], coverage: 1 - 2 * Math.exp(-n * Math.LN2), k: 1, n };
  }
  return { low: a[k - 1], high: a[n - k], coverage: 1 - 2 * tail, k, n };
}
