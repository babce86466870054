import { describe, expect, it } from "vitest";
import { latenessMarkdown, percentile, summarizeProbes } from "./lateness-summary.mjs";

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

describe("latenessMarkdown", () => {
  const config = { probes: 8, loadConcurrency: 16, many: 10_000, states: ["alone", "under load", "in flight"] };
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

  it("puts a handler's cells of every state on one row, Δ signed, a missing state empty", () => {
    const lines = latenessMarkdown(
      [cell("A", "alone", 1.5), cell("A", "under load", -0.25), cell("A", "in flight", 3), cell("B", "alone", 2)],
      config
    );
    expect(lines).toContain(
      "| handler | deadline | alone p50 / p90 (floor) Δ | elu | under load p50 / p90 (floor) Δ | elu | 10,000 in flight p50 / p90 (floor) Δ | elu |"
    );
    const rows = lines.filter((l) => l.startsWith("| A") || l.startsWith("| B"));
    expect(rows).toEqual([
      "| A | requestTimeout 1 s | 1.0 / 2.0 (0.5) **+1.5** | 90 % | 1.0 / 2.0 (0.5) **-0.3** | 90 % | 1.0 / 2.0 (0.5) **+3.0** | 90 % |",
      "| B | requestTimeout 1 s | 1.0 / 2.0 (0.5) **+2.0** | 90 % |  |  |  |  |",
    ]);
  });

  it("says why a cell has no sample", () => {
    const [row] = latenessMarkdown([cell("A", "alone", Number.NaN, 0)], config).filter((l) => l.startsWith("| A"));
    expect(row).toContain("no sample (answered)");
  });
});
