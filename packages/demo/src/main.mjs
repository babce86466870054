/**
 * `npm run demo`: Sockeye's saturation detection told as a one-minute story, on loopback only.
 *
 * A real `S3Client` (`@aws-sdk/client-s3`) uses Sockeye's `NodeHttpHandler` (maxSockets 8) against an embedded
 * S3-compatible endpoint with a fixed service time. Five phases: a healthy `Promise.all` batch, sustained overload,
 * unread GetObject bodies, recovery, and dropped GetObject bodies. A live view shows the pool; Sockeye's warnings are
 * printed next to what upstream's per-request check (`@smithy/node-http-handler`, emulated exactly) would have said at
 * the same moments. The dropped-body phase runs upstream's real handler on a twin client beside Sockeye's.
 * Every 250 ms the pool is recorded; at the end an SVG timeline is written to `out/pool-timeline.svg`.
 *
 * Every load is bounded (count and time) and a watchdog ends the process if anything hangs.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { createHistogram } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { collectGarbage } from "./collect-garbage.mjs";
import { ConsoleView, shorten, stamp } from "./console-view.mjs";
import { runDroppedBodies, upstreamTwin } from "./dropped-bodies.mjs";
import { BodyHolder, getAndRead, OpenLoop, runBatch } from "./load.mjs";
import { renderTimelineSvg } from "./render-timeline-svg.mjs";
import { startS3Server } from "./s3-server.mjs";
import { Timeline } from "./timeline.mjs";
import { queuedPerAgentKey, UpstreamCheckEmulator } from "./upstream-check.mjs";

// ---- Story parameters ---------------------------------------------------------------------------------------
const MAX_SOCKETS = 8;
const SERVICE_MS = 80; // fixed per-request latency of the embedded endpoint
const SAMPLE_INTERVAL_MS = 500; // Sockeye's detector period (K = 5 samples: a 2.5 s horizon)
const WINDOW_SAMPLES = 5; // Sockeye's default K: also the samples a saturated origin must stay clear to recover
const UNCONSUMED_BODY_MS = 2000; // a body untouched this long counts as unread
const RECORD_EVERY_MS = 250;
const BATCH_SIZE = 50 * MAX_SOCKETS; // long enough to outlast upstream's 3 s per-request timer
const OVERLOAD_FACTOR = 1.4;
const OVERLOAD_MS = 9000;
const BACKGROUND_FACTOR = 0.4; // phase 3 background load, as a fraction of capacity: healthy on its own
const LEAK_EVERY_MS = 350;
const LEAK_MAX = MAX_SOCKETS - 1; // leave one socket serving, so the queue grows rather than freezes
const LARGE_OBJECT_BYTES = 1024 * 1024; // held and dropped bodies: too large for the client's buffers, so they pin
const DROP_DEADLINE_MS = 5000; // the dropped-body phase gives each client's next request this long
const WATCHDOG_MS = 150_000;

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..", "out");
const svgPath = join(outDir, "pool-timeline.svg");
const jsonPath = join(outDir, "pool-timeline.json");
const pngPath = join(outDir, "pool-timeline.png");
const reportPath = join(outDir, "demo-report.txt");
const REPORT_NAME = "out/demo-report.txt";

// The SDK warns that future releases need Node >= 22; irrelevant to this demo and noisy on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

const watchdog = setTimeout(() => {
  process.stderr.write(`demo: still running after ${WATCHDOG_MS / 1000} s; giving up.\n`);
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

const view = new ConsoleView(process.stdout);
const timeline = new Timeline();
const t0 = performance.now();
const secs = (/** @type {number} */ perfMs) => (perfMs - t0) / 1000;
const nowS = () => secs(performance.now());
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** Per-phase findings for the final summary. */
const results = {
  /** @type {{ name: string, start: number, sockeye: string, upstream: string }[]} */
  rows: [],
};
/** @type {Array<{ t: number, kind: string, report?: any, message?: string }>} */
const events = [];
let currentPhase = "setup";
let suppressedLoggedInPhase = "";
let phaseStartedAt = 0;

