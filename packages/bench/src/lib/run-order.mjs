// =============================================================================
// run-order.mjs: the order in which the clients of one round run their bursts.
//
// Not "rotate by one each round": rotation keeps the cyclic order, so the work a burst leaves behind (garbage, GC
// marking on helper threads) always lands on the same next client. A Williams design balances it: over one cycle of
// rows, every client runs in every position, and right after every other client, equally often (n rows for an even
// n, 2n for an odd n). Rows are handed out interleaved (for odd n: row 0, its mirror, row 1, its mirror, ...) so a
// prefix of a cycle is as balanced as it can be. Cost: O(n^2) per call (n = 3 in the focused checks).
// =============================================================================

/**
 * The rows of a Williams design for `n` clients: `n` rows for even `n`, `2n` for odd `n` (each a permutation of
 * 0..n-1), ordered as they should be used.
 * @param {number} n @returns {number[][]}
 */
export function williamsRows(n) {
  if (n <= 0) return [];
  if (n === 1) return [[0]];
  // First row: 0, 1, n-1, 2, n-2, 3, ...; row i adds i (mod n).
  const first = [0];
  for (let j = 1, lo = 1, hi = n - 1; j < n; j++) first.push(j % 2 === 1 ? lo++ : hi--);
  const cyclic = Array.from({ length: n }, (_, i) => first.map((x) => (x + i) % n));
  if (n % 2 === 0) return cyclic;
  const rows = [];
  for (const row of cyclic) rows.push(row, [...row].reverse());
  return rows;
}

/**
 * The clients of round `round` (0-based) in the order they run.
 * @template T @param {T[]} clients @param {number} round @returns {T[]}
 */
export function roundOrder(clients, round) {
  const rows = williamsRows(clients.length);
  return rows[round % rows.length].map((i) => clients[i]);
}
