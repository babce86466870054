// =============================================================================
// run-order.mjs: the order in which the clients of one round run their bursts.
//
// Why not "rotate by one each round": rotation keeps the cyclic order, so every client always runs right after the
// same other client. A burst leaves work behind (garbage the next burst's GC pays for, concurrent marking still
// running on helper threads), and that carry-over then lands on the same client every round: with three clients at
// c=1000, two identical instances of one client measured 0.955 (95 % interval 0.934-0.996) of each other.
//
// A Williams design balances it: over one full cycle of rows, every client runs in every position equally often,
// and every client runs right after every other client equally often (once each for an even number of clients,
// twice for an odd number, which needs 2n rows). Rows are handed out interleaved (for odd n: cyclic row 0, its
// mirror, cyclic row 1, its mirror, ...) so that a number of rounds that is not a multiple of the cycle is still as
// balanced as a prefix can be. Cost: O(n^2) per call (n = clients, 3 in the focused checks), once per round.
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