// ---- Embedded S3 endpoint and the client ------------------------------------------------------------------------
const server = await startS3Server({ latencyMs: SERVICE_MS });

const handler = new NodeHttpHandler({
  httpAgent: { maxSockets: MAX_SOCKETS },
  saturation: {
    sampleIntervalMs: SAMPLE_INTERVAL_MS,
    windowSamples: WINDOW_SAMPLES,
    unconsumedBodyMs: UNCONSUMED_BODY_MS,
  },
  onSaturation: (report) => {
    events.push({ t: secs(report.detectedAt), kind: "saturated", report });
    const label =
      report.cause === "pool_capacity"
        ? `saturated: pool_capacity → maxSockets ${report.recommendedMaxSockets ?? "?"}`
        : report.cause === "unconsumed_bodies"
          ? `${report.state}: unconsumed_bodies (${report.unconsumed.count} unread)`
          : `${report.state}: ${report.cause}`;
    timeline.mark({ t: secs(report.detectedAt), kind: "sockeye-saturated", label });
    view.log(formatReport(report));
  },
  onRecovery: (report) => {
    events.push({ t: secs(report.detectedAt), kind: "recovered", report });
    timeline.mark({ t: secs(report.detectedAt), kind: "sockeye-recovered", label: "recovered" });
    view.log(
      `${stamp(secs(report.detectedAt))} ${view.green("SOCKEYE onRecovery")}  ${report.origin}: ${report.previousState} → ok ` +
        `after ${((report.detectedAt - report.since) / 1000).toFixed(1)} s; queued ${report.queued}, active ${report.active}/${report.maxSockets}`
    );
  },
  logger: {
    debug: () => {},
    info: () => {},
    warn: (/** @type {string} */ message) => {
      events.push({ t: nowS(), kind: "sockeye-log", message });
      // The terminal gets the first two lines' worth; the report keeps the whole message.
      const head = `${stamp(nowS())} SOCKEYE logger.warn  `;
      view.log(
        `${stamp(nowS())} ${view.red("SOCKEYE logger.warn")}  ${shorten(message, 2 * view.columns - head.length - 12, `(full text in ${REPORT_NAME})`)}`,
        {
          full: `${head}${message}`,
        }
      );
    },
    error: (/** @type {string} */ message) => view.log(`${stamp(nowS())} sockeye logger.error  ${message}`),
  },
});

const s3 = new S3Client({ ...server.clientConfig, requestHandler: handler });
const object = { Bucket: "sockeye-demo", Key: "data/object-16k.bin" };
const largeObject = { Bucket: "sockeye-demo", Key: "data/object-1m.bin" };
await s3.send(new CreateBucketCommand({ Bucket: object.Bucket }));
await s3.send(new PutObjectCommand({ ...object, Body: Buffer.alloc(16 * 1024, 7) }));
await s3.send(new PutObjectCommand({ ...largeObject, Body: Buffer.alloc(LARGE_OBJECT_BYTES, 9) }));
for (let i = 0; i < 2 * MAX_SOCKETS; i++) await getAndRead(s3, object); // warm-up (JIT, first sockets)

// ---- Upstream's per-request check, emulated exactly on the same agent ------------------------------------------------
const config = handler.httpHandlerConfigs();
/** @type {import("node:http").Agent | undefined} */
const agent = /** @type {any} */ (config).httpAgent;
if (agent === undefined || typeof agent !== "object" || !("requests" in agent)) {
  throw new Error("demo: handler.httpHandlerConfigs().httpAgent is not an http.Agent after the first request.");
}
const upstreamW =
  config.socketAcquisitionWarningTimeout ?? (config.requestTimeout ?? 2000) + (config.connectionTimeout ?? 1000);
