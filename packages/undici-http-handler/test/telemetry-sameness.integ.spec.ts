/**
 * One table of telemetry scenarios, run against all three handlers (`NodeHttpHandler`, `NodeHttp2Handler`,
 * `UndiciHttpHandler`) through their PUBLIC API only (`saturation`, `logger`, `onSaturation` / `onRecovery`,
 * `poolMonitor.subscribe()`, the `sockeye:pool:*` diagnostics channels, `getPoolStats()`), so it survives the merge of
 * their three pool monitors into one telemetry core (issue 23, item 2) and proves that the transports say the same.
 *
 * Each row asserts one concern; the same assertions hold for every transport, except where a row documents an intended
 * difference (HTTP/2's wording: see `logTemplate`; HTTP/2's `http2` stats block; HTTP/2 has no `maxSockets` to
 * recommend). Every cell is a plain test: the three transports are readers of one telemetry core
 * (`TelemetryCore` of `@sockeye/pool-monitor`), and any disagreement fails.
 *
 * Setup (see `telemetry-rig.ts`, `holding-server.ts`): real servers on 127.0.0.1 (HTTP/1.1 for the HTTP/1.1 handlers,
 * h2c for `NodeHttp2Handler`), 2 connections per origin (2 sockets, or 1 session × 2 stream slots), every response held
 * until the row releases it. Only `performance` and the timers are fake (explicit `toFake` list); sockets and
 * `setImmediate` are real. A row advances the clock one sample period at a time, after the client saw every arrival
 * and release, so every report is deterministic to the period.
 *
 * Run: `npx vitest run --project integ packages/undici-http-handler/test/telemetry-sameness.integ.spec.ts`
 * (the handlers are imported built: `npm run build` first).
 */
import type { PoolStats, SaturationReport } from "@sockeye/pool-monitor";
import { formatSaturationMessage, SATURATION_OPTION_KEYS } from "@sockeye/pool-monitor/internal";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { activeResources } from "../../node-http-handler/test/active-resources";
import {
  EXPECTED_PREFIX,
  type RigOptions,
  SLOTS,
  TelemetryRig,
  TRANSPORTS,
  type TransportName,
  waitFor,
} from "./telemetry-rig";

type SaturationKey = (typeof SATURATION_OPTION_KEYS)[number];

/** One scenario, run against every transport. */
interface Row {
  name: string;
  /** `saturation` options whose effect this row observes. */
  covers?: SaturationKey[];
  options?: RigOptions;
  /** Drives the rig (arrivals, releases, periods). */
  run(rig: TelemetryRig): Promise<void>;
  /** The assertions, identical for every transport. */
  check(rig: TelemetryRig, transport: TransportName): void | Promise<void>;
}

// ── Scripts shared by the rows ────────────────────────────────────────────────────────────────────────────────────────

/** 3 arrivals and 1 completion per period on 2 connections (the queue grows by 2 per period). */
async function overload(rig: TelemetryRig, periods = 9): Promise<void> {
  for (let s = 1; s <= periods; s++) await rig.step(3, s === 1 ? 0 : 1);
}

/** No arrivals; the server answers everything it holds each period until nothing is outstanding. */
async function drain(rig: TelemetryRig): Promise<void> {
  while (rig.outstanding() > 0) await rig.step(0, SLOTS);
}

/** Light traffic (1 in, 1 out per period) until a recovery is reported (at most `max` periods), then 3 quiet ones. */
async function recover(rig: TelemetryRig, max = 12): Promise<void> {
  for (let s = 0; s < max && !rig.reports.some((r) => r.value.state === "ok"); s++) {
    rig.arrive(1);
    await rig.settle();
    await rig.step(0, 1);
  }
  for (let s = 0; s < 3; s++) await rig.step(0, 0);
}

/** The server stops answering: 6 requests (2 held, 4 queued), then `periods` periods with nothing completing. */
async function stall(rig: TelemetryRig, periods: number): Promise<void> {
  // A first round that completes in one period: the origin's requests normally take ~1 s.
  await rig.step(2, 0);
  await rig.step(0, 2);
  rig.arrive(6);
  for (let s = 0; s < periods; s++) await rig.step(0, 0);
}

