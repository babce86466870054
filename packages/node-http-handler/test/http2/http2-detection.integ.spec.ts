/**
 * HTTP/2 saturation detection on real SDK traffic with the DEFAULT detector settings (1 s samples, K = 5,
 * `stallAfterMs` 30 s) and the default pool bounds (`maxSessionsPerOrigin` 4, `maxIsolatedSessionsPerOrigin` 50 unless
 * a scenario is about that bound), asserting the exact sequence of reports.
 *
 * Traffic: a real `SQSClient` from `@aws-sdk/client-sqs` (AWS JSON 1.0, the client installed at the root; no
 * generated HTTP/2 client is) with `requestHandler: new NodeHttp2Handler(...)`, against a real TLS `http2` server on
 * 127.0.0.1 (port 0) that announces `maxConcurrentStreams: 2` and holds every stream until the spec releases it. So
 * the pool has 4 sessions × 2 streams = 8 stream slots, and the load is exact.
 *
 * Clock: only the clock and timers are fake (`performance`, `setTimeout`/`clearTimeout` for the handler's one
 * scheduler timer, `setInterval`/`clearInterval`); sockets, TLS, the SDK's I/O and `setImmediate` stay real
 * (`waitFor` polls on the real `setTimeout`). Each simulated second: arrivals and releases happen for
 * real, the spec waits until the client saw them (completions counted, the freed slots refilled from the queue),
 * then advances the clock by one sample period; the handler samples on its own shared interval, as in production.
 * The server stamps held streams with the same fake clock, so a "20 s long poll" is 20 simulated seconds.
 */
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import type { SaturationReport } from "@sockeye/pool-monitor";
import { timing } from "@sockeye/pool-monitor/internal";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { NodeHttp2Handler, type NodeHttp2HandlerOptions } from "../../src/index";
import { CA, waitFor } from "./h2-servers";

/**
 * One sample period of fake time, then one real event-loop turn: the handler's scheduler confirms what came due
 * (its sample tick included) from a `setImmediate`, after the poll phase, as in production.
 */
async function advanceSecond(): Promise<void> {
  vi.advanceTimersByTime(1000);
  await new Promise((resolve) => setImmediate(resolve));
}

const KEY = readFileSync(join(__dirname, "..", "fixtures", "localhost-key.pem"));
const SLOTS = 4 * 2; // default maxSessionsPerOrigin × the server's maxConcurrentStreams

interface Held {
  stream: http2.ServerHttp2Stream;
  target: string;
  /** Fake-clock time the stream was received. */
  at: number;
}

/** A TLS h2 server speaking just enough of SQS's JSON protocol; every stream waits for `release()`. */
class HoldingSqsServer {
  readonly held: Held[] = [];
  private readonly server = http2.createSecureServer({
    key: KEY,
    cert: CA,
    allowHTTP1: false,
    settings: { maxConcurrentStreams: 2 },
  });
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  sessionsAccepted = 0;