const upstream = new UpstreamCheckEmulator({
  getAgent: () => agent,
  queuedUnder: queuedPerAgentKey(handler),
  warningTimeoutMs: upstreamW,
  onEvent: (e) => {
    const t = secs(e.at);
    const queued = /capacity=(\d+) and (\d+) additional/.exec(e.message);
    if (e.kind === "warn") {
      events.push({ t, kind: "upstream-warn", message: e.message });
      timeline.mark({ t, kind: "upstream-warn", label: `upstream warns (queued ${queued?.[2] ?? "?"})` });
      view.log(`${stamp(t)} ${view.yellow("upstream would say:")} ${e.message.replace(/\s*\n\s*/g, " ")}`);
      return;
    }
    events.push({ t, kind: "upstream-suppressed", message: e.message });
    timeline.mark({ t, kind: "upstream-suppressed", label: "" });
    // Say it once per phase, and only in a phase where upstream has not logged anything itself.
    if (suppressedLoggedInPhase !== currentPhase && firstEvent("upstream-warn", phaseStartedAt) === undefined) {
      suppressedLoggedInPhase = currentPhase;
      const last = [...events].reverse().find((x) => x.kind === "upstream-warn");
      view.log(
        `${stamp(t)} ${view.yellow("upstream would say:")} nothing. Its criteria hold (capacity=${queued?.[1]}, ` +
          `${queued?.[2]} enqueued) but its single 15 s lockout, started by the warning at ${last === undefined ? "?" : `${last.t.toFixed(1)} s`}, silences it.`
      );
    }
  },
});
upstream.install(s3);

// ---- Recording and the live view ---------------------------------------------------------------------------
/** Queue-wait p99 per origin over the last second, from Sockeye's `sockeye:request:acquired` channel. */
const waits = new Map();
const onAcquired = (/** @type {any} */ event) => {
  let w = waits.get(event.origin);
  if (w === undefined) {
    w = { hist: createHistogram(), p99: /** @type {number | null} */ (null) };
    waits.set(event.origin, w);
  }
  w.hist.record(Math.max(1, Math.round(event.waitMs * 1000)));
};
diagnosticsChannel.subscribe("sockeye:request:acquired", onAcquired);

/** Completion counters per origin, for req/s over the last second. */
const done = new Map();
let tick = 0;
/** @type {number[]} */
const queueHistory = [];
let phaseTitle = "setup";

function record() {
  const stats = handler.getPoolStats();
  const t = secs(stats.takenAt);
  tick++;
  const everySecond = tick % (1000 / RECORD_EVERY_MS) === 0;
  const rows = [];
  for (const o of stats.origins) {
    const finished = o.requests.completed + o.requests.failed + o.requests.aborted + o.requests.timedOut;
    let d = done.get(o.origin);
    if (d === undefined) {
      d = { history: /** @type {number[][]} */ ([]) };
      done.set(o.origin, d);
    }
    d.history.push([t, finished]);
    if (d.history.length > 5) d.history.shift();
    const [tA, fA] = d.history[0];
    const reqPerSec = t > tA ? (finished - fA) / (t - tA) : 0;
    const w = waits.get(o.origin);
    if (w !== undefined && everySecond) {
      w.p99 = w.hist.count > 0 ? w.hist.percentile(99) / 1000 : null;
      w.hist.reset();
    }
    timeline.addSample(o.origin, {
      t,
      queued: o.queued,
      active: o.active,
      idle: o.idle,
      unconsumed: o.unconsumed.count,
      state: o.saturation.state,
    });
    rows.push({
      origin: o.origin,
      active: o.active,
      maxSockets: o.maxSockets,
      idle: o.idle,
      queued: o.queued,
      oldestQueuedMs: o.oldestQueuedMs,
      waitP99Ms: w?.p99 ?? null,
      reqPerSec,
      state: o.saturation.state,
      cause: o.saturation.cause,
      unconsumed: o.unconsumed.count,
      clearSamples: o.saturation.clearSamples ?? 0,
      windowSamples: WINDOW_SAMPLES,
    });
  }
  queueHistory.push(stats.totals.queued);
  if (queueHistory.length > 60) queueHistory.shift();
  view.update({
    t,
    phase: phaseTitle,
    origins: rows,
    queueHistory,
    upstream:
      `upstream emulation: ${upstream.armed} timers armed (${upstream.pending} pending), ${upstream.fired} fired, ` +
      `${upstream.warnings} warning(s) logged, ${upstream.suppressed} silenced by lockout`,
  });
}
const recorder = setInterval(record, RECORD_EVERY_MS);

