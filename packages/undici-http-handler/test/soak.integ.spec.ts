/**
 * Soak through Sockeye's `UndiciHttpHandler`: a few thousand requests of the mixed load of `soak-load.ts` (normal,
 * aborted at every phase, timed out, bodies left unread then destroyed or reset by the server) on a real loopback
 * http server, bounded in count (and, on a slow machine, in time). One run, asserted in four tests:
 * - zero uncaught exceptions and unhandled rejections over the whole run;
 * - `getPoolStats()` counters add up: every `handle()` call is counted as started, and every started request ends
 *   as exactly one of completed / failed / aborted / timed out; the timed-out count is the load's own;
 * - the heap after GC is flat between the end of a warm-up third and the end of the run;
 * - nothing is left after `destroy()`: connections at the server, ref'd timers and handles, in-flight requests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeResources } from "../../node-http-handler/test/active-resources";
import { processFaultCapture } from "../../node-http-handler/test/process-fault-capture";
import { startServer, type TestServer, waitFor } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "../src/index";
import { heapUsedAfterGc } from "../../pool-monitor/test/heap-after-gc";
import { ABORTING_KINDS, runSoakLoad, type SoakTally } from "./soak-load";

const TOTAL = 3000;
const CONCURRENCY = 24;
/** Heap growth allowed between the two measurements: well below 1 KiB per request of the measured part. */
const HEAP_SLACK_BYTES = 1.5 * 1024 * 1024;

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe("soak through UndiciHttpHandler (mixed load, aborts at every phase, timeouts, unread bodies)", () => {
  const capture = processFaultCapture();
  let server: TestServer;
  let tally: SoakTally;
  let heap: { warm: number; end: number };
  let stats: ReturnType<UndiciHttpHandler["getPoolStats"]>;
  let left: { openConnections: number; refTimers: number; refHandles: number; inFlight: number };
  let faults: { uncaught: string[]; unhandled: string[] };

  beforeAll(async () => {
    capture.install();
    server = await startServer("http");
    const before = activeResources();
    const handler = new UndiciHttpHandler({
      httpAgent: { maxSockets: 16 },
      requestTimeout: 100,
      throwOnRequestTimeout: true,
      logger: quiet,
    });
    try {
      tally = await runSoakLoad(handler, server, { total: TOTAL / 3, concurrency: CONCURRENCY, maxMs: 8_000 });
      // The test server records every request: forget them, so that only the client side is measured.
      server.received.length = 0;
      const warm = await heapUsedAfterGc();
      await runSoakLoad(handler, server, { total: (2 * TOTAL) / 3, concurrency: CONCURRENCY, maxMs: 16_000, tally });
      // Requests whose bodies were left unread end when the server's reset arrives: let them be counted.
      await waitFor(() => handler.getPoolStats().totals.inFlight === 0, "nothing in flight", 3_000).catch(() => {});
      server.received.length = 0;
      const end = await heapUsedAfterGc();
      heap = { warm, end };
      stats = handler.getPoolStats();
    } finally {
      handler.destroy();
    }
    await waitFor(() => server.openConnections === 0, "connections closed", 2_000).catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 10));
    const now = activeResources();
    left = {
      openConnections: server.openConnections,
      refTimers: Math.max(0, now.timers - before.timers),
      refHandles: Math.max(0, now.handles - before.handles),
      inFlight: handler.getPoolStats().totals.inFlight,
    };
    faults = capture.take();
    if (process.env.SOCKEYE_SOAK_PRINT)
      console.log(JSON.stringify({ tally, heap, stats: stats.origins, left, faults: faults.uncaught.length }));
  }, 40_000);

  afterAll(async () => {
    capture.uninstall();
    await server?.close();
  });

  it("zero uncaught exceptions and unhandled rejections", () => {
    expect(faults).toEqual({ uncaught: [], unhandled: [] });
  });

  it("getPoolStats() counters add up to the requests sent", () => {
    expect(tally.sent).toBe(TOTAL);
    const count = (kinds: readonly string[], keep: (outcome: string) => boolean) =>
      kinds.reduce(
        (n, kind) => n + Object.entries(tally.outcomes[kind] ?? {}).reduce((m, [o, c]) => m + (keep(o) ? c : 0), 0),
        0
      );
    const timedOut = count(Object.keys(tally.outcomes), (o) => o === "TimeoutError/ETIMEDOUT");
    // Aborted by the load: every outcome of an aborting kind that is neither a timeout nor a clean end.
    const aborted = count(ABORTING_KINDS, (o) => o !== "TimeoutError/ETIMEDOUT" && o !== "ok");
    const r = stats.origins[0]!.requests;
    // A request aborted before handle() looked at it (an aborted signal) is rejected without being counted.
    const untracked = tally.sent - r.started;
    expect(untracked).toBeGreaterThanOrEqual(tally.outcomes["abort-before"]?.["AbortError/-"] ?? 0);
    expect(r.aborted + untracked).toBe(aborted);
    expect(r.timedOut).toBe(timedOut);
    expect(r.completed + r.failed + r.aborted + r.timedOut).toBe(r.started);
    expect(stats.totals).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it("the heap after GC is flat from the warm-up to the end", () => {
    expect(heap.end - heap.warm).toBeLessThan(HEAP_SLACK_BYTES);
  });

  it("nothing is left after destroy()", () => {
    expect(left).toEqual({ openConnections: 0, refTimers: 0, refHandles: 0, inFlight: 0 });
  });
});