/** `[state, cause, trigger]` of each report (`previousCause` for a recovery). */
const OVERLOAD_AND_RECOVERY = [
  ["saturated", "pool_capacity", "growth"],
  ["ok", "pool_capacity", null],
];

/**
 * The log line of a saturation report: the handler's package prefix `@sockeye/<package>:WARN - `, then the report's
 * own `message`, built by the one core for every transport. Intended difference (HTTP/2): the unit words, "stream slot
 * usage at capacity … stream slots=<capacity>" instead of "socket usage at capacity … maxSockets=<n>", and advice
 * naming maxSessionsPerOrigin with no socket sizing (NodeHttp2Handler has no maxSockets; its bound is
 * maxSessionsPerOrigin × the peer's stream limit). Evidence: upstream's phrase "socket usage at capacity" (kept for
 * users' log alerts) exists only in upstream's HTTP/1.1 handler (`@smithy/node-http-handler` dist-cjs/index.js, the
 * `checkSocketUsage` warning); upstream's NodeHttp2Handler logs no such warning, so no alert depends on HTTP/2 wording.
 */
function logTemplate(t: TransportName, r: SaturationReport): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const h2 = t === "NodeHttp2Handler";
  const head = h2
    ? `stream slot usage at capacity=${r.active} and ${r.queued} additional requests are enqueued \\(origin=${esc(r.origin)}, stream slots=${r.maxSockets}, state=${r.state}, oldest queued ${Math.round(r.oldestQueuedMs)} ms\\)\\.`
    : `socket usage at capacity=${r.active} and ${r.queued} additional requests are enqueued \\(origin=${esc(r.origin)}, maxSockets=${r.maxSockets}, state=${r.state}, oldest queued ${Math.round(r.oldestQueuedMs)} ms\\)\\.`;
  const changed =
    r.previousCause !== null && r.previousCause !== r.cause ? ` Cause changed from ${r.previousCause}\\.` : "";
  return new RegExp(`^${esc(EXPECTED_PREFIX[t])}${head}${changed} Cause: .+`);
}

/**
 * The key tree of a value: objects by sorted key (minus `skip`), arrays by their first element, leaves as their type,
 * with `null` and numbers one leaf type (a nullable count or duration is the same field whichever it holds now).
 */
function shape(value: unknown, skip: ReadonlySet<string> = new Set()): unknown {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0], skip)];
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (!skip.has(key)) out[key] = shape((value as Record<string, unknown>)[key], skip);
    }
    return out;
  }
  return value === null ? "null|number" : typeof value === "number" ? "null|number" : typeof value;
}

/** Runs `row`'s script on a fresh `NodeHttpHandler` rig (the reference for shape comparisons). */
async function referenceRun(row: Row): Promise<TelemetryRig> {
  const reference = await TelemetryRig.create("NodeHttpHandler", row.options);
  try {
    await row.run(reference);
  } finally {
    await reference.close();
  }
  return reference;
}

/**
 * The values `@sockeye/opentelemetry` records in `http.client.request.time_in_queue` from `rig`'s events, in order, ms:
 * the `waitMs` of each `request:acquired` with `queued`, and the `queuedMs` of each `request:finished` that left the
 * queue without a connection (the bridge's rule, `registerPoolMetrics`' `onEvent`; this package cannot import the
 * bridge, which depends on it).
 */
function timeInQueueMs(rig: TelemetryRig): number[] {
  return rig.events.flatMap(({ value: e }) =>
    e.type === "request:acquired" && e.queued
      ? [e.waitMs]
      : e.type === "request:finished" && e.queuedMs !== null
        ? [e.queuedMs]
        : []
  );
}

/** What the callback installed by `updateHttpClientConfig("onSaturation", …)` received (the row resets it). */
let replacedReports: SaturationReport[] = [];

// ── The table ─────────────────────────────────────────────────────────────────────────────────────────────────────────

