import { describe, expect, it } from "vitest";
import { CONTROL_SUFFIX, cycleSummary, focusVerdict, summarizeCheck } from "./focus-summary.mjs";

const check = { subject: "s", base: "b", op: "<=", limit: 1.03 };

/** `cycles` cycles of `rounds` rounds; each round's CPU (µs/request) from the given per-client functions. */
function series(cycles: number, rounds: number, cpu: Record<string, (cycle: number, round: number) => number>) {
  const out: Record<string, number[]> = {};
  for (let k = 0; k < cycles; k++) {
    for (let r = 0; r < rounds; r++) {
      for (const [name, f] of Object.entries(cpu)) (out[name] ??= []).push(f(k, r));
    }
  }
  return out;
}

describe("focusVerdict", () => {
  it("is met only when the whole interval is within the limit, missed only when all of it is past", () => {
    expect(focusVerdict({ low: 1.0, high: 1.02 }, "<=", 1.03)).toBe("met");
    expect(focusVerdict({ low: 1.0, high: 1.03 }, "<=", 1.03)).toBe("met");
    expect(focusVerdict({ low: 0.99, high: 1.0 }, "<", 1)).toBe("unresolved");
    expect(focusVerdict({ low: 1.02, high: 1.05 }, "<=", 1.03)).toBe("unresolved");
    expect(focusVerdict({ low: 1.031, high: 1.05 }, "<=", 1.03)).toBe("missed");
    expect(focusVerdict({ low: 1.0, high: 1.05 }, "<", 1)).toBe("missed");
    expect(focusVerdict({ low: 1.0, high: 1.05 }, undefined, undefined)).toBe("measured");
  });
});

describe("cycleSummary", () => {
  it("takes one value per cycle (the median of its rounds) and the interval over cycles", () => {
    // 21 cycles of 6 rounds: cycle k's rounds are all 1 + k/100, except one wild round per cycle.
    const ratios: number[] = [];
    for (let k = 0; k < 21; k++) for (let r = 0; r < 6; r++) ratios.push(r === 0 ? 9 : 1 + k / 100);
    const s = cycleSummary(ratios, 6);
    expect(s.n).toBe(21); // cycles, not rounds
    expect(s.median).toBeCloseTo(1.1, 10); // the wild rounds do not move a cycle's median
    expect([s.low, s.high].map((x) => Math.round(x * 100) / 100)).toEqual([1.05, 1.15]); // x(6)..x(16) of 21
  });
});

describe("summarizeCheck", () => {
  it("divides by the mean of the two baseline instances and reports the A/A control", () => {
    // The second baseline instance is 4 % above the first in every round; the subject is 2 % above their mean.
    const cpu = series(30, 6, {
      b: (k, r) => 100 + ((k * 7 + r) % 5),
      [`b${CONTROL_SUFFIX}`]: (k, r) => 1.04 * (100 + ((k * 7 + r) % 5)),
      s: (k, r) => 1.02 * 1.02 * (100 + ((k * 7 + r) % 5)),
    });
    const result = summarizeCheck(check, cpu, 6);
    expect(result.ratio.median).toBeCloseTo(1.02, 10);
    expect(result.control.median).toBeCloseTo(1.04, 10);
    // A control whose interval excludes 1 voids the verdict, whatever the ratio says.
    expect(result.controlOk).toBe(false);
    expect(result.verdict).toMatch(/^void/);
  });

  it("gives a verdict when the control holds 1", () => {
    const noise = (k: number, r: number) => ((k * 13 + r * 5) % 7) - 3; // -3..3, varies by round and cycle
    const cpu = series(40, 6, {
      b: (k, r) => 100 + noise(k, r),
      [`b${CONTROL_SUFFIX}`]: (k, r) => 100 + noise(r, k),
      s: (k, r) => 106 + noise(k, r),
    });
    const result = summarizeCheck(check, cpu, 6);
    expect(result.controlOk).toBe(true);
    expect(result.ratio.low).toBeGreaterThan(1.03);
    expect(result.verdict).toBe("missed");
  });
});