// ---- The story ----------------------------------------------------------------------------------------------
view.log(
  [
    `${view.bold("Sockeye demo")}: a real S3Client (@aws-sdk/client-s3) on @sockeye/node-http-handler,`,
    "against an embedded S3 endpoint on loopback.",
    `  endpoint ${server.endpoint}, fixed service time ${SERVICE_MS} ms, maxSockets ${MAX_SOCKETS}:`,
    `    capacity ≈ ${MAX_SOCKETS} / ${SERVICE_MS} ms = ${Math.round((MAX_SOCKETS * 1000) / SERVICE_MS)} req/s before SDK overhead`,
    `  Sockeye: saturation { sampleIntervalMs: ${SAMPLE_INTERVAL_MS}, windowSamples: ${WINDOW_SAMPLES},`,
    `    unconsumedBodyMs: ${UNCONSUMED_BODY_MS} }: warns on queue growth, stalls, unread bodies`,
    `  upstream, emulated exactly: setTimeout(${upstreamW} ms) per request, then the real`,
    "    NodeHttpHandler.checkSocketUsage() of @smithy/node-http-handler on the same",
    "    sockets, with the requests Sockeye queues as agent.requests (where upstream",
    '    queues them), one 15 s lockout; its lines are labelled "upstream would say:"',
    '  status: "idle (kept-alive)" counts kept-alive sockets waiting for a request;',
    `    after a warning, "recovering: clear for n/${WINDOW_SAMPLES}" counts the samples the origin`,
    `    has stayed clear: it recovers at ${WINDOW_SAMPLES}/${WINDOW_SAMPLES}.`,
  ].join("\n"),
  { indent: 4 }
);

/**
 * @param {string} name short name (chart, table)
 * @param {string} title on-screen title
 * @param {string} explanation
 */
function beginPhase(name, title, explanation) {
  currentPhase = name;
  phaseTitle = title;
  const t = nowS();
  phaseStartedAt = t;
  timeline.beginPhase(name, t);
  view.title(title, explanation);
  record();
  return t;
}

/** Polls `predicate` every 50 ms until it holds or `timeoutMs` passed. @returns {Promise<boolean>} */
async function waitFor(/** @type {() => boolean} */ predicate, /** @type {number} */ timeoutMs) {
  const until = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() >= until) return false;
    await sleep(50);
  }
  return true;
}

const sockeyeState = () => handler.getPoolStats().origins[0]?.saturation.state ?? "ok";
const firstEvent = (/** @type {string} */ kind, /** @type {number} */ from, /** @type {number} */ to = Infinity) =>
  events.find((e) => e.kind === kind && e.t >= from && e.t < to);
const delay = (/** @type {{ t: number } | undefined} */ e, /** @type {number} */ from) =>
  e === undefined ? null : e.t - from;
const fmt = (/** @type {number | null} */ d) => (d === null ? "—" : `+${d.toFixed(1)} s`);

// Phase 1: healthy batch.
const p1 = beginPhase(
  "healthy batch",
  `Phase 1/5 · healthy batch: Promise.all of ${BATCH_SIZE} GetObjects (${BATCH_SIZE / MAX_SOCKETS} × maxSockets)`,
  "Bodies are read. The queue starts deep but only ever drains: nothing is wrong, so nobody should warn."
);
const batch = await runBatch(s3, object, BATCH_SIZE);
// Steady-state capacity: completions between the first and the last one (the SDK's CPU burst of submitting
// the whole batch at once is excluded).
const capacity = (BATCH_SIZE - 1) / ((batch.lastDoneMs - batch.firstDoneMs) / 1000);
timeline.mark({ t: p1 + batch.lastDoneMs / 1000, kind: "note", label: "batch drained" });
view.log(
  `${stamp(nowS())} batch done: ${BATCH_SIZE} GetObjects in ${(batch.durationMs / 1000).toFixed(1)} s (${batch.errors} errors; ` +
    `first response after ${(batch.firstDoneMs / 1000).toFixed(1)} s) → measured capacity ${capacity.toFixed(0)} req/s. Sockeye state: ${sockeyeState()}.`
);
await sleep(1500);
const p1End = nowS();

