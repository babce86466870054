import { describe, expect, test as it } from "vitest";
import { type SimScenario, capacityPerSec, simulate } from "./queue-simulator.mock";
import { SaturationDetector, type SaturationSample } from "./saturation-detector";
import type { SaturationReport } from "./pool-stats";

const SEEDS = Array.from({ length: 12 }, (_, i) => 1000 + i * 7919);
const P = 1000;
const BASE = { maxSockets: 50, medianMs: 80, sigma: 0.5, horizonMs: 60_000, sampleIntervalMs: P };
const MU = capacityPerSec(BASE); // ~552 req/s

const newDetector = () => new SaturationDetector({ origin: "https://sim:443", windowSamples: 5, sampleIntervalMs: P });
/** A report reduced to what a sequence assertion compares. */
const brief = (r: SaturationReport) => [r.state, r.cause, r.trigger];

interface Run {
  reports: SaturationReport[];
  firstWarn: SaturationReport | undefined;
  samplesToFirstWarn: number;
}

function run(sc: SimScenario, seed: number, onsetMs = 0, detector = newDetector()): Run {
  const reports: SaturationReport[] = [];
  let samplesAfterOnset = 0;
  let samplesToFirstWarn = -1;
  simulate(sc, seed, (s) => {
    if (s.now >= onsetMs) samplesAfterOnset++;
    const r = detector.update(s);
    if (r) {
      reports.push(r);
      if (samplesToFirstWarn < 0 && r.state !== "ok") samplesToFirstWarn = samplesAfterOnset;
    }
  });
  return { reports, firstWarn: reports.find((r) => r.state !== "ok"), samplesToFirstWarn };
}