const ROWS: Row[] = [
  {
    name: "drained batch: 20 requests at once on 2 connections, answered 2 per period: no report, no log line",
    async run(rig) {
      rig.arrive(20);
      await drain(rig);
      for (let s = 0; s < 3; s++) await rig.step(0, 0);
    },
    check(rig) {
      expect(rig.sequence).toEqual([]);
      expect(rig.lines).toEqual([]);
      expect(rig.poolEvents).toEqual([]);
      const o = rig.stats().origins[0];
      expect(o.requests).toMatchObject({ started: 20, completed: 20, failed: 0 });
      expect(o.saturation).toMatchObject({ state: "ok", cause: null, episodes: 0 });
    },
  },
  {
    name: "stats values after a drained batch: the same counters, gauges, summaries and saturation block",
    async run(rig) {
      rig.arrive(20);
      await drain(rig);
      await rig.advance();
    },
    check(rig, t) {
      const o = rig.stats().origins[0];
      expect(o).toMatchObject({
        origin: rig.servers[0].origin,
        active: 0,
        queued: 0,
        oldestQueuedMs: 0,
        inFlight: 0,
        requests: { started: 20, completed: 20, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 },
        unconsumed: { count: 0, oldestMs: 0 },
        saturation: {
          state: "ok",
          cause: null,
          trigger: null,
          recommendedMaxSockets: null,
          clearSamples: 0,
          episodes: 0,
        },
      });
      // Intended difference: HTTP/2's connection is its 1 session (2 stream slots).
      const connections = t === "NodeHttp2Handler" ? 1 : 2;
      expect(o.idle).toBe(connections);
      // 0, 0, 1000, 1000, … 9000, 9000 ms: the median is 4000 (percentiles carry 3 significant digits).
      expect(o.queueWaitMs.count).toBe(20);
      expect(o.queueWaitMs.p50).toBeGreaterThanOrEqual(4000);
      expect(o.queueWaitMs.p50).toBeLessThan(4010);
      expect(o.connectMs.count).toBe(connections);
      // Cleartext: no TLS handshake to time.
      expect(o.tlsMs.count).toBe(0);
      expect(o.connectionAgeMs.count).toBe(0);
      expect(rig.stats().totals).toEqual({ active: 0, idle: connections, queued: 0, inFlight: 0, saturatedOrigins: 0 });
    },
  },
  {
    name: "TLS (https, h2 over TLS): connect and TLS times once per connection, tlsMs on connection:created",
    options: { tls: true },
    async run(rig) {
      rig.arrive(6);
      await drain(rig);
    },
    check(rig, t) {
      // Intended difference: HTTP/2's connection is its 1 session (2 stream slots).
      const connections = t === "NodeHttp2Handler" ? 1 : 2;
      const o = rig.stats().origins[0];
      expect(o.origin).toBe(rig.servers[0].origin);
      expect(o.origin).toMatch(/^https:/);
      expect(o.requests).toMatchObject({ started: 6, completed: 6, failed: 0 });
      expect(o.sockets.created).toBe(connections);
      expect(o.connectMs.count).toBe(connections);
      expect(o.tlsMs.count).toBe(connections);
      const created = rig.events.filter((e) => e.value.type === "connection:created").map((e) => e.value);
      expect(created).toHaveLength(connections);
      for (const e of created) expect(e).toMatchObject({ origin: o.origin, tlsMs: expect.any(Number) });
    },
  },
  {
    name: "request and connection events: a 20-request batch on 2 connections, counted by type on subscribe()",
    async run(rig) {
      rig.arrive(20);
      await drain(rig);
    },
    check(rig, t) {
      const count = (type: string, where: (e: any) => boolean = () => true) =>
        rig.events.filter((e) => e.value.type === type && where(e.value)).length;
      expect({
        enqueued: count("request:enqueued"),
        acquired: count("request:acquired"),
        acquiredQueued: count("request:acquired", (e) => e.queued),
        acquiredReused: count("request:acquired", (e) => e.reused),
        created: count("connection:created"),
      }).toEqual({
        enqueued: 18,
        acquired: 20,
        acquiredQueued: 18,
        // Intended difference: HTTP/2's connection is the session, and its 2 stream slots share 1 session.
        acquiredReused: t === "NodeHttp2Handler" ? 19 : 18,
        created: t === "NodeHttp2Handler" ? 1 : 2,
      });
      const origin = rig.stats().origins[0];
      expect(origin.sockets).toMatchObject({
        created: t === "NodeHttp2Handler" ? 1 : 2,
        acquisitions: 20,
        reusedAcquisitions: t === "NodeHttp2Handler" ? 19 : 18,
      });
    },
  },
  {
    name: "new connection vs the pool limit: only the request that waited at maxSockets is queued and in time_in_queue",
    async run(rig) {
      // A holds the first connection.
      rig.arrive(1);
      await rig.settle();
      // B finds a free slot under the limit: HTTP/1.1 opens a second connection, and the clock moves one period while
      // it is being opened (the advance runs before any I/O); HTTP/2 takes the session's second stream slot.
      rig.arrive(1);
      await rig.advance();
      await rig.settle();
      // C finds both slots taken: it waits 2 periods at the limit, until A is answered.
      rig.arrive(1);
      await rig.settle();
      await rig.advance();
      await rig.advance();
      await drain(rig);
    },
    check(rig, t) {
      const events = rig.events.map((e) => e.value);
      expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(1);
      const acquired = events.flatMap((e) => (e.type === "request:acquired" ? [e] : []));
      // Intended difference: HTTP/2's B is a second stream on the session A opened (reused).
      expect(acquired.map(({ queued, reused }) => ({ queued, reused }))).toEqual([
        { queued: false, reused: false },
        { queued: false, reused: t === "NodeHttp2Handler" },
        { queued: true, reused: true },
      ]);
      expect(acquired[2].waitMs).toBe(2000);
      expect(timeInQueueMs(rig)).toEqual([2000]);
    },
  },
  {
    name: "histogram max: the last 2 of a 20-request batch waited exactly 9 periods: queueWaitMs.max is 9000 ms",
    async run(rig) {
      rig.arrive(20);
      await drain(rig);
    },
    check(rig) {
      const wait = rig.stats().origins[0].queueWaitMs;
      expect(wait.count).toBe(20);
      expect(wait.max).toBe(9000);
      expect(wait.p99).toBeLessThanOrEqual(wait.max);
    },
  },
  {
    name: "overload: 3 arrivals and 1 completion per period: one pool_capacity/growth report at the 5th sample, one log line",
    async run(rig) {
      await overload(rig);
    },
    check(rig) {
      expect(rig.sequence).toEqual([["saturated", "pool_capacity", "growth"]]);
      expect(rig.reports[0].period).toBe(5);
      expect(rig.lines.map((l) => l.period)).toEqual([5]);
      expect(rig.stats().origins[0].saturation).toMatchObject({
        state: "saturated",
        cause: "pool_capacity",
        episodes: 1,
      });
    },
  },
  {
    name: "overload report figures: the same numbers from the same evidence",
    async run(rig) {
      await overload(rig);
    },
    check(rig, t) {
      const r = rig.reports[0]?.value;
      // The 5th sample, 5 periods after the first request (samples start one period after it).
      expect(r.detectedAt - rig.createdAt).toBe(5000);
      expect(r).toMatchObject({
        origin: rig.servers[0].origin,
        state: "saturated",
        previousState: "ok",
        cause: "pool_capacity",
        previousCause: null,
        trigger: "growth",
        active: 2,
        maxSockets: 2,
        queued: 9,
        oldestQueuedMs: 3000,
        oldestActiveMs: 2000,
        windowMs: 4000,
        windowSamples: 5,
        queueGrowth: 8,
        arrivalRate: 3,
        throughput: 1,
        unconsumed: { count: 0, oldestMs: 0 },
      });
      // Sizing: HTTP/2 has no maxSockets to recommend (intended difference: null there).
      if (t === "NodeHttp2Handler") expect(r).toMatchObject({ recommendedMaxSockets: null, sizing: null });
      else expect(r).toMatchObject({ recommendedMaxSockets: 7, sizing: { method: "littles_law", recommended: 7 } });
    },
  },
  {
    name: "recovery: overload, drain, light traffic: onRecovery once, pool:recovered on subscribe() and the channel, no log line for it",
    async run(rig) {
      await overload(rig);
      await drain(rig);
      await recover(rig);
    },
    check(rig) {
      expect(rig.sequence).toEqual(OVERLOAD_AND_RECOVERY);
      // The queue is empty from the sample of period 18 on: recovery at the 5th clear sample (windowSamples).
      expect(rig.reports.map((r) => r.period)).toEqual([5, 22]);
      const recovery = rig.reports[1].value;
      expect(recovery).toMatchObject({ state: "ok", previousState: "saturated", cause: null, trigger: null });
      const types = (seen: { value: { type: string } }[]) => seen.map((e) => e.value.type);
      expect(types(rig.poolEvents)).toEqual(["pool:saturated", "pool:recovered"]);
      expect(types(rig.channelEvents)).toEqual(["pool:saturated", "pool:recovered"]);
      expect(rig.poolEvents.map((e) => (e.value as { report: SaturationReport }).report)).toEqual(
        rig.reports.map((r) => r.value)
      );
      expect(rig.lines).toHaveLength(1);
      const stats = rig.stats();
      expect(stats.origins[0].saturation).toMatchObject({ state: "ok", cause: null, episodes: 1, clearSamples: 0 });
      expect(stats.totals).toMatchObject({ inFlight: 0, queued: 0, saturatedOrigins: 0 });
    },
  },
  {
    name: "long polls: 4 pollers, 20 s polls on 2 connections for 45 s: one pool_capacity/long_holds report, never no_progress",
    async run(rig) {
      rig.arrive(4, "/");
      for (let s = 1; s <= 45; s++) {
        // Each poll is answered after 20 s; its poller polls again at once.
        const due = s > 1 && (s - 1) % 20 === 0;
        await rig.step(due ? SLOTS : 0, due ? SLOTS : 0);
      }
    },
    check(rig) {
      expect(rig.sequence).toEqual([["saturated", "pool_capacity", "long_holds"]]);
      expect(rig.reports[0].period).toBe(5);
      expect(rig.stats().origins[0].requests.completed).toBe(4);
    },
  },
  {
    name: "unread bodies: 2 responses left unread pin both connections: the first report names unconsumed_bodies",
    async run(rig) {
      rig.arrive(2, "/big");
      await rig.settle();
      rig.release();
      for (let s = 1; s <= 10; s++) await rig.step(1, 0);
    },
    check(rig) {
      expect(rig.sequence[0]?.[1]).toBe("unconsumed_bodies");
      expect(rig.sequence).toEqual([["saturated", "unconsumed_bodies", "growth"]]);
      const r = rig.reports[0].value;
      expect(r.unconsumed.count).toBe(2);
      expect(r.recommendedMaxSockets).toBeNull();
      expect(rig.stats().origins[0].unconsumed.count).toBe(2);
    },
  },
  {
    name: "stall: the server stops answering: pool_capacity/long_holds at the 5th stuck sample, no_progress once held 30 s",
    async run(rig) {
      await stall(rig, 36);
    },
    check(rig) {
      expect(rig.sequence).toEqual([
        ["saturated", "pool_capacity", "long_holds"],
        ["stalled", "no_progress", "stall"],
      ]);
      expect(rig.reports[1].value).toMatchObject({ previousState: "saturated", previousCause: "pool_capacity" });
      expect(rig.reports[1].value.stallDeadlineMs).toBe(30_000);
    },
  },
  {
    name: "cause change: pool_capacity → no_progress is logged at once, despite warningLockoutMs (60 s)",
    covers: ["warningLockoutMs"],
    options: { saturation: { warningLockoutMs: 60_000 } },
    async run(rig) {
      await stall(rig, 36);
    },
    check(rig) {
      expect(rig.lines.map((l) => l.period)).toEqual(rig.reports.map((r) => r.period));
      expect(rig.lines).toHaveLength(2);
      expect(rig.lines[1].value).toContain("Cause changed from pool_capacity.");
    },
  },
  {
    name: "lockout: one long episode with warningLockoutMs 4 s: entry line, then a reminder every 4 s, same cause",
    covers: ["warningLockoutMs"],
    options: { saturation: { warningLockoutMs: 4000 } },
    async run(rig) {
      await overload(rig, 18);
    },
    check(rig) {
      expect(rig.sequence).toEqual([["saturated", "pool_capacity", "growth"]]);
      expect(rig.lines.map((l) => l.period)).toEqual([5, 9, 13, 17]);
      for (const line of rig.lines) {
        expect(line.value).toMatch(/capacity=2 and \d+ additional/);
        expect(line.value).not.toContain("Cause changed");
      }
    },
  },
  {
    name: "lockout across episodes: saturated again, same cause, within warningLockoutMs (60 s): no second line",
    covers: ["warningLockoutMs"],
    options: { saturation: { warningLockoutMs: 60_000 } },
    async run(rig) {
      await overload(rig);
      await drain(rig);
      await recover(rig);
      await overload(rig);
    },
    check(rig) {
      // Callbacks and channels are not rate-limited; the logger is.
      expect(rig.sequence).toEqual([...OVERLOAD_AND_RECOVERY, ["saturated", "pool_capacity", "growth"]]);
      expect(rig.reports[2].value.detectedAt - rig.reports[0].value.detectedAt).toBeLessThan(60_000);
      expect(rig.lines).toHaveLength(1);
    },
  },
  {
    name: "log line shape: `@sockeye/<package>:WARN - ` + the report's message, in the shared template",
    // No reminder within the row: one line per report.
    options: { saturation: { warningLockoutMs: 60_000 } },
    async run(rig) {
      await stall(rig, 36);
    },
    check(rig, t) {
      // One line per report here (the lockout outlasts the row, so no reminder); a suppressed change of cause is the
      // "cause change" row's concern.
      expect(rig.lines.length).toBeGreaterThan(0);
      expect(rig.lines.length).toBeLessThanOrEqual(rig.reports.length);
      for (const [i, line] of rig.lines.entries()) {
        const r = rig.reports[i].value;
        expect(line.value).toBe(EXPECTED_PREFIX[t] + r.message);
        expect(line.value).toMatch(logTemplate(t, r));
        // HTTP/1.1: the detector's own text, unchanged by the transport.
        if (t !== "NodeHttp2Handler") expect(r.message).toBe(formatSaturationMessage(r));
      }
    },
  },
  {
    name: "callbacks and subscribe() listeners that throw change nothing; each throw is logged once, named",
    options: { throwingCallbacks: true },
    async run(rig) {
      await overload(rig);
      await drain(rig);
      await recover(rig);
    },
    check(rig, t) {
      expect(rig.sequence).toEqual(OVERLOAD_AND_RECOVERY);
      expect(rig.poolEvents.map((e) => e.value.type)).toEqual(["pool:saturated", "pool:recovered"]);
      expect(rig.stats().origins[0].requests).toMatchObject({
        started: rig.stats().origins[0].requests.completed,
        failed: 0,
      });
      const prefix = EXPECTED_PREFIX[t];
      expect(rig.lines.slice(1).map((l) => l.value)).toEqual([
        `${prefix}onSaturation callback threw Error; the monitor continues.`,
        `${prefix}onRecovery callback threw Error; the monitor continues.`,
      ]);
    },
  },
  {
    name: "a logger that throws changes nothing: same reports, events and stats",
    options: { throwingLogger: true },
    async run(rig) {
      await overload(rig);
      await drain(rig);
      await recover(rig);
    },
    check(rig) {
      expect(rig.sequence).toEqual(OVERLOAD_AND_RECOVERY);
      expect(rig.poolEvents.map((e) => e.value.type)).toEqual(["pool:saturated", "pool:recovered"]);
      expect(rig.lines).toHaveLength(1);
      expect(rig.stats().totals).toMatchObject({ inFlight: 0, queued: 0, saturatedOrigins: 0 });
    },
  },
  {
    name: 'updateHttpClientConfig("saturation" / "onSaturation") before traffic: the next episode uses both',
    async run(rig) {
      replacedReports = [];
      const update = rig.handler.updateHttpClientConfig.bind(rig.handler) as (key: string, value: unknown) => void;
      update("saturation", { windowSamples: 3 });
      update("onSaturation", (r: SaturationReport) => replacedReports.push(r));
      await overload(rig, 6);
    },
    check(rig) {
      // The constructor's callback is replaced, not kept beside the new one.
      expect(rig.reports).toEqual([]);
      expect(replacedReports.map((r) => [r.state, r.cause, r.trigger, r.windowSamples])).toEqual([
        ["saturated", "pool_capacity", "growth", 3],
      ]);
      expect(rig.lines.map((l) => l.period)).toEqual([3]);
    },
  },
  {
    name: 'socketMonitor "off": the same overload raises nothing (no report, line or event), stats still count the queue',
    options: { socketMonitor: "off" },
    async run(rig) {
      await overload(rig);
    },
    check(rig, t) {
      expect(rig.sequence).toEqual([]);
      expect(rig.lines).toEqual([]);
      expect(rig.poolEvents).toEqual([]);
      const o = rig.stats().origins[0];
      // Intended difference: HTTP/2's active connection is its 1 session (2 stream slots).
      expect(o).toMatchObject({ active: t === "NodeHttp2Handler" ? 1 : 2, queued: 17, inFlight: 19 });
      expect(o.saturation).toMatchObject({ state: "ok", episodes: 0 });
    },
  },
  {
    name: "saturation.maxOrigins 2, 4 origins: the 3rd and 4th are counted under _OTHER",
    covers: ["maxOrigins"],
    options: { origins: 4, saturation: { maxOrigins: 2 } },
    async run(rig) {
      for (let o = 0; o < 4; o++) rig.arrive(1, "/", o);
      await rig.settle();
      for (let o = 0; o < 4; o++) rig.release(undefined, o);
      await rig.settle();
      await rig.advance();
    },
    check(rig) {
      const origins = rig.stats().origins;
      expect(origins.map((o) => o.origin)).toEqual([rig.servers[0].origin, rig.servers[1].origin, "_OTHER"]);
      expect(origins[2].requests).toMatchObject({ started: 2, completed: 2 });
    },
  },
  {
    name: "saturation.maxOrigins 1: an overloaded host beyond it is reported as _OTHER, with its own pool's figures",
    covers: ["maxOrigins"],
    options: { origins: 2, saturation: { maxOrigins: 1 } },
    async run(rig) {
      rig.arrive(1, "/", 0);
      await rig.settle();
      rig.release(undefined, 0);
      for (let s = 1; s <= 9; s++) await rig.step(3, s === 1 ? 0 : 1, "/", 1);
    },
    check(rig) {
      expect(rig.sequence).toEqual([["saturated", "pool_capacity", "growth"]]);
      expect(rig.reports[0].value).toMatchObject({ origin: "_OTHER", active: 2, maxSockets: 2, queued: 9 });
      expect(rig.poolEvents.map((e) => e.value.origin)).toEqual(["_OTHER"]);
      expect(rig.channelEvents.map((e) => e.value.origin)).toEqual(["_OTHER"]);
      expect(rig.lines[0]?.value).toContain("origin=_OTHER");
      const origins = rig.stats().origins;
      expect(origins.map((o) => o.origin)).toEqual([rig.servers[0].origin, "_OTHER"]);
      expect(origins[1].saturation).toMatchObject({ state: "saturated", cause: "pool_capacity" });
    },
  },
  {
    name: "saturation.sampleIntervalMs 200: the overload is reported at the 5th 200 ms sample (1 s), windowMs 800",
    covers: ["sampleIntervalMs"],
    options: { saturation: { sampleIntervalMs: 200 } },
    async run(rig) {
      await overload(rig);
    },
    check(rig) {
      expect(rig.sequence).toEqual([["saturated", "pool_capacity", "growth"]]);
      expect(rig.reports[0].period).toBe(5);
      expect(rig.reports[0].value.windowMs).toBe(800);
    },
  },
  {
    name: "saturation.windowSamples 3: the overload is reported at the 3rd sample, windowSamples 3",
    covers: ["windowSamples"],
    options: { saturation: { windowSamples: 3 } },
    async run(rig) {
      await overload(rig);
    },
    check(rig) {
      expect(rig.sequence).toEqual([["saturated", "pool_capacity", "growth"]]);
      expect(rig.reports[0].period).toBe(3);
      expect(rig.reports[0].value.windowSamples).toBe(3);
    },
  },
  {
    name: "saturation.unconsumedBodyMs 3000: an unread body (no queue) counts as unconsumed after 3 s, not before",
    covers: ["unconsumedBodyMs"],
    options: { saturation: { unconsumedBodyMs: 3000 } },
    async run(rig) {
      rig.arrive(1, "/big");
      await rig.settle();
      rig.release();
      await rig.settle();
      await rig.advance();
      await rig.advance();
    },
    async check(rig) {
      expect(rig.stats().origins[0].unconsumed.count).toBe(0);
      await rig.advance();
      await rig.advance();
      expect(rig.stats().origins[0].unconsumed).toMatchObject({ count: 1 });
      expect(rig.stats().origins[0].unconsumed.oldestMs).toBeGreaterThanOrEqual(3000);
    },
  },
  {
    name: "saturation.stallAfterMs 8000: the stall is no_progress once held 8 s, with stallDeadlineMs 8000",
    covers: ["stallAfterMs"],
    options: { saturation: { stallAfterMs: 8000 } },
    async run(rig) {
      await stall(rig, 14);
    },
    check(rig) {
      expect(rig.sequence).toEqual([
        ["saturated", "pool_capacity", "long_holds"],
        ["stalled", "no_progress", "stall"],
      ]);
      expect(rig.reports[1].value.stallDeadlineMs).toBe(8000);
    },
  },
  {
    name: "stats shape: getPoolStats() has NodeHttpHandler's keys, recursively (HTTP/2: plus its `http2` block)",
    async run(rig) {
      rig.arrive(6);
      await drain(rig);
      await rig.advance();
    },
    async check(rig, t) {
      const reference = await referenceRun(this);
      const skip = new Set(t === "NodeHttp2Handler" ? ["http2"] : []);
      const stats: PoolStats = rig.stats();
      expect(stats.origins).toHaveLength(1);
      expect(shape(stats, skip)).toEqual(shape(reference.stats()));
      if (t === "NodeHttp2Handler") expect(stats.origins[0].http2).toBeDefined();
      else expect(stats.origins[0].http2).toBeUndefined();
    },
  },
  {
    name: "report and event shape: the same keys in every report and pool event",
    async run(rig) {
      await overload(rig);
      await drain(rig);
      await recover(rig);
    },
    async check(rig, t) {
      const reference = await referenceRun(this);
      // Intended difference: HTTP/2 has no maxSockets to size (`sizing: null`, see "overload report figures").
      const skip = new Set(t === "NodeHttp2Handler" ? ["sizing"] : []);
      expect(rig.reports.map((r) => shape(r.value, skip))).toEqual(reference.reports.map((r) => shape(r.value, skip)));
      expect(rig.poolEvents.map((e) => shape(e.value, skip))).toEqual(
        reference.poolEvents.map((e) => shape(e.value, skip))
      );
    },
  },
];

