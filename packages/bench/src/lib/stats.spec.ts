import { describe, expect, it } from "vitest";
import { medianInterval } from "./stats.mjs";

const ranks = (n: number) => Array.from({ length: n }, (_, i) => n - i); // n..1, unsorted on purpose

describe("medianInterval", () => {
  it("picks the order statistics of the binomial(n, 1/2) interval (tabulated values)", () => {
    // n = 21: P(X <= 5) = 0.0133 <= 0.025 < P(X <= 6) = 0.0392 -> x(6)..x(16), coverage 1 - 2 * 0.0133.
    expect(medianInterval(ranks(21))).toMatchObject({ low: 6, high: 16, k: 6, n: 21 });
    expect(medianInterval(ranks(21)).coverage).toBeCloseTo(0.9734, 4);
    // n = 100: P(X <= 39) = 0.0176 <= 0.025 < P(X <= 40) = 0.0284 -> x(40)..x(61).
    expect(medianInterval(ranks(100))).toMatchObject({ low: 40, high: 61, k: 40 });
    expect(medianInterval(ranks(100)).coverage).toBeCloseTo(0.9648, 4);
    // n = 101 -> x(41)..x(61), coverage 0.954.
    expect(medianInterval(ranks(101))).toMatchObject({ low: 41, high: 61 });
  });

  it("returns the whole range, with its lower coverage, when n is too small for the level", () => {
    expect(medianInterval(ranks(5))).toEqual({ low: 1, high: 5, coverage: 1 - 2 / 32, k: 1, n: 5 });
    // n = 6 is the smallest sample whose whole range reaches 95 %.
    expect(medianInterval(ranks(6))).toEqual({ low: 1, high: 6, coverage: 1 - 2 / 64, k: 1, n: 6 });
  });

  it("narrows with a lower level and ignores non-finite values", () => {
    const xs = [...ranks(21), Number.NaN, Number.POSITIVE_INFINITY];
    expect(medianInterval(xs).n).toBe(21);
    const narrow = medianInterval(ranks(21), 0.5);
    expect(narrow.high - narrow.low).toBeLessThan(16 - 6);
    expect(narrow.coverage).toBeGreaterThanOrEqual(0.5);
    expect(medianInterval([])).toMatchObject({ n: 0, coverage: 0 });
  });
});
