/**
 * The `_OTHER` entry of the undici telemetry (origins beyond `saturation.maxOrigins`) against three real servers on
 * 127.0.0.1, http and https (the committed self-signed fixture, trusted through `httpsAgent.ca`): its limit and gauges are sums over the undici pools of its origins (one `Pool` each), a pool
 * the Agent drops and recreates is counted once, and the detector gets per-pool evidence (one saturated origin of
 * `_OTHER` is reported, idle capacity of another origin does not hide it; nothing is reported otherwise).
 *
 * Origin A takes the only tracked slot (`maxOrigins: 1`); B and C overflow into `_OTHER`. Every server holds each
 * response until the spec releases it, so socket counts are exact. The detection tests fake only the handler's clock
 * and interval (`performance`, `setInterval`), as the detection spec does: sockets and undici's timers stay real.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { OVERFLOW_ORIGIN, type OriginStats, type SaturationReport } from "@sockeye/pool-monitor";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CA, delay, KEY, readAll, requestTo, waitFor } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

interface HoldingServer {
  server: http.Server;
  protocol: "http:" | "https:";
  hostname: string;
  port: number;
  /** Responses held until released, oldest first. */
  held: http.ServerResponse[];
  release(n?: number): void;
  /** Releases every held response and answers later requests at once. */
  answerAll(): void;
}

type Kind = "http" | "https";

async function startHoldingServer(kind: Kind): Promise<HoldingServer> {
  const held: http.ServerResponse[] = [];
  let holding = true;
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    req.resume();
    req.on("end", () => (holding ? held.push(res) : res.end("ok")));
  };
  const server =
    kind === "https" ? https.createServer({ key: KEY, cert: CA }, onRequest) : http.createServer(onRequest);
  // Idle keep-alive connections stay open for the whole test (an idle pool must stay live where a test says so).
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const release = (n = held.length): void => {
    for (const res of held.splice(0, n)) res.end("ok");
  };
  return {
    server,
    protocol: `${kind}:`,
    hostname: "127.0.0.1",
    port: (server.address() as AddressInfo).port,
    held,
    release,
    answerAll() {
      holding = false;
      release();
    },
  };
}

const quiet = { debug() {}, info() {}, error() {}, trace() {}, warn() {} } as any;

