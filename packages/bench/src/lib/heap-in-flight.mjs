// =============================================================================
// heap-in-flight.mjs: heap bytes retained per in-flight request.
//
// How (one sample):
//   1. gc() twice (needs node --expose-gc) and read heapUsed   <- BASELINE only
//   2. tell the server to hold /hold/* requests, issue N requests
//   3. wait until the server holds min(N, 50) of them (the rest wait in the
//      client's agent/pool queue, exactly as SDK callers would), then let the
//      loop settle for SETTLE_MS
//   4. read heapUsed again -- NO gc here, so garbage made while dispatching
//      counts too (it is real pressure the request put on the heap)
//   5. (after - baseline) / N                                   <- the reported number
//   6. supplementary, AFTER step 4 so it cannot change it: gc() twice and read
//      heapUsed again; (retained - baseline) / N is what the requests keep alive,
//      and (after - retained) / N the not-yet-collected garbage of dispatching.
//      This splits the reported number into "kept" and "churned" to explain it.
//   7. release everything and await completion
//
// What it includes: everything the client keeps per request while it waits:
// request objects, promises, closures, native Timeout objects, queue entries.
// =============================================================================

import { MAX_SOCKETS } from "./clients.mjs";
import { waitForServer } from "./server-control.mjs";

/** How long to let the loop settle after the server holds its share (ms). */
export const SETTLE_MS = 50;

/**
 * @param {import("./clients.mjs").BenchClient} client
 * @param {import("./server-control.mjs").LoadServer} server
 * @param {number} n requests to hold in flight
 * @returns {Promise<{ bytesPerRequest: number, retainedPerRequest: number }>} heap bytes per in-flight
 *   request (no GC before the reading) and the supplementary retained-after-gc() figure
 */
export async function heapPerInFlightRequest(client, server, n) {
  if (typeof globalThis.gc !== "function") throw new Error("heap pass needs `node --expose-gc`");
  await server.hold();
  globalThis.gc();
  globalThis.gc();
  const base = process.memoryUsage().heapUsed;
  const pending = new Array(n);
  for (let i = 0; i < n; i++) pending[i] = client.request("/hold/128");
  await waitForServer(server, (s) => s.held >= Math.min(n, MAX_SOCKETS));
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const after = process.memoryUsage().heapUsed;
  globalThis.gc();
  globalThis.gc();
  const retained = process.memoryUsage().heapUsed;
  await server.release();
  await Promise.all(pending);
  return { bytesPerRequest: (after - base) / n, retainedPerRequest: (retained - base) / n };
}