// Phase 2: sustained overload, then the load stops.
const rate = OVERLOAD_FACTOR * capacity;
const p2 = beginPhase(
  "overload",
  `Phase 2/5 · overload: ${rate.toFixed(0)} GetObjects/s for ${OVERLOAD_MS / 1000} s (${OVERLOAD_FACTOR} × measured capacity)`,
  "Arrivals outpace what 8 sockets can serve: the queue grows and never drains. Then the load stops."
);
const overload = new OpenLoop(s3, object, rate, OVERLOAD_MS);
await sleep(OVERLOAD_MS);
overload.stop();
const p2Stop = nowS();
timeline.mark({ t: p2Stop, kind: "note", label: "load stops" });
view.log(
  `${stamp(p2Stop)} load stopped after ${overload.started} GetObjects; ${handler.getPoolStats().totals.queued} still queued, draining…`
);
await overload.drain();
await waitFor(() => sockeyeState() === "ok", 10_000);
await sleep(500);

// Phase 3: unread GetObject bodies.
const p3 = beginPhase(
  "unread bodies",
  `Phase 3/5 · unread GetObject bodies: healthy background load (${(BACKGROUND_FACTOR * capacity).toFixed(0)} req/s) + a code path that never reads its Body`,
  `Every ${LEAK_EVERY_MS} ms one GetObject's Body (${LARGE_OBJECT_BYTES / 1024 / 1024} MiB) is kept but never read nor destroyed (up to ${LEAK_MAX}); each one pins a socket.`
);
const background = new OpenLoop(s3, object, BACKGROUND_FACTOR * capacity, 20_000);
const holder = new BodyHolder(s3, largeObject);
const leakTimer = setInterval(() => {
  if (holder.held.length + holder.pending < LEAK_MAX) holder.leakOne();
}, LEAK_EVERY_MS);
await waitFor(() => firstEvent("saturated", p3) !== undefined, 14_000);
// Give upstream's per-request timers the chance to speak too (they need a request that waited 3 s).
await waitFor(() => firstEvent("upstream-warn", p3) !== undefined, 9000);
await sleep(1500);
clearInterval(leakTimer);

// Phase 4: recovery.
const p4 = beginPhase(
  "recovery",
  "Phase 4/5 · recovery: destroy the held bodies and stop the load",
  "The sockets come back, the queue drains; Sockeye reports the recovery. Upstream has no such signal."
);
background.stop();
const released = holder.releaseAll();
view.log(`${stamp(nowS())} destroyed ${released} held bodies; background load stopped.`);
await background.drain();
await waitFor(() => sockeyeState() === "ok", 10_000);
await sleep(1000);
const p4End = nowS();

