import { describe, expect, test as it } from "vitest";
import { DurationHistogram } from "./duration-histogram";

describe("DurationHistogram", () => {
  it("never reports a percentile above the exact maximum", () => {
    const h = new DurationHistogram();
    for (const ms of [1, 2, 3, 5148.928]) h.record(ms);
    const s = h.summary();
    expect(s.max).toBe(5148.928);
    expect(s.p99).toBeLessThanOrEqual(s.max);
    expect(s.p90).toBeLessThanOrEqual(s.max);
    expect(s.count).toBe(4);
  });

  it("is all zero when empty and after reset", () => {
    const h = new DurationHistogram();
    expect(h.summary()).toEqual({ count: 0, p50: 0, p90: 0, p99: 0, max: 0 });
    h.record(10);
    h.reset();
    expect(h.summary()).toEqual({ count: 0, p50: 0, p90: 0, p99: 0, max: 0 });
  });
});
