// =============================================================================
// burst.mjs: one measured burst of `n` requests with `c` in flight through a client (closed loop: `c` workers pull
// from a shared counter until `n` have been issued), and how many requests a burst and its warm-up have at each c.
// Measured around the burst and nothing else: client CPU (process.cpuUsage, user + system; the server is another
// process) per request.
// =============================================================================

/**
 * Requests per measured burst: a burst lasts ~0.1-0.4 s, except at c=10000, which needs 10,000 requests to have
 * 10,000 in flight (1.5-3 s per burst).
 */
const REQUESTS_PER_BURST = { 1: 300, 50: 600, 200: 600, 1000: 1200, 10000: 10000 };

/**
 * Requests in one measured burst at concurrency `c` (at least `c`).
 * @param {number} c @returns {number}
 */
export function requestsPerBurst(c) {
  return Math.max(c, REQUESTS_PER_BURST[c] ?? Math.max(1000, 2 * c));
}

/**
 * Warm-up burst per client before the measured ones (not recorded), for bursts of `n` at concurrency `c`.
 * @param {number} c @param {number} n @returns {number}
 */
export function warmupSize(c, n) {
  return Math.min(n, Math.max(c, 200));
}

/**
 * Runs `n` requests, `c` at a time; every failure is collected and the first one thrown at the end.
 * @param {import("./clients.mjs").BenchClient} client
 * @param {{ n: number, c: number, path: string }} burst
 * @returns {Promise<{ cpuUsPerReq: number }>}
 */
export async function runBurst(client, { n, c, path }) {
  let issued = 0;
  let failed = 0;
  let firstError;
  const worker = async () => {
    while (issued < n) {
      issued++;
      try {
        await client.request(path);
      } catch (err) {
        failed++;
        firstError ??= err;
      }
    }
  };
  client.startBurst();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: Math.min(c, n) }, worker));
  const cpu = process.cpuUsage(cpu0);
  client.endBurst();
  if (failed > 0) {
    throw new Error(`${client.name}: ${failed}/${n} requests failed (c=${c}, ${path})`, { cause: firstError });
  }
  return { cpuUsPerReq: (cpu.user + cpu.system) / n };
}