// Phase 5: a code path drops GetObject bodies, on Sockeye's client and on a twin on upstream's real handler.
const p5 = beginPhase(
  "dropped bodies",
  `Phase 5/5 · dropped GetObject bodies: a code path reads the metadata and drops Body, ${MAX_SOCKETS} times`,
  `Sockeye's client and a twin client on upstream's real NodeHttpHandler (maxSockets ${MAX_SOCKETS} too) each ` +
    `drop ${MAX_SOCKETS} bodies of ${LARGE_OBJECT_BYTES / 1024 / 1024} MiB unread, keeping no reference, then send one more ` +
    `GetObject (given up after ${DROP_DEADLINE_MS / 1000} s). A garbage collection runs while it waits.`
);
let twinWarnings = 0;
const dropped = await runDroppedBodies({
  sockeye: s3,
  upstream: upstreamTwin(server.clientConfig, MAX_SOCKETS, (message) => {
    twinWarnings++;
    view.log(`${stamp(nowS())} ${view.yellow("upstream (twin) says:")} ${message.replace(/\s*\n\s*/g, " ")}`);
  }),
  dropped: largeObject,
  probed: object,
  count: MAX_SOCKETS,
  deadlineMs: DROP_DEADLINE_MS,
  beforeCollect: () => waitFor(() => firstEvent("saturated", p5) !== undefined, DROP_DEADLINE_MS),
  collect: collectGarbage,
  onStep: (step, { sizes }) => {
    if (step === "dropped") {
      view.log(
        `${stamp(nowS())} each client: ${sizes.length} GetObjects answered (ContentLength ${sizes[0]}), Body dropped unread; ` +
          "one more GetObject sent on each."
      );
      return;
    }
    timeline.mark({ t: nowS(), kind: "note", label: "gc()" });
    view.log(
      `${stamp(nowS())} gc(): a full garbage collection. The demo runs node with --expose-gc and collects now; ` +
        "V8 would on its own, sooner or later. The dropped bodies are garbage."
    );
  },
});
const bodiesReclaimed = handler.getPoolStats().origins[0]?.bodiesReclaimed;
const fmtMs = (/** @type {number} */ ms) => `${(ms / 1000).toFixed(1)} s`;
view.log(
  dropped.sockeye.served
    ? `${stamp(nowS())} ${view.green("SOCKEYE")}: the next GetObject was served ${Math.round(dropped.sockeye.endedAt - dropped.gcAt)} ms ` +
        `after the gc() (${fmtMs(dropped.sockeye.ms)} after it was sent); ` +
        `getPoolStats() counts ${bodiesReclaimed ?? "?"} bodiesReclaimed: the dropped bodies' connections were freed.`
    : `${stamp(nowS())} ${view.red("SOCKEYE")}: the next GetObject was not served in ${fmtMs(dropped.sockeye.ms)} ` +
        `(${dropped.sockeye.error}); getPoolStats() counts ${bodiesReclaimed ?? "?"} bodiesReclaimed.`
);
view.log(
  dropped.upstream.served
    ? `${stamp(nowS())} ${view.yellow("upstream")}: the next GetObject was served in ${fmtMs(dropped.upstream.ms)}.`
    : `${stamp(nowS())} ${view.yellow("upstream")} (its real handler): the next GetObject got no socket in ` +
        `${fmtMs(dropped.upstream.ms)} and was given up. ${dropped.upstreamSocketsInUse}/${MAX_SOCKETS} sockets stay pinned ` +
        "by bodies nothing references; upstream never frees them, so this client is dead until the process restarts." +
        (twinWarnings === 0 ? " It logged nothing: one request waiting is below its 2 × maxSockets." : "")
);
if (!dropped.upstream.served)
  timeline.mark({ t: secs(dropped.upstream.endedAt), kind: "upstream-dead", label: "client dead" });