/** Runs every seed; returns per-seed delay (ms after onset) of the first warning, or undefined. */
function delays(sc: SimScenario, onsetMs = 0): { ms: (number | undefined)[]; samples: number[]; runs: Run[] } {
  const runs = SEEDS.map((seed) => run(sc, seed, onsetMs));
  return {
    ms: runs.map((r) => (r.firstWarn ? r.firstWarn.detectedAt - onsetMs : undefined)),
    samples: runs.map((r) => r.samplesToFirstWarn),
    runs,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const measured: Record<string, string> = {};
function record(name: string, d: { ms: (number | undefined)[]; samples: number[] }): void {
  const ms = d.ms.filter((x): x is number => x !== undefined);
  measured[name] = ms.length
    ? `${ms.length}/${d.ms.length} warned; median ${(median(ms) / 1000).toFixed(1)} s (${median(d.samples)} samples), max ${(Math.max(...ms) / 1000).toFixed(1)} s (${Math.max(...d.samples)} samples)`
    : `0/${d.ms.length} warned`;
  if (process.env.SOCKEYE_SIM_REPORT) console.log(`${name}: ${measured[name]}`);
}

describe("SaturationDetector on simulated traffic (maxSockets 50, lognormal 80 ms, mu ~552/s)", () => {
  describe("must not warn", () => {
    it.each([
      ["Promise.all batch of 20 x maxSockets (1000) draining", [{ kind: "batch", size: 1000, atMs: 0 }]],
      ["Promise.all batch of 100 x maxSockets (5000) draining ~9 s", [{ kind: "batch", size: 5000, atMs: 0 }]],
      ["repeated batches of 500 every 5 s (~100/s, below capacity)", [{ kind: "periodic", size: 500, everyMs: 5000 }]],
      ["repeated batches of 1000 every 1.9 s (~0.95 mu)", [{ kind: "periodic", size: 1000, everyMs: 1900 }]],
      ["steady Poisson load at 0.9 mu", [{ kind: "poisson", ratePerSec: 0.9 * MU }]],
    ] as const)("%s", (name, arrivals) => {
      const d = delays({ ...BASE, arrivals: [...arrivals] });
      record(name, d);
      expect(d.ms.filter((x) => x !== undefined)).toEqual([]);
    });

    it("does not warn for 100 x maxSockets batches with a small pool (maxSockets 4)", () => {
      const d = delays({
        ...BASE,
        maxSockets: 4,
        horizonMs: 150_000,
        arrivals: [{ kind: "batch", size: 400, atMs: 0 }],
      });
      record("small pool: batch of 100 x maxSockets (400, drains ~9 s)", d);
      expect(d.ms.filter((x) => x !== undefined)).toEqual([]);
    });
  });

  describe("must warn", () => {
    it("sustained overload 1.2 mu within 10 s, attributing pool capacity with a Little's law recommendation", () => {
      const d = delays({ ...BASE, arrivals: [{ kind: "poisson", ratePerSec: 1.2 * MU }] });
      record("sustained overload 1.2 mu", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(10_000);
      for (const r of d.runs) {
        const w = r.firstWarn!;
        expect(w.state).toBe("saturated");
        expect(w.cause).toBe("pool_capacity");
        expect(w.message).toContain(
          `socket usage at capacity=${w.active} and ${w.queued} additional requests are enqueued`
        );
        // Needed concurrency = lambda * S = 1.2 * 50 = 60 sockets; with 25 % headroom ~75.
        expect(w.recommendedMaxSockets).toBeGreaterThanOrEqual(60);
        expect(w.recommendedMaxSockets).toBeLessThanOrEqual(100);
      }
    });

    it("slight overload 1.05 mu (may take longer, must come)", () => {
      const d = delays({ ...BASE, arrivals: [{ kind: "poisson", ratePerSec: 1.05 * MU }] });
      record("slight overload 1.05 mu", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(30_000);
    });

    it("sawtooth overload: batches of 1300 every 2 s (650/s > mu), via rising troughs", () => {
      const d = delays({ ...BASE, arrivals: [{ kind: "periodic", size: 1300, everyMs: 2000 }] });
      record("sawtooth 1300 every 2 s", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(15_000);
      expect(d.runs.some((r) => r.firstWarn?.trigger === "rising_troughs")).toBe(true);
    });

    it("server slows down 2x at t=20 s under 0.8 mu load (=1.6x overload)", () => {
      const d = delays(
        { ...BASE, arrivals: [{ kind: "poisson", ratePerSec: 0.8 * MU }], slowdownAtMs: 20_000, slowdownFactor: 2 },
        20_000
      );
      record("slowdown 2x at 20 s under 0.8 mu", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(10_000);
    });

    it("server never answers (flat queue of 10 behind 50 hung sockets): long holds within 6 s, then a stall at 30 s, no flapping", () => {
      const d = delays({ ...BASE, stallAtMs: 0, arrivals: [{ kind: "batch", size: 60, atMs: 0 }] });
      record("stall, flat queue (60 requests, no answers)", d);
      for (const r of d.runs) {
        // Nothing has completed yet: a first long poll looks the same, so the first report is the capacity one.
        expect(r.reports.map(brief)).toEqual([
          ["saturated", "pool_capacity", "long_holds"],
          ["stalled", "no_progress", "stall"],
        ]);
        const [first, stall] = r.reports;
        expect(first.detectedAt).toBeLessThanOrEqual(6_000);
        expect(first.message).toContain(
          "or a server not answering, which becomes no_progress once a request is held 30.0 s"
        );
        expect(first.message).toContain("If these are long requests, about 75 sockets are needed");
        expect(first.sizing).toMatchObject({ method: "concurrent_requests", needed: 60 });
        expect(stall.previousCause).toBe("pool_capacity");
        expect(stall.recommendedMaxSockets).toBeNull();
        expect(stall.detectedAt).toBeGreaterThanOrEqual(30_000);
        // The deadline, plus one sample confirming the new cause.
        expect(stall.detectedAt).toBeLessThanOrEqual(32_000);
        expect(stall.oldestActiveMs).toBeGreaterThanOrEqual(30_000);
      }
    });

    it("stall under load: server stops answering at t=10 s with 0.5 mu arrivals", () => {
      const d = delays({ ...BASE, stallAtMs: 10_000, arrivals: [{ kind: "poisson", ratePerSec: 0.5 * MU }] }, 10_000);
      record("server stops answering at 10 s (0.5 mu load)", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(10_000);
      // Growth fires first (the queue grows); the cause becomes no_progress once the held requests pass the deadline.
      for (const r of d.runs) {
        expect(r.reports.map(brief)).toEqual([
          ["saturated", "pool_capacity", "growth"],
          ["stalled", "no_progress", "stall"],
        ]);
        expect(r.reports[1].detectedAt - 10_000).toBeLessThanOrEqual(32_000);
      }
    });

    it("sustained overload 1.2 mu with a small pool (maxSockets 4)", () => {
      const sc = { ...BASE, maxSockets: 4 };
      const d = delays({ ...sc, arrivals: [{ kind: "poisson", ratePerSec: 1.2 * capacityPerSec(sc) }] });
      record("small pool: sustained overload 1.2 mu", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(15_000);
    });
  });

  it("emits exactly one saturation and one recovery once the overload stopped and the queue stayed drained for K samples", () => {
    for (const seed of SEEDS) {
      const r = run({ ...BASE, arrivals: [{ kind: "poisson", ratePerSec: 1.2 * MU, untilMs: 20_000 }] }, seed);
      const states = r.reports.map((x) => x.state);
      expect(states).toEqual(["saturated", "ok"]);
      const recovery = r.reports.at(-1)!;
      expect(recovery.previousState).toBe("saturated");
      expect(recovery.cause).toBeNull();
      // The backlog (~0.2 mu * 20 s ~ 2200) drains at mu in ~4 s, then K = 5 low samples.
      expect(recovery.detectedAt).toBeGreaterThan(24_000);
      expect(recovery.detectedAt).toBeLessThan(32_000);
    }
  });
});

describe("SaturationDetector on long requests, hung servers and latency ramps", () => {
  // 6 SQS-style long pollers on 4 sockets: each poll is held 20 s (empty queue), then re-sent at once.
  const LONG_POLLS: SimScenario = {
    maxSockets: 4,
    medianMs: 20_000,
    sigma: 0,
    horizonMs: 120_000,
    sampleIntervalMs: P,
    arrivals: [],
    closedLoop: { clients: 6 },
  };

  it("long polls (more than sockets): one capacity report sized by the long requests, no stall claim, no flapping", () => {
    for (const seed of SEEDS) {
      const r = run(LONG_POLLS, seed);
      expect(r.reports.map(brief)).toEqual([["saturated", "pool_capacity", "long_holds"]]);
      const w = r.reports[0];
      expect(w.detectedAt).toBeLessThanOrEqual(6_000);
      // 4 held + 2 queued want a socket: 6 x 1.25 -> 8.
      expect(w.sizing).toMatchObject({ method: "concurrent_requests", needed: 6, recommended: 8 });
      expect(w.recommendedMaxSockets).toBe(8);
      expect(w.message).toContain("either long requests (long polls, streams), which need a socket each");
      expect(w.message).toContain("6 requests want a socket now (4 in use + 2 queued");
    }
    record("6 long pollers (20 s) on 4 sockets", delays(LONG_POLLS));
  });

  it("long polls after fast requests on the same origin: still no stall claim (the 30 s floor), one report", () => {
    const sc: SimScenario = {
      ...LONG_POLLS,
      medianMs: 20_000,
      // Fast calls first (CreateQueue, SendMessage…): 80 ms holds make a 20 s poll 250x slower than "normal".
      arrivals: [{ kind: "batch", size: 8, atMs: 0 }],
      closedLoop: { clients: 6, fromMs: 10_000 },
    };
    for (const seed of SEEDS) {
      const detector = newDetector();
      const fast = run({ ...sc, medianMs: 80, closedLoop: undefined, horizonMs: 10_000 }, seed, 0, detector);
      expect(fast.reports).toEqual([]);
      expect(detector.holdEstimateMs).toBeGreaterThan(0);
      expect(detector.holdEstimateMs).toBeLessThan(200);
      const polls = run(
        { ...LONG_POLLS, closedLoop: { clients: 6, fromMs: 10_000 }, horizonMs: 120_000 },
        seed,
        0,
        detector
      );
      expect(polls.reports.map(brief)).toEqual([["saturated", "pool_capacity", "long_holds"]]);
    }
  });

  it("a server that stops answering after fast traffic is reported within 10 s and called a stall at the deadline", () => {
    // 12 requests on 4 sockets, all hung: light load, nothing completes after t = 5 s.
    const sc: SimScenario = {
      ...BASE,
      maxSockets: 4,
      stallAtMs: 5_000,
      arrivals: [
        { kind: "poisson", ratePerSec: 10, untilMs: 5_000 },
        { kind: "batch", size: 12, atMs: 5_000 },
      ],
    };
    for (const seed of SEEDS) {
      const r = run(sc, seed);
      expect(r.reports.map(brief)).toEqual([
        ["saturated", "pool_capacity", "long_holds"],
        ["stalled", "no_progress", "stall"],
      ]);
      expect(r.reports[0].detectedAt - 5_000).toBeLessThanOrEqual(7_000);
      expect(r.reports[1].detectedAt - 5_000).toBeLessThanOrEqual(32_000);
      expect(r.reports[1].message).toContain("the server may not be answering");
    }
  });

  it("unread bodies (every response from 10 s to 30 s left unread, 20/s on 4 sockets): unconsumed_bodies kept while unread, exactly one recovery once read", () => {
    const sc: SimScenario = {
      ...BASE,
      maxSockets: 4,
      medianMs: 50,
      sigma: 0.3,
      arrivals: [{ kind: "poisson", ratePerSec: 20 }],
      unread: { fromMs: 10_000, consumeAtMs: 30_000 },
    };
    for (const seed of SEEDS) {
      const detector = newDetector();
      const states: [number, string, string | null][] = [];
      const reports: SaturationReport[] = [];
      simulate(sc, seed, (s) => {
        const r = detector.update(s);
        if (r) reports.push(r);
        states.push([s.now, detector.detectorState, detector.detectorCause]);
      });
      expect(reports.map((r) => [r.state, r.cause ?? r.previousCause])).toEqual([
        ["saturated", "unconsumed_bodies"],
        ["ok", "unconsumed_bodies"],
      ]);
      const [named, recovered] = reports;
      expect(named.detectedAt - 10_000).toBeLessThanOrEqual(7_000);
      expect(named.unconsumed.count).toBe(4);
      expect(named.recommendedMaxSockets).toBeNull();
      // Kept, with the same cause, on every sample until the bodies are read.
      const during = states.filter(([now]) => now >= named.detectedAt && now < 30_000);
      expect(during.every(([, state, cause]) => state === "saturated" && cause === "unconsumed_bodies")).toBe(true);
      // Read at 30 s: the backlog (~400 requests) drains, then K clear samples.
      expect(recovered.detectedAt).toBeGreaterThan(30_000);
      expect(recovered.detectedAt).toBeLessThan(50_000);
    }
  });

  it("latency ramp at constant arrivals: the recommendation follows the latency the pool sees now", () => {
    // 0.7 mu at 80 ms; service times ramp 4x between 5 s and 25 s, then stay: needed = 0.7 * 50 * 4 = 140 sockets.
    const lambda = 0.7 * MU;
    const meanServiceMs = BASE.medianMs * Math.exp((BASE.sigma * BASE.sigma) / 2);
    const needed = (lambda * 4 * meanServiceMs) / 1000;
    for (const seed of SEEDS) {
      const detector = newDetector();
      const r = run(
        {
          ...BASE,
          arrivals: [{ kind: "poisson", ratePerSec: lambda, untilMs: 45_000 }],
          ramp: { fromMs: 5_000, toMs: 25_000, factor: 4 },
          horizonMs: 40_000,
        },
        seed,
        0,
        detector
      );
      expect(r.reports.map(brief)).toEqual([["saturated", "pool_capacity", "growth"]]);
      const onset = r.reports[0].recommendedMaxSockets!;
      const now = detector.assess()!;
      expect(now.sizing?.method).toBe("littles_law");
      // Sized for the latency now (4x), not at onset.
      expect(now.recommendedMaxSockets).toBeGreaterThanOrEqual(Math.ceil(needed));
      expect(now.recommendedMaxSockets).toBeLessThanOrEqual(Math.ceil(needed * 1.25 * 1.25));
      expect(now.recommendedMaxSockets).toBeGreaterThan(onset);
      expect(detector.recommendedSockets).toBe(now.recommendedMaxSockets);
    }
  });
});

describe("SaturationDetector rules on hand-written samples", () => {
  const base = { active: 4, maxSockets: 4, completions: 3, arrivals: 4, holdTimeSumMs: 300, holdCount: 3 };
  const feed = (d: SaturationDetector, samples: Partial<SaturationSample>[], t0 = 0) =>
    samples.map((s, i) => d.update({ ...base, now: t0 + i * 1000, queued: 0, ...s }));

  it("growth needs K non-decreasing saturated samples with net growth >= G and depth >= maxSockets", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    // Non-decreasing but flat at first: no growth yet.
    expect(feed(d, [{ queued: 4 }, { queued: 4 }, { queued: 4 }, { queued: 4 }]).filter(Boolean)).toEqual([]);
    const r = d.update({ ...base, now: 4000, queued: 5 });
    expect(r?.state).toBe("saturated");
    expect(r?.trigger).toBe("growth");
    expect(r?.queueGrowth).toBe(1);
  });

  it("a single decrease in the window prevents the growth rule", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    expect(
      feed(d, [{ queued: 4 }, { queued: 6 }, { queued: 5 }, { queued: 7 }, { queued: 9 }]).filter(Boolean)
    ).toEqual([]);
  });

  it("stuck samples: K saturated samples with zero completions, even with a flat queue; unconsumed bodies attributed", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const stuck = { queued: 2, completions: 0, unconsumedCount: 3, unconsumedOldestMs: 12_000, oldestActiveMs: 12_000 };
    const out = feed(d, [stuck, stuck, stuck, stuck, stuck]);
    expect(out.slice(0, 4).filter(Boolean)).toEqual([]);
    const r = out[4]!;
    expect(brief(r)).toEqual(["saturated", "unconsumed_bodies", "long_holds"]);
    expect(r.unconsumed).toEqual({ count: 3, oldestMs: 12_000 });
    expect(r.recommendedMaxSockets).toBeNull();
    expect(r.message).toContain("socket usage at capacity=4 and 2 additional requests are enqueued");
    expect(r.message).toContain("3 responses handed to the caller have not been read or destroyed");
    expect(r.message).toContain("or set unreadBodyTimeout on a Sockeye handler");
  });

  it("unread bodies: kept while they stay unread (no recovery, even with the queue drained), one recovery after", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const pinned = { active: 4, queued: 3, completions: 0, unconsumedCount: 4, oldestActiveMs: 3_000 };
    const out = feed(
      d,
      Array.from({ length: 5 }, () => pinned)
    );
    expect(out.filter(Boolean).map((r) => brief(r!))).toEqual([["saturated", "unconsumed_bodies", "long_holds"]]);
    // 40 more samples pinned, first with the queue, then with the callers gone (queue 0): no report, no recovery.
    const later = feed(
      d,
      Array.from({ length: 40 }, (_, i) => ({ ...pinned, queued: i < 30 ? 3 : 0, oldestActiveMs: 3_000 + i * 1000 })),
      5_000
    );
    expect(later.filter(Boolean)).toEqual([]);
    expect(d.detectorCause).toBe("unconsumed_bodies");
    // Bodies consumed: sockets complete, queue drained. Exactly one recovery after K clear samples.
    const after = feed(
      d,
      Array.from({ length: 8 }, () => ({ active: 0, queued: 0, completions: 2, unconsumedCount: 0 })),
      45_000
    );
    expect(after.filter(Boolean).map((r) => [r!.state, r!.previousCause])).toEqual([["ok", "unconsumed_bodies"]]);
    expect(after.findIndex(Boolean)).toBe(4);
  });

  it("the cause follows the evidence: a change is a new report after 2 samples; a single odd sample is not", () => {
    const d = new SaturationDetector({ origin: "http://a:80", stallAfterMs: 5_000 });
    const hung = (age: number) => ({ queued: 2, completions: 0, oldestActiveMs: age });
    const entry = feed(d, [hung(1000), hung(2000), hung(3000), hung(4000), hung(5000)]);
    expect(entry.filter(Boolean).map((r) => brief(r!))).toEqual([["stalled", "no_progress", "stall"]]);
    // One sample with unread bodies pinning the sockets: not enough.
    expect(d.update({ ...base, now: 5000, ...hung(6000), unconsumedCount: 4 })).toBeUndefined();
    expect(d.update({ ...base, now: 6000, ...hung(7000) })).toBeUndefined();
    expect(d.detectorCause).toBe("no_progress");
    // Two in a row: re-attributed, with the former cause named.
    expect(d.update({ ...base, now: 7000, ...hung(8000), unconsumedCount: 4 })).toBeUndefined();
    const changed = d.update({ ...base, now: 8000, ...hung(9000), unconsumedCount: 4 });
    expect(changed).toMatchObject({ state: "stalled", cause: "unconsumed_bodies", previousCause: "no_progress" });
    expect(changed!.message).toContain("Cause changed from no_progress.");
    expect(changed!.since).toBe(4000); // same episode
    // Completions resume with a backlog: pool capacity (state saturated), again after 2 samples.
    const busy = { queued: 6, completions: 3, holdCount: 3, holdTimeSumMs: 300, unconsumedCount: 0 };
    expect(d.update({ ...base, now: 9000, ...busy })).toBeUndefined();
    expect(d.update({ ...base, now: 10_000, ...busy })).toMatchObject({
      state: "saturated",
      cause: "pool_capacity",
      previousCause: "unconsumed_bodies",
    });
    expect(d.episodes).toBe(1);
  });

  it("a backlog draining after the cause went away is not re-attributed to pool capacity: one report, one recovery", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const pinned = { active: 4, queued: 20, completions: 0, unconsumedCount: 4, oldestActiveMs: 3_000 };
    feed(
      d,
      Array.from({ length: 5 }, () => pinned)
    );
    expect(d.detectorCause).toBe("unconsumed_bodies");
    // Bodies destroyed: every socket busy serving the backlog, which shrinks sample after sample.
    const drain = [16, 12, 8, 4, 1].map((queued) => ({ queued, completions: 4, unconsumedCount: 0 }));
    const clear = Array.from({ length: 5 }, () => ({ active: 0, queued: 0, completions: 1 }));
    const out = feed(d, [...drain, ...clear], 5000);
    expect(out.filter(Boolean).map((r) => [r!.state, r!.previousCause])).toEqual([["ok", "unconsumed_bodies"]]);
    // A backlog that holds or grows with every socket busy is a capacity matter: re-attributed after 2 samples.
    const e = new SaturationDetector({ origin: "http://a:80" });
    feed(
      e,
      Array.from({ length: 5 }, () => pinned)
    );
    const stays = [20, 21].map((queued) => ({ queued, completions: 4, unconsumedCount: 0 }));
    expect(feed(e, stays, 5000).map((r) => r?.cause)).toEqual([undefined, "pool_capacity"]);
  });

  it("expected hold time: the stall deadline is 4 x the longest recent hold, and never below stallAfterMs", () => {
    const d = new SaturationDetector({ origin: "http://a:80", stallAfterMs: 10_000 });
    expect(d.stallDeadline()).toBe(10_000);
    d.update({ ...base, now: 0, queued: 0, holdTimeMaxMs: 5_000 });
    expect(d.holdEstimateMs).toBe(5_000);
    expect(d.stallDeadline()).toBe(20_000);
    d.update({ ...base, now: 1000, queued: 0, holdCount: 0, completions: 0 });
    expect(d.holdEstimateMs).toBeCloseTo(4_900, 6); // decays 2 % per sample
  });

  it("reconfigure(): a longer sample period is not a gap once applied; the episode is kept", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }, { queued: 7 }, { queued: 8 }]);
    expect(d.detectorState).toBe("saturated");
    d.reconfigure({ sampleIntervalMs: 5000 });
    // Samples 5 s apart (3.5 s would have been a gap with the old 1 s period): K clear samples recover.
    const out = [0, 1, 2, 3, 4].map((i) => d.update({ ...base, now: 10_000 + i * 5000, queued: 0 }));
    expect(out.filter(Boolean).map((r) => r!.state)).toEqual(["ok"]);
    expect(d.episodes).toBe(1);
    d.reconfigure({ windowSamples: 3 });
    expect(d.ringSamples).toBe(3);
  });

  it("a sample gap longer than 3 periods clears the window (event loop blocked)", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }]);
    // 10 s gap, then two more growing samples: only 2 consecutive samples in the window, no warning.
    expect(feed(d, [{ queued: 7 }, { queued: 8 }], 12_000).filter(Boolean)).toEqual([]);
    expect(
      feed(d, [{ queued: 9 }, { queued: 10 }, { queued: 11 }], 14_000)
        .filter(Boolean)
        .map((r) => r?.trigger)
    ).toEqual(["growth"]);
  });

  it("recovery needs K consecutive samples with the queue drained and sockets completing (hysteresis)", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }, { queued: 7 }, { queued: 8 }]);
    expect(d.detectorState).toBe("saturated");
    // Queue 0 but nothing completing (sockets stuck) is not clear; a queued request breaks the streak.
    const samples: Partial<SaturationSample>[] = [
      { queued: 0, completions: 0 },
      { queued: 0 },
      { queued: 0 },
      { queued: 1 },
      { queued: 0 },
      { queued: 0 },
      { queued: 0 },
      { queued: 0, completions: 0, active: 0 }, // every socket released: clear too
      { queued: 0 },
    ];
    const out = feed(d, samples.slice(0, 8), 5000);
    expect(out.filter(Boolean)).toEqual([]);
    expect(d.recoveryStreak).toBe(4);
    out.push(...feed(d, samples.slice(8), 13_000));
    expect(out[8]?.state).toBe("ok");
    expect(out[8]?.previousState).toBe("saturated");
    expect(out[8]?.previousCause).toBe("pool_capacity");
    // The window restarts at every transition.
    expect(d.needsSamples).toBe(false);
  });

  it("no recovery while every socket stays held and nothing completes, even with the queue drained (20 samples)", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }, { queued: 7 }, { queued: 8 }]);
    expect(d.detectorState).toBe("saturated");
    // The queued callers gave up (queue 0); the 4 held requests keep their sockets, ageing, with no completion.
    const held = Array.from({ length: 20 }, (_, i) => ({
      queued: 0,
      completions: 0,
      holdCount: 0,
      holdTimeSumMs: 0,
      activeAgeCount: 4,
      activeAgeSumMs: 4 * (i + 5) * 1000,
      oldestActiveMs: (i + 5) * 1000,
    }));
    expect(feed(d, held, 5000).filter(Boolean)).toEqual([]);
    expect(d.detectorState).toBe("saturated");
    expect(d.recoveryStreak).toBe(0);
    // Completions resume: one recovery, after K clear samples.
    const after = feed(
      d,
      Array.from({ length: 5 }, () => ({ queued: 0, completions: 2 })),
      25_000
    );
    expect(after.map((r) => r?.state)).toEqual([undefined, undefined, undefined, undefined, "ok"]);
  });

  it("unconsumed_bodies: no recovery while 2 of 4 sockets stay pinned by unread bodies, the others completing, queue 0", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const pinned = { active: 4, queued: 3, completions: 0, unconsumedCount: 2, oldestActiveMs: 3_000 };
    const entry = feed(
      d,
      Array.from({ length: 5 }, () => pinned)
    );
    expect(entry.filter(Boolean).map((r) => brief(r!))).toEqual([["saturated", "unconsumed_bodies", "long_holds"]]);
    // Queue drained, the two free sockets complete requests every sample, the two bodies stay unread.
    const half = Array.from({ length: 20 }, () => ({ active: 4, queued: 0, completions: 2, unconsumedCount: 2 }));
    expect(feed(d, half, 5000).filter(Boolean)).toEqual([]);
    expect(d.detectorCause).toBe("unconsumed_bodies");
    expect(d.recoveryStreak).toBe(0);
    const read = Array.from({ length: 5 }, () => ({ active: 2, queued: 0, completions: 2, unconsumedCount: 0 }));
    expect(feed(d, read, 25_000).map((r) => r && [r.state, r.previousCause])).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      ["ok", "unconsumed_bodies"],
    ]);
  });

  it("sizing counts the requests still in flight: fast completions, long in-flight ages -> holdMs is their mean age", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }, { queued: 7 }, { queued: 8 }]);
    expect(d.detectorCause).toBe("pool_capacity");
    // A ramp still rising: the requests that complete took 100 ms, the 4 holding a socket now are 1.5 s old on average.
    const ramp = [9, 10, 11, 12].map((queued) => ({
      queued,
      completions: 3,
      holdCount: 3,
      holdTimeSumMs: 300,
      arrivals: 4,
      activeAgeCount: 4,
      activeAgeSumMs: 4 * 1500,
      oldestActiveMs: 1800,
    }));
    expect(feed(d, ramp, 5000).filter(Boolean)).toEqual([]);
    const now = d.assess()!;
    // Window since entry: 4 s, 16 arrivals (4/s) >= 12 completions (3/s); 4/s x 1.5 s = 6 sockets, x 1.25 -> 8.
    expect(now.sizing).toEqual({ method: "littles_law", ratePerSec: 4, holdMs: 1500, needed: 6, recommended: 8 });
    expect(d.recommendedSockets).toBe(8);
  });

  it("entry and a change of cause restart the window: the next report covers only the samples since", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const entry = feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }, { queued: 7 }, { queued: 8 }])[4]!;
    expect(entry).toMatchObject({ trigger: "growth", windowSamples: 5, windowMs: 4000, queueGrowth: 4 });
    // Two samples later, bodies pin the sockets: a change of cause, judged on the window since entry (3 samples).
    const pinned = { queued: 9, completions: 0, holdCount: 0, holdTimeSumMs: 0, unconsumedCount: 4 };
    const change = feed(d, [{ ...pinned, unconsumedCount: 0, completions: 3 }, pinned, pinned], 5000);
    expect(change.slice(0, 2)).toEqual([undefined, undefined]);
    expect(change[2]).toMatchObject({
      cause: "unconsumed_bodies",
      previousCause: "pool_capacity",
      since: 4000,
      windowSamples: 4,
      windowMs: 3000,
      queueGrowth: 1, // 9 now, 8 at entry (not 4, the first sample before entry)
      throughput: 1, // the 3 completions after entry over 3 s; none of the 12 before it
    });
    // The next report after the change covers the change sample and the one after it only.
    d.update({ ...base, now: 8000, ...pinned, queued: 11 });
    expect(d.assess()).toMatchObject({ cause: "unconsumed_bodies", windowSamples: 2, windowMs: 1000, queueGrowth: 2 });
    expect(d.assess()!.throughput).toBe(0);
  });

  it("a stuck pool with a short queue does not flap (stalled -> ok -> stalled): one episode while it stays stuck", () => {
    const d = new SaturationDetector({ origin: "http://a:80", stallAfterMs: 3_000 });
    const out = feed(
      d,
      Array.from({ length: 60 }, (_, i) => ({ queued: 1, completions: 0, oldestActiveMs: (i + 1) * 1000 }))
    );
    expect(out.filter(Boolean).map((r) => brief(r!))).toEqual([["stalled", "no_progress", "stall"]]);
    expect(d.episodes).toBe(1);
  });

  it("never warns for an unlimited pool", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const out = feed(
      d,
      Array.from({ length: 20 }, (_, i) => ({
        maxSockets: Number.POSITIVE_INFINITY,
        active: 100,
        queued: i * 10,
        completions: 0,
      }))
    );
    expect(out.filter(Boolean)).toEqual([]);
  });
});
