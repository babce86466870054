// =============================================================================
// burst.mjs: run one burst of `n` requests with `c` in flight through a client
// and measure it; and how many requests a burst (and its warm-up) has at each c.
//
// Measured around the burst (and nothing else):
//   cpuUsPerReq   process.cpuUsage() delta (user+system, µs) / n  -- client process only,
//                 the server lives in another process
//   reqPerSec     n / wall-clock seconds
//   p50Us/p99Us   per-request latency from a perf_hooks.createHistogram (ns -> µs)
//   elu           performance.eventLoopUtilization() delta over the burst
//   timers        (only when a TimerCounter is passed) native Timeouts created / live peak
//
// Concurrency model: `c` async workers pull from a shared counter until `n`
// requests have been issued (closed loop). With c >= n every request is issued
// at once and the agent queues what its 50 sockets cannot take.
// =============================================================================

import { createHistogram } from "node:perf_hooks";

/**
 * Requests per measured burst, per concurrency. Chosen so the whole suite fits in
 * about 20 minutes on a 2-core VM: a floor burst lasts ~0.1-0.4 s, except c=10000, which
 * needs >= 10000 requests to have 10000 in flight and costs ~1.5-2.5 s per burst.
 * That cell alone is about half of the run time, so it gets no warm-up burst (the
 * c=1000 cell right before it has warmed every client up).
 */
const REQUESTS_PER_BURST = { 1: 300, 50: 600, 200: 600, 1000: 1200, 10000: 10000 };

/**
 * Requests in one measured burst at concurrency `c` (at least `c`), scaled by `scale`.
 * @param {number} c @param {number} [scale] @returns {number}
 */
export function requestsPerBurst(c, scale = 1) {
  return Math.max(c, Math.round((REQUESTS_PER_BURST[c] ?? Math.max(1000, 2 * c)) * scale));
}

/**
 * Warm-up burst per client before the measured ones (not recorded), for bursts of `n` at concurrency `c`; 0 = none.
 * @param {number} c @param {number} n @returns {number}
 */
export function warmupSize(c, n) {
  return c >= 10000 ? 0 : Math.min(n, Math.max(c, 200));
}

/**
 * @param {import("./clients.mjs").BenchClient} client
 * @param {{ n: number, c: number, path: string, counter?: import("./timer-counter.mjs").TimerCounter }} opts
 */
export async function runBurst(client, { n, c, path, counter }) {
  const hist = createHistogram();
  let issued = 0;
  let failed = 0;
  let firstError;

  async function worker() {
    while (issued < n) {
      issued++;
      const t0 = performance.now();
      try {
        await client.request(path);
      } catch (err) {
        failed++;
        firstError ??= err;
        continue;
      }
      // The histogram stores integers; record nanoseconds.
      hist.record(Math.max(1, Math.round((performance.now() - t0) * 1e6)));
    }
  }

  const workers = new Array(Math.min(c, n));
  counter?.enable();
  client.startBurst();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < workers.length; i++) workers[i] = worker();
  await Promise.all(workers);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  client.endBurst();
  const timers = counter?.disable();

  if (failed > 0) {
    const e = new Error(`${client.name}: ${failed}/${n} requests failed (c=${c}, ${path}): ${firstError?.message}`);
    e.cause = firstError;
    throw e;
  }
  return {
    n,
    c,
    wallMs,
    cpuUsPerReq: (cpu.user + cpu.system) / n,
    reqPerSec: n / (wallMs / 1000),
    p50Us: hist.percentile(50) / 1000,
    p99Us: hist.percentile(99) / 1000,
    elu: elu.utilization,
    ...(timers
      ? { timersPerReq: timers.created / n, timersCreated: timers.created, timersLivePeak: timers.livePeak }
      : {}),
  };
}