await waitFor(() => firstEvent("recovered", p5) !== undefined, 3000);
const reclaimLine = events
  .filter((e) => e.t >= p5)
  .map((e) => e.message ?? JSON.stringify(e.report ?? ""))
  .map((text) => /\d+ responses? (?:was|were) dropped unread; [^."\n]*/.exec(text)?.[0])
  .find((line) => line !== undefined);
if (reclaimLine !== undefined)
  view.log(`${stamp(nowS())} ${view.green("SOCKEYE")} saturation report: "${reclaimLine}".`);
await sleep(1000);
const p5End = nowS();
timeline.endPhase(p5End);

// ---- Teardown ------------------------------------------------------------------------------------------------
clearInterval(recorder);
record();
view.close();
diagnosticsChannel.unsubscribe("sockeye:request:acquired", onAcquired);
const finalStats = handler.getPoolStats();
s3.destroy();
await server.close();

// ---- Summary ---------------------------------------------------------------------------------------------------
const sat2 = firstEvent("saturated", p2, p3);
const sat3 = firstEvent("saturated", p3, p4);
const rec2 = firstEvent("recovered", p2Stop, p3);
const rec4 = firstEvent("recovered", p4, p5);
const sat5 = firstEvent("saturated", p5);
const up = (/** @type {number} */ from, /** @type {number} */ to) => {
  const w = firstEvent("upstream-warn", from, to);
  const s = firstEvent("upstream-suppressed", from, to);
  if (w !== undefined) {
    return (
      `warns at ${fmt(delay(w, from))}` +
      (s !== undefined && s.t < w.t
        ? ` (its criteria held from ${fmt(delay(s, from))}, silenced until then by its 15 s lockout)`
        : "")
    );
  }
  return s === undefined
    ? "no warning"
    : `silent: its criteria held from ${fmt(delay(s, from))}, but the 15 s lockout of an earlier warning silenced it`;
};
const sockeyeSat = (/** @type {any} */ e, /** @type {number} */ from) =>
  e === undefined
    ? "no warning"
    : `${e.report.state} at ${fmt(delay(e, from))} (cause ${e.report.cause}` +
      (e.report.cause === "pool_capacity" ? `, recommended maxSockets ${e.report.recommendedMaxSockets})` : "") +
      (e.report.cause === "unconsumed_bodies"
        ? `: ${e.report.unconsumed.count} unread, oldest ${(e.report.unconsumed.oldestMs / 1000).toFixed(1)} s)`
        : e.report.cause === "pool_capacity"
          ? ""
          : ")");
results.rows.push(
  {
    name: "1 healthy batch",
    start: p1,
    sockeye: firstEvent("saturated", p1, p1End) === undefined ? "no warning (correct)" : "WARNED (false positive)",
    upstream: `${up(p1, p1End)}${firstEvent("upstream-warn", p1, p1End) === undefined ? "" : ` (false alarm: batch drained at +${(batch.durationMs / 1000).toFixed(1)} s)`}`,
  },
  { name: "2 overload", start: p2, sockeye: sockeyeSat(sat2, p2), upstream: up(p2, p2Stop) },
  {
    name: "2 load stopped",
    start: p2Stop,
    sockeye: rec2 === undefined ? "no recovery" : `recovered at ${fmt(delay(rec2, p2Stop))}`,
    upstream: `${up(p2Stop, p3)} (no recovery signal)`,
  },
  { name: "3 unread bodies", start: p3, sockeye: sockeyeSat(sat3, p3), upstream: up(p3, p4) },
  {
    name: "4 recovery",
    start: p4,
    sockeye: rec4 === undefined ? "no recovery" : `recovered at ${fmt(delay(rec4, p4))}`,
    upstream: `${up(p4, p4End)} (no recovery signal)`,
  },
  {
    name: "5 dropped bodies",
    start: p5,
    sockeye:
      `${sockeyeSat(sat5, p5)}; ` +
      (dropped.sockeye.served
        ? `after gc(): ${bodiesReclaimed ?? "?"} bodies reclaimed, the next request served ` +
          `${Math.round(dropped.sockeye.endedAt - dropped.gcAt)} ms later`
        : `the next request not served in ${fmtMs(dropped.sockeye.ms)}`),
    upstream: dropped.upstream.served
      ? `the next request served in ${fmtMs(dropped.upstream.ms)}`
      : `dead: the next request given up after ${fmtMs(dropped.upstream.ms)}, ${dropped.upstreamSocketsInUse}/${MAX_SOCKETS} ` +
        `sockets pinned for ever${twinWarnings === 0 ? " (no warning)" : ""}`,
  }
);

view.title("Summary: detection delays, from the start of each phase", "");
for (const r of results.rows) {
  view.log(`${view.bold(r.name)} (starts at ${r.start.toFixed(1)} s)`);
  view.log(`  Sockeye : ${r.sockeye}`, { indent: 12 });
  view.log(`  upstream: ${r.upstream}`, { indent: 12 });
}
const origin = finalStats.origins[0];
view.log(
  `\nrequests: ${origin?.requests.started} started, ${origin?.requests.completed} completed, ${origin?.requests.failed} failed; ` +
    `sockets created ${origin?.sockets.created}; upstream timers armed ${upstream.armed}, fired ${upstream.fired}, ` +
    `warnings ${upstream.warnings}, silenced ${upstream.suppressed}`,
  { indent: 2 }
);

// ---- Chart ---------------------------------------------------------------------------------------------------
const chartOrigin = [...timeline.samples.keys()][0] ?? "";
const svg = renderTimelineSvg({
  samples: timeline.samples.get(chartOrigin) ?? [],
  markers: timeline.markers,
  phases: timeline.phases,
  maxSockets: MAX_SOCKETS,
  title: "Sockeye vs upstream: one S3Client's socket pool, second by second",
  subtitle:
    `${chartOrigin} · maxSockets ${MAX_SOCKETS} · ${SERVICE_MS} ms per request · capacity ≈ ${capacity.toFixed(0)} req/s · ` +
    `Sockeye samples every ${SAMPLE_INTERVAL_MS} ms (K = ${WINDOW_SAMPLES}) · upstream: one ${upstreamW} ms timer per request`,
});
mkdirSync(outDir, { recursive: true });
writeFileSync(svgPath, svg);
writeFileSync(
  jsonPath,
  `${JSON.stringify(
    {
      parameters: {
        MAX_SOCKETS,
        SERVICE_MS,
        SAMPLE_INTERVAL_MS,
        UNCONSUMED_BODY_MS,
        BATCH_SIZE,
        OVERLOAD_FACTOR,
        OVERLOAD_MS,
      },
      measuredCapacityPerSecond: Math.round(capacity * 10) / 10,
      upstreamWarningTimeoutMs: upstreamW,
      phases: timeline.phases,
      markers: timeline.markers,
      summary: results.rows,
      samples: Object.fromEntries(timeline.samples),
    },
    null,
    1
  )}\n`
);
const png = await renderPng(svg);
if (png !== undefined) writeFileSync(pngPath, png);
writeFileSync(reportPath, `${view.transcript.join("\n")}\n`);
const rel = (/** @type {string} */ p) => relative(process.cwd(), p) || p;
view.log(`\nchart: ${rel(svgPath)}${png === undefined ? "" : ` (PNG: ${rel(pngPath)})`}`, { indent: 7 });
view.log(`full report with every warning's whole text: ${rel(reportPath)}`, { indent: 2 });
view.log(`recorded series: ${rel(jsonPath)}; total run time ${nowS().toFixed(1)} s`, { indent: 2 });
clearTimeout(watchdog);

/**
 * The chart as PNG through `@resvg/resvg-js` (a root dev dependency of the repository), or `undefined` when it cannot
 * be loaded. @param {string} svg @returns {Promise<Buffer | undefined>}
 */
async function renderPng(svg) {
  try {
    const { Resvg } = await import("@resvg/resvg-js");
    return new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } }).render().asPng();
  } catch {
    return undefined;
  }
}

