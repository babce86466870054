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

/** @param {number[]} xs @returns {{median:number,min:number,max:number,n:number}} */
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
