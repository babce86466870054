import { describe, expect, test as it } from "vitest";
import { type SimScenario, capacityPerSec, simulate } from "./queue-simulator.mock";
import { SaturationDetector, type SaturationSample } from "./saturation-detector";
import type { SaturationReport } from "./pool-stats";

const SEEDS = Array.from({ length: 12 }, (_, i) => 1000 + i * 7919);
const P = 1000;
const BASE = { maxSockets: 50, medianMs: 80, sigma: 0.5, horizonMs: 60_000, sampleIntervalMs: P };
const MU = capacityPerSec(BASE); // ~552 req/s

interface Run {
  reports: SaturationReport[];
  firstWarn: SaturationReport | undefined;
  samplesToFirstWarn: number;
}

function run(sc: SimScenario, seed: number, onsetMs = 0): Run {
  const detector = new SaturationDetector({ origin: "https://sim:443", windowSamples: 5, sampleIntervalMs: P });
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

    it("stall with a flat queue: 60 requests, server never answers", () => {
      const d = delays({ ...BASE, stallAtMs: 0, arrivals: [{ kind: "batch", size: 60, atMs: 0 }] });
      record("stall, flat queue (60 requests, no answers)", d);
      for (const r of d.runs) {
        expect(r.firstWarn?.state).toBe("stalled");
        expect(r.firstWarn?.trigger).toBe("stall");
        expect(r.firstWarn?.cause).toBe("no_progress");
        expect(r.firstWarn?.recommendedMaxSockets).toBeNull();
        expect(r.firstWarn!.detectedAt).toBeLessThanOrEqual(6_000);
      }
    });

    it("stall under load: server stops answering at t=10 s with 0.5 mu arrivals", () => {
      const d = delays({ ...BASE, stallAtMs: 10_000, arrivals: [{ kind: "poisson", ratePerSec: 0.5 * MU }] }, 10_000);
      record("server stops answering at 10 s (0.5 mu load)", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(10_000);
      // Growth fires first (the queue grows); the stall rule upgrades the state once the window has no completions.
      for (const r of d.runs) expect(r.reports.some((x) => x.state === "stalled")).toBe(true);
    });

    it("sustained overload 1.2 mu with a small pool (maxSockets 4)", () => {
      const sc = { ...BASE, maxSockets: 4 };
      const d = delays({ ...sc, arrivals: [{ kind: "poisson", ratePerSec: 1.2 * capacityPerSec(sc) }] });
      record("small pool: sustained overload 1.2 mu", d);
      for (const ms of d.ms) expect(ms).toBeLessThanOrEqual(15_000);
    });
  });

  it("emits recovery once the overload stopped and the queue stayed low for K samples", () => {
    for (const seed of SEEDS) {
      const r = run({ ...BASE, arrivals: [{ kind: "poisson", ratePerSec: 1.2 * MU, untilMs: 20_000 }] }, seed);
      const states = r.reports.map((x) => x.state);
      expect(states[0]).toBe("saturated");
      expect(states.at(-1)).toBe("ok");
      const recovery = r.reports.at(-1)!;
      expect(recovery.previousState).toBe("saturated");
      expect(recovery.cause).toBeNull();
      // The backlog (~0.2 mu * 20 s ~ 2200) drains at mu in ~4 s, then K = 5 low samples.
      expect(recovery.detectedAt).toBeGreaterThan(24_000);
      expect(recovery.detectedAt).toBeLessThan(32_000);
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

  it("stall: K saturated samples with zero completions, even with a flat queue; unconsumed bodies attributed", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    const stallSample = { queued: 2, completions: 0, unconsumedCount: 3, unconsumedOldestMs: 12_000 };
    const out = feed(d, [stallSample, stallSample, stallSample, stallSample, stallSample]);
    expect(out.slice(0, 4).filter(Boolean)).toEqual([]);
    const r = out[4]!;
    expect(r.state).toBe("stalled");
    expect(r.cause).toBe("unconsumed_bodies");
    expect(r.unconsumed).toEqual({ count: 3, oldestMs: 12_000 });
    expect(r.recommendedMaxSockets).toBeNull();
    expect(r.message).toContain("socket usage at capacity=4 and 2 additional requests are enqueued");
    expect(r.message).toContain("3 responses handed to the caller have not been read or destroyed");
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

  it("recovery needs K consecutive samples at or below maxSockets/2 (hysteresis)", () => {
    const d = new SaturationDetector({ origin: "http://a:80" });
    feed(d, [{ queued: 4 }, { queued: 5 }, { queued: 6 }, { queued: 7 }, { queued: 8 }]);
    expect(d.state).toBe("saturated");
    // lowWater = floor(4 / 2) = 2; the 3 breaks the streak.
    const queued = [2, 1, 3, 0, 0, 0, 0, 0];
    const out = feed(
      d,
      queued.map((q) => ({ queued: q })),
      5000
    );
    expect(out.slice(0, 7).filter(Boolean)).toEqual([]);
    expect(out[7]?.state).toBe("ok");
    expect(out[7]?.previousState).toBe("saturated");
    expect(d.needsSamples).toBe(true); // window still holds samples
    d.resetWindow();
    expect(d.needsSamples).toBe(false);
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