// ── Runner ────────────────────────────────────────────────────────────────────────────────────────────────────────────

let rig: TelemetryRig | undefined;
/** Ref'd handles (servers, sockets) before the row: the same number must be left after it. */
let handlesBefore = 0;

beforeEach(() => {
  handlesBefore = activeResources().handles;
  vi.useFakeTimers({ toFake: ["performance", "setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
  // Start the clock where a live process's is (well past 0), so ages and deadlines are never read at the origin.
  vi.advanceTimersByTime(60_000);
});

afterEach(async () => {
  await rig?.close();
  rig = undefined;
  vi.useRealTimers();
  // Every server, server socket and client connection is gone (the handler destroyed its pools).
  await waitFor(
    () => activeResources().handles <= handlesBefore,
    () => `ref'd handles back to ${handlesBefore} (now ${activeResources().handles})`
  );
});

describe.each(ROWS)("$name", (row) => {
  for (const transport of TRANSPORTS) {
    it(transport, async () => {
      rig = await TelemetryRig.create(transport, row.options);
      await row.run(rig);
      await row.check.call(row, rig, transport);
    });
  }
});

it("the table covers every saturation option", () => {
  const covered = new Set(ROWS.flatMap((r) => r.covers ?? []));
  expect([...covered].sort()).toEqual([...SATURATION_OPTION_KEYS].sort());
});
