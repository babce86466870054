/**
 * Saturation detection with the DEFAULT detector settings (1 s samples, K = 5, every other `saturation.*` at its
 * default) on real traffic to a real server on 127.0.0.1, through `UndiciHttpHandler` and `NodeHttpHandler` alike,
 * asserting the same exact report sequence of an overload that then drains: one `pool_capacity` saturation (trigger
 * `growth`), then one recovery — nothing else.
 *
 * Only the handler's clock and interval are fake (`performance`, `setInterval`): sockets, undici's own timers and
 * immediates stay real, so each simulated second is: arrivals and the server's answers happen for real, the spec
 * waits until the client saw them, then advances the clock by one sample period (the handler samples on its own
 * scheduler's one timer, as in production). The server holds every response until the spec releases it, so the load
 * is exact: 3 arrivals and 1 completion per second on 2 sockets during the overload.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { SaturationReport } from "@sockeye/pool-monitor";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { readAll, requestTo, waitFor } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

/** Both Sockeye HTTP/1 handlers must report the same exact sequence. */
const HANDLERS = [
  ["UndiciHttpHandler", UndiciHttpHandler],
  ["NodeHttpHandler", NodeHttpHandler],
] as const;

describe.each(HANDLERS)(
  "saturation detection through %s with default options (controlled clock, real sockets)",
  (_name, Handler) => {
    let server: http.Server;
    let port: number;
    const held: http.ServerResponse[] = [];
    beforeEach(async () => {
      vi.useFakeTimers({ toFake: ["performance", "setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      server = http.createServer((req, res) => {
        req.resume();
        req.on("end", () => held.push(res));
      });
      server.listen(0, "127.0.0.1");
      await new Promise((resolve) => server.once("listening", resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterEach(async () => {
      vi.useRealTimers();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });

    it("overload then drain: exactly one saturation (pool_capacity, queue growth), then exactly one recovery", async () => {
      const reports: SaturationReport[] = [];
      const warnings: string[] = [];
      const handler = new Handler({
        httpAgent: { maxSockets: 2 },
        onSaturation: (r) => reports.push(r),
        onRecovery: (r) => reports.push(r),
        logger: { debug() {}, info() {}, error() {}, trace() {}, warn: (m: string) => warnings.push(m) } as any,
      });
      const target = { protocol: "http:", hostname: "127.0.0.1", port };
      let started = 0;
      let completed = 0;
      const pending: Promise<void>[] = [];
      const arrive = (n: number) => {
        for (let i = 0; i < n; i++) {
          started++;
          pending.push(
            handler.handle(requestTo(target, { path: "/" })).then(async ({ response }) => {
              await readAll(response.body);
              completed++;
            })
          );
        }
      };
      /** One simulated second: arrivals, releases, wait for the client to see them, then one sample period. */
      const second = async (arrivals: number, releases: number) => {
        arrive(arrivals);
        const target = completed + releases;
        for (const res of held.splice(0, releases)) res.end("ok");
        await waitFor(() => completed === target, `${target} completions`);
        // The freed connections took the next queued requests (or there are none): the server holds min(2, rest).
        await waitFor(() => held.length === Math.min(2, started - completed), "the pool refilled from the queue");
        vi.advanceTimersByTime(1000);
      };

      // Overload: 3 arrivals and 1 completion per second on 2 sockets, for 9 s.
      let saturatedAfter = 0;
      for (let s = 1; s <= 9; s++) {
        await second(3, s === 1 ? 0 : 1);
        if (saturatedAfter === 0 && reports.length > 0) saturatedAfter = s;
      }
      if (process.env.SOCKEYE_SIM_REPORT)
        console.log(
          "saturated after",
          saturatedAfter,
          JSON.stringify(reports.map((r) => [r.state, r.cause, r.trigger, r.queued]))
        );
      expect(reports.map((r) => [r.state, r.cause])).toEqual([["saturated", "pool_capacity"]]);
      // Named at the K-th (5th) sample of a monotonically growing queue, neither earlier nor later.
      expect(saturatedAfter).toBe(5);
      expect(reports[0]).toMatchObject({ origin: `http://127.0.0.1:${port}`, maxSockets: 2, trigger: "growth" });
      expect(reports[0].queued).toBeGreaterThan(0);

      // Drain: no arrivals, the server answers everything; then light traffic (1 in, 1 out per second).
      while (started > completed) await second(0, held.length);
      for (let s = 0; s < 10 && reports.length < 2; s++) {
        arrive(1);
        await waitFor(() => held.length === 1, "the request reached the server");
        await second(0, 1);
      }
      expect(reports.map((r) => [r.state, r.cause ?? r.previousCause, r.trigger ?? null])).toEqual([
        ["saturated", "pool_capacity", "growth"],
        ["ok", "pool_capacity", null],
      ]);
      // A few more quiet seconds: nothing else is reported.
      for (let s = 0; s < 3; s++) await second(0, 0);
      expect(reports).toHaveLength(2);
      await Promise.all(pending);
      expect(handler.getPoolStats().totals).toMatchObject({ inFlight: 0, queued: 0, saturatedOrigins: 0 });
      expect(warnings.filter((w) => w.includes("socket usage at capacity"))).toHaveLength(1);
      handler.destroy();
    });
  }
);
