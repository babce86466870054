import { describe, expect, it } from "vitest";
import { percentile, summarizeProbes, underLoadMarkdown } from "./lateness-summary.mjs";

describe("summarizeProbes", () => {
  it("pairs each probe with its own floor: Δ is the p90 of the differences, not the difference of the p90s", () => {
    // The loop was late for probes 3 and 4 (floor 30, 40) and the handler only by its own 1 ms; probe 1 alone was
    // late by itself (floor 0). p90 − floor p90 would say 0; the pairs say 20 for the one probe the handler delayed.
    const s = summarizeProbes([
      { late: 20, floor: 0 },
      { late: 1, floor: 0 },
      { late: 31, floor: 30 },
      { late: 41, floor: 40 },
      { error: "answered" },
    ]);
    expect(s).toMatchObject({ n: 4, p50: 20, p90: 41, max: 41, floorP50: 0, floorP90: 40, deltaP90: 20 });
    expect(s.errors).toEqual(["answered"]);
  });

  it("is NaN without a sample", () => {
    expect(summarizeProbes([{ error: "x" }])).toMatchObject({ n: 0, p90: Number.NaN, deltaP90: Number.NaN });
    expect(percentile([], 50)).toBeNaN();
  });
});

describe("underLoadMarkdown", () => {
  const cell = (handler: string, state: string, deltaP90: number, n = 8) => ({
    handler,
    kind: "request",
    d: 1000,
    state,
    n,
    p50: 1,
    p90: 2,
    floorP90: 0.5,
    deltaP90,
    elu: 0.9,
    errors: n === 0 ? ["answered"] : [],
  });

  it("puts a handler's alone and under-load cells on one row, Δ signed", () => {
    const lines = underLoadMarkdown([cell("A", "alone", 1.5), cell("A", "under load", -0.25), cell("B", "alone", 2)], {
      loadConcurrency: 16,
      loadProbes: 8,
    });
    const rows = lines.filter((l) => l.startsWith("| A") || l.startsWith("| B"));
    expect(rows).toEqual([
      "| A | requestTimeout 1 s | 1.0 / 2.0 (0.5) **+1.5** | 90 % | 1.0 / 2.0 (0.5) **-0.3** | 90 % |",
      "| B | requestTimeout 1 s | 1.0 / 2.0 (0.5) **+2.0** | 90 % |  |  |",
    ]);
  });

  it("says why a cell has no sample", () => {
    const [row] = underLoadMarkdown([cell("A", "alone", Number.NaN, 0)], { loadConcurrency: 1, loadProbes: 1 }).filter(
      (l) => l.startsWith("| A")
    );
    expect(row).toContain("no sample (answered)");
  });
});