describe.each(["http", "https"] as const)("_OTHER aggregates the undici pools of its origins (%s)", (kind) => {
  let servers: HoldingServer[];
  let a: HoldingServer;
  let b: HoldingServer;
  let c: HoldingServer;
  let handler: UndiciHttpHandler;
  let pending: Promise<unknown>[];
  let reports: SaturationReport[];

  beforeEach(async () => {
    servers = await Promise.all([startHoldingServer(kind), startHoldingServer(kind), startHoldingServer(kind)]);
    [a, b, c] = servers;
    pending = [];
    reports = [];
    handler = new UndiciHttpHandler({
      ...(kind === "https" ? { httpsAgent: { maxSockets: 2, ca: CA } } : { httpAgent: { maxSockets: 2 } }),
      saturation: { maxOrigins: 1 },
      // Idle connections outlive the detection tests' 8 fake seconds (the default closes them after 4).
      idleSocketTimeout: 60_000,
      onSaturation: (r) => reports.push(r),
      onRecovery: (r) => reports.push(r),
      logger: quiet,
    });
  });

  afterEach(async () => {
    vi.useRealTimers();
    // A test that passed settled everything already; after a failure, destroy() rejects whatever is left.
    handler.destroy();
    for (const s of servers) s.answerAll();
    await Promise.allSettled(pending);
    for (const s of servers) s.server.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.server.close(resolve))));
  });

  /** Sends `n` requests to `server`; each resolves once its body was read. */
  const send = (server: HoldingServer, n = 1): Promise<unknown>[] => {
    const sent: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      sent.push(handler.handle(requestTo(server, { path: "/" })).then(({ response }) => readAll(response.body)));
    }
    pending.push(...sent);
    return sent;
  };

  /** One request to `server`, answered at once: its pool exists afterwards, with one idle connection. */
  const warm = async (server: HoldingServer): Promise<void> => {
    const [done] = send(server);
    await waitFor(() => server.held.length === 1, `a request on port ${server.port}`);
    server.release();
    await done;
    // undici frees the connection just after the body ended.
    await waitFor(() => handler.getPoolStats().totals.active === 0, "the connection back in the pool");
  };

  /** Every request settled, every connection back in its pool. */
  const drained = async (): Promise<void> => {
    await Promise.all(pending);
    await waitFor(() => handler.getPoolStats().totals.active === 0, "every connection back in its pool");
  };

  const other = (): OriginStats | undefined => handler.getPoolStats().origins.find((o) => o.origin === OVERFLOW_ORIGIN);

  it("reports the summed limit and active sockets of the overflowed origins' pools", async () => {
    await warm(a);
    send(b, 2);
    send(c, 2);
    await waitFor(() => b.held.length === 2 && c.held.length === 2, "2 held requests on B and on C");
    const origins = handler.getPoolStats().origins.map((o) => o.origin);
    expect(origins).toEqual([`${kind}://127.0.0.1:${a.port}`, OVERFLOW_ORIGIN]);
    // Before the fix: maxSockets 2 and active 2 (the latest pool's, C's, only).
    expect(other()).toMatchObject({ maxSockets: 4, active: 4, idle: 0, queued: 0, inFlight: 4 });
    b.release();
    c.release();
    await drained();
    expect(other()).toMatchObject({ maxSockets: 4, active: 0, idle: 4, queued: 0, inFlight: 0 });
  });

  it("counts a pool the Agent dropped and recreated for the same origin once", async () => {
    await warm(a);
    await warm(b);
    await warm(c);
    expect(other()).toMatchObject({ maxSockets: 4, idle: 2 });
    // B's server closes its idle connection: undici's Agent closes B's pool and creates a new one on the next request.
    b.server.closeAllConnections();
    await waitFor(() => other()?.idle === 1, "B's pool closed by the Agent");
    expect(other()).toMatchObject({ maxSockets: 2 });
    send(b, 2);
    send(c, 2);
    await waitFor(() => b.held.length === 2 && c.held.length === 2, "2 held requests on B and on C");
    expect(other()).toMatchObject({ maxSockets: 4, active: 4, idle: 0 });
    b.release();
    c.release();
    await drained();
    expect(other()).toMatchObject({ maxSockets: 4, active: 0, idle: 4, inFlight: 0 });
  });

  describe("detection with per-pool evidence (controlled clock)", () => {
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ["performance", "setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    });

    /** Pools of B then C (C's registered last), each with one idle connection; A takes the tracked slot. */
    const warmAll = async (): Promise<void> => {
      await warm(a);
      await warm(b);
      await warm(c);
      expect(other()).toMatchObject({ maxSockets: 4, idle: 2, active: 0 });
    };

    it("one saturated origin of _OTHER (B full with a queue, C idle) is reported as _OTHER saturated", async () => {
      await warmAll();
      send(b, 3);
      await waitFor(() => b.held.length === 2, "B's 2 sockets busy");
      // 1 more queued request on B per second, nothing completes: B's pool is full and its queue grows.
      for (let s = 1; s <= 8 && reports.length === 0; s++) {
        vi.advanceTimersByTime(1000);
        send(b, 1);
        await waitFor(() => other()?.queued === s + 1, `${s + 1} queued on B`);
      }
      // The entry as a whole has C's idle socket: 2 active of 4, which alone would never look saturated.
      expect(other()).toMatchObject({ maxSockets: 4, active: 2, idle: 1 });
      expect(reports.map((r) => [r.origin, r.state])).toEqual([[OVERFLOW_ORIGIN, "saturated"]]);
      expect(reports[0]).toMatchObject({ maxSockets: 2, active: 2 });
      expect(other()?.saturation.state).toBe("saturated");
      b.answerAll();
      await drained();
    });

    it("with no pool saturated (B full without a queue, C half busy), nothing is reported", async () => {
      await warmAll();
      send(b, 2);
      send(c, 1);
      await waitFor(() => b.held.length === 2 && c.held.length === 1, "2 held on B, 1 on C");
      for (let s = 1; s <= 8; s++) {
        vi.advanceTimersByTime(1000);
        await delay(5);
      }
      expect(other()).toMatchObject({ maxSockets: 4, active: 3, queued: 0 });
      expect(reports).toEqual([]);
      expect(other()?.saturation.state).toBe("ok");
      b.release();
      c.release();
      await drained();
    });
  });
});