  async start(): Promise<string> {
    this.server.on("session", (session) => {
      this.sessionsAccepted++;
      this.sessions.add(session);
      session.on("close", () => this.sessions.delete(session));
      session.on("error", () => {});
    });
    this.server.on("stream", (stream, headers) => {
      stream.on("error", () => {});
      stream.resume();
      stream.on("end", () => {
        this.held.push({ stream, target: String(headers["x-amz-target"]), at: performance.now() });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `https://localhost:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers the `n` oldest held streams (all when `n` is omitted). */
  release(n = this.held.length): void {
    for (const { stream, target } of this.held.splice(0, n)) this.answer(stream, target);
  }

  /** Answers the held streams received at least `ms` ago on the fake clock. */
  releaseOlderThan(ms: number): number {
    const now = performance.now();
    let n = 0;
    while (n < this.held.length && now - this.held[n].at >= ms) n++;
    this.release(n);
    return n;
  }

  private answer(stream: http2.ServerHttp2Stream, target: string): void {
    if (stream.destroyed) return;
    const body =
      target === "AmazonSQS.GetQueueUrl" ? { QueueUrl: "https://localhost/123456789012/q" } : { Messages: [] };
    stream.respond({ ":status": 200, "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": "h2-1" });
    stream.end(JSON.stringify(body));
  }

  close(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let server: HoldingSqsServer;
let endpoint: string;
const running: { handler: NodeHttp2Handler; client: SQSClient }[] = [];

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ["performance", "setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
  server = new HoldingSqsServer();
  endpoint = await server.start();
});

afterEach(async () => {
  for (const { handler, client } of running.splice(0)) {
    client.destroy();
    handler.destroy();
  }
  vi.useRealTimers();
  await server.close();
});

/** A handler (defaults unless `options` says otherwise) behind a real SQS client, recording every report. */
function setup(options: NodeHttp2HandlerOptions = {}) {
  const reports: SaturationReport[] = [];
  const warnings: string[] = [];
  const handler = new NodeHttp2Handler({
    nodeHttp2ConnectOptions: { ca: CA },
    onSaturation: (r) => reports.push(r),
    onRecovery: (r) => reports.push(r),
    logger: { debug() {}, info() {}, error() {}, trace() {}, warn: (m: string) => warnings.push(m) } as never,
    ...options,
  });
  const client = new SQSClient({
    region: "us-east-1",
    endpoint,
    credentials: { accessKeyId: "AKIDH2DETECTION", secretAccessKey: "h2-detection-secret" },
    requestHandler: handler,
  });
  running.push({ handler, client });
  const t0 = performance.now();
  const state = { started: 0, completed: 0, failed: 0, pending: [] as Promise<void>[] };
  const track = (p: Promise<unknown>) => {
    state.started++;
    state.pending.push(
      p.then(
        () => {
          state.completed++;
        },
        () => {
          state.failed++;
        }
      )
    );
  };
  const arrive = (n: number) => {
    for (let i = 0; i < n; i++) track(client.send(new GetQueueUrlCommand({ QueueName: "q" })));
  };
  const startedInHandler = () => handler.getPoolStats().origins[0]?.requests.started ?? 0;
  /** Waits until every call so far reached the handler and the server holds as many streams as there are slots. */
  const settled = async (slots: number) => {
    await waitFor(() => startedInHandler() === state.started);
    await waitFor(() => server.held.length === Math.min(slots, state.started - state.completed - state.failed));
  };
  /** One simulated second: arrivals, releases, the client sees them, then one sample period. */
  const second = async (arrivals: number, releases: number, slots = SLOTS) => {
    arrive(arrivals);
    const target = state.completed + releases;
    server.release(releases);
    await waitFor(() => state.completed === target);
    await settled(slots);
    await advanceSecond();
  };
  /** The simulated second (1-based, since setup) at which each report arrived. */
  const at = (r: SaturationReport) => Math.ceil((r.detectedAt - t0) / 1000);
  return { handler, client, reports, warnings, state, arrive, second, settled, at, track };
}

const summary = (reports: SaturationReport[]) =>
  reports.map((r) => [r.state, r.state === "ok" ? r.previousCause : r.cause, r.state === "ok" ? null : r.trigger]);

describe("HTTP/2 saturation detection with default options (real SQS client, controlled clock)", () => {
  it("waiting streams growing past the pool: exactly one pool_capacity saturation, then exactly one recovery", async () => {
    const t = setup({
      // A throwing callback changes nothing (reported once, the handler keeps working).
      onSaturation: (r) => {
        t.reports.push(r);
        throw new Error("user callback bug");
      },
    });
    // Overload: a burst of 10, then 3 arrivals and 1 completion per second on 8 slots.
    let saturatedAt = 0;
    for (let s = 1; s <= 9; s++) {
      await t.second(s === 1 ? 10 : 3, s === 1 ? 0 : 1);
      if (saturatedAt === 0 && t.reports.length > 0) saturatedAt = s;
    }
    expect(summary(t.reports)).toEqual([["saturated", "pool_capacity", "growth"]]);
    // Named at the K-th (5th) sample of a monotonically growing queue, neither earlier nor later.
    expect(saturatedAt).toBe(5);
    expect(t.reports[0]).toMatchObject({ origin: endpoint, active: SLOTS, maxSockets: SLOTS });
    expect(t.reports[0].queued).toBe(10);
    // The one core's message, in HTTP/2 words, then the core's note that the callback threw.
    expect(t.warnings).toHaveLength(2);
    expect(t.warnings[0]).toMatch(
      /^@sockeye\/node-http-handler:WARN - stream slot usage at capacity=8 and 10 additional requests are enqueued \(origin=https:\/\/localhost:\d+, stream slots=8, state=saturated/
    );
    expect(t.warnings[1]).toBe(
      "@sockeye/node-http-handler:WARN - onSaturation callback threw Error; the monitor continues."
    );
    expect(t.warnings[0]).toContain("Raise maxSessionsPerOrigin (now 4)");
    expect(server.sessionsAccepted).toBe(4);

    // Drain: no arrivals, the server answers everything; then light traffic (1 in, 1 out per second).
    while (t.state.started > t.state.completed) await t.second(0, server.held.length);
    for (let s = 0; s < 10 && t.reports.length < 2; s++) {
      t.arrive(1);
      await t.settled(SLOTS);
      await t.second(0, 1);
    }
    expect(summary(t.reports)).toEqual([
      ["saturated", "pool_capacity", "growth"],
      ["ok", "pool_capacity", null],
    ]);
    // A few more quiet seconds: nothing else is reported, and the idle handler stops its interval.
    for (let s = 0; s < 3; s++) await t.second(0, 0);
    expect(t.reports).toHaveLength(2);
    await Promise.all(t.state.pending);
    expect(t.state).toMatchObject({ completed: t.state.started, failed: 0 });
    expect(t.handler.getPoolStats().totals).toMatchObject({ inFlight: 0, queued: 0, saturatedOrigins: 0 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a Promise.all batch far above capacity that only drains: no report at all", async () => {
    const t = setup();
    t.arrive(100);
    await t.settled(SLOTS);
    expect(t.handler.getPoolStats().origins[0].queued).toBe(100 - SLOTS);
    // The server answers every held stream each second: 8 per second, the queue only shrinks.
    while (t.state.completed < t.state.started) await t.second(0, server.held.length);
    for (let s = 0; s < 3; s++) await t.second(0, 0);
    await Promise.all(t.state.pending);
    expect(t.state).toMatchObject({ started: 100, completed: 100, failed: 0 });
    const origin = t.handler.getPoolStats().origins[0];
    expect(origin.queueWaitMs.count).toBe(100);
    expect(origin.saturation).toMatchObject({ state: "ok", episodes: 0 });
    expect(t.reports).toEqual([]);
    expect(t.warnings).toEqual([]);
  });

  it("long polls (ReceiveMessage, WaitTimeSeconds 20) outnumbering the slots: long_holds once, never no_progress", async () => {
    const t = setup();
    const QueueUrl = "https://localhost/123456789012/q";
    let polling = true;
    const POLLERS = 12;
    const poller = async () => {
      while (polling) await t.client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    };
    const pollers = Array.from({ length: POLLERS }, poller);
    let polls = 0;
    const arrivedPolls = () => t.handler.getPoolStats().origins[0]?.requests.started ?? 0;
    await waitFor(() => arrivedPolls() === POLLERS && server.held.length === SLOTS);
    // 70 simulated seconds: the server answers each poll after 20 s, each poller polls again at once.
    for (let s = 1; s <= 70; s++) {
      const released = server.releaseOlderThan(20_000);
      polls += released;
      await waitFor(() => arrivedPolls() === POLLERS + polls && server.held.length === SLOTS);
      await advanceSecond();
    }
    expect(polls).toBe(3 * SLOTS);
    expect(summary(t.reports)).toEqual([["saturated", "pool_capacity", "long_holds"]]);
    expect(t.at(t.reports[0])).toBe(5);
    // The report, then one reminder per warningLockoutMs (15 s) while every slot stays held: 5, 20, 35, 50, 65 s.
    expect(t.warnings).toHaveLength(5);
    for (const w of t.warnings) expect(w).toContain("requests queue behind stream slots held for");
    expect(t.warnings[0]).toContain("Raise maxSessionsPerOrigin (now 4) or limit concurrency.");
    // Stop polling: the server answers whatever it holds each second, the pool empties, the episode ends.
    polling = false;
    const inFlight = () => t.handler.getPoolStats().origins[0].inFlight;
    for (let s = 0; s < 12 && t.reports.length < 2; s++) {
      server.release();
      await waitFor(() => server.held.length === Math.min(SLOTS, inFlight()));
      await advanceSecond();
    }
    await Promise.all(pollers);
    expect(summary(t.reports)).toEqual([
      ["saturated", "pool_capacity", "long_holds"],
      ["ok", "pool_capacity", null],
    ]);
  });

  it("a server that stops answering: long_holds at the 5th sample, no_progress only past stallAfterMs (30 s)", async () => {
    const t = setup();
    const QueueUrl = "https://localhost/123456789012/q";
    const calls = Array.from({ length: 12 }, () =>
      t.client.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 })).catch((e: Error) => e)
    );
    await waitFor(() => server.held.length === SLOTS);
    for (let s = 1; s <= 34; s++) await advanceSecond();
    expect(summary(t.reports)).toEqual([
      ["saturated", "pool_capacity", "long_holds"],
      ["stalled", "no_progress", "stall"],
    ]);
    expect(t.at(t.reports[0])).toBe(5);
    // Samples come every 1 s from the first stream on (one period after it, on the scheduler's tick): the oldest
    // stream reaches 30 s at the 30th sample; a change of cause is confirmed on the next one.
    expect(t.at(t.reports[1])).toBe(31);
    // long_holds (5 s), its reminder 15 s later (20 s), then the change of cause at once, despite the lockout.
    expect(t.warnings).toHaveLength(3);
    expect(t.warnings[2]).toContain("state=stalled");
    expect(t.warnings[2]).toContain("Cause changed from pool_capacity.");
    expect(t.warnings[2]).toContain("Configure requestTimeout/socketTimeout so hung requests fail");
    // The server answers again: the 8 held polls, then the 4 that waited behind them.
    server.release();
    await waitFor(() => server.held.length === 4);
    server.release();
    expect((await Promise.all(calls)).filter((r) => r instanceof Error)).toEqual([]);
  });

  it("disableConcurrentStreams: a growing isolated-session queue is one report naming maxIsolatedSessionsPerOrigin", async () => {
    const t = setup({ disableConcurrentStreams: true, maxIsolatedSessionsPerOrigin: 2 });
    let saturatedAt = 0;
    for (let s = 1; s <= 8; s++) {
      await t.second(3, s === 1 ? 0 : 1, 2);
      if (saturatedAt === 0 && t.reports.length > 0) saturatedAt = s;
    }
    expect(summary(t.reports)).toEqual([["saturated", "pool_capacity", "growth"]]);
    expect(saturatedAt).toBe(5);
    expect(t.reports[0]).toMatchObject({ origin: endpoint, active: 2, maxSockets: 2, queued: 9 });
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]).toContain("Raise maxIsolatedSessionsPerOrigin (now 2)");
    expect(t.warnings[0]).not.toContain("maxSessionsPerOrigin (now");
    const stats = t.handler.getPoolStats().origins[0];
    expect(stats.http2?.isolatedSessionsOpen).toBe(2);
    expect(stats.queued).toBe(t.state.started - t.state.completed - 2);
    // Drain and recover; then nothing else.
    while (t.state.started > t.state.completed) await t.second(0, server.held.length, 2);
    for (let s = 0; s < 10 && t.reports.length < 2; s++) {
      t.arrive(1);
      await t.settled(2);
      await t.second(0, 1, 2);
    }
    for (let s = 0; s < 3; s++) await t.second(0, 0, 2);
    expect(summary(t.reports)).toEqual([
      ["saturated", "pool_capacity", "growth"],
      ["ok", "pool_capacity", null],
    ]);
    await Promise.all(t.state.pending);
    expect(t.state.failed).toBe(0);
  });
});

describe('socketMonitor "off" / "per-request" / SOCKEYE_SOCKET_MONITOR: no detection and no timer for HTTP/2', () => {
  const cases: [string, NodeHttp2HandlerOptions, string | undefined][] = [
    ['socketMonitor: "off"', { socketMonitor: "off" }, undefined],
    ['socketMonitor: "per-request"', { socketMonitor: "per-request" }, undefined],
    ["SOCKEYE_SOCKET_MONITOR=off", {}, "off"],
    ["SOCKEYE_SOCKET_MONITOR=per-request", {}, "per-request"],
  ];
  it.each(cases)("%s: the same overload raises nothing and arms no interval", async (_name, options, env) => {
    const saved = process.env.SOCKEYE_SOCKET_MONITOR;
    if (env !== undefined) process.env.SOCKEYE_SOCKET_MONITOR = env;
    let t: ReturnType<typeof setup>;
    try {
      t = setup(options);
    } finally {
      if (saved === undefined) delete process.env.SOCKEYE_SOCKET_MONITOR;
      else process.env.SOCKEYE_SOCKET_MONITOR = saved;
    }
    const scheduler = (t.handler as unknown as { pool: { sharedScheduler: { ticking: boolean } } }).pool
      .sharedScheduler;
    // The SDK's own timers are fake here too: count the handler's through the timing seam.
    const setTimeoutSpy = vi.spyOn(timing, "setTimeout");
    const setIntervalSpy = vi.spyOn(timing, "setInterval");
    for (let s = 1; s <= 8; s++) {
      await t.second(s === 1 ? 10 : 3, s === 1 ? 0 : 1);
      expect(setTimeoutSpy).not.toHaveBeenCalled();
      expect(setIntervalSpy).not.toHaveBeenCalled();
      expect(scheduler.ticking).toBe(false);
    }
    const origin = t.handler.getPoolStats().origins[0];
    // Telemetry still counts the queue; nothing samples it.
    expect(origin.queued).toBe(2 + 2 * 7);
    expect(origin.saturation).toMatchObject({ state: "ok", episodes: 0 });
    expect(t.reports).toEqual([]);
    expect(t.warnings).toEqual([]);
    while (t.state.started > t.state.completed) await t.second(0, server.held.length);
    await Promise.all(t.state.pending);
    expect(t.state.failed).toBe(0);
  });
});