/** Multi-line rendering of an onSaturation report. @param {any} r */
function formatReport(r) {
  const pad = " ".repeat(10);
  const lines = [
    `${stamp(secs(r.detectedAt))} ${view.red("SOCKEYE onSaturation")}  origin ${r.origin}  state ${r.state}  cause ${view.bold(r.cause)}  trigger ${r.trigger}`,
    `${pad}active ${r.active}/${r.maxSockets}, queued ${r.queued} (${r.queueGrowth >= 0 ? "+" : ""}${r.queueGrowth} over ${(r.windowMs / 1000).toFixed(1)} s), ` +
      `oldest queued ${(r.oldestQueuedMs / 1000).toFixed(1)} s, arrivals ${r.arrivalRate.toFixed(0)}/s vs throughput ${r.throughput.toFixed(0)}/s, ` +
      `mean socket hold ${r.meanHoldMs === null ? "n/a" : `${Math.round(r.meanHoldMs)} ms`}`,
  ];
  if (r.cause === "pool_capacity")
    lines.push(`${pad}recommended maxSockets: ${view.bold(String(r.recommendedMaxSockets))}`);
  if (r.unconsumed.count > 0)
    lines.push(
      `${pad}unread bodies: ${view.bold(String(r.unconsumed.count))}, oldest ${(r.unconsumed.oldestMs / 1000).toFixed(1)} s`
    );
  return lines.join("\n");
}
