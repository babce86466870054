import { describe, expect, it } from "vitest";
import { callgrindTotal, summarizeInstr } from "./instr-summary.mjs";

describe("callgrindTotal", () => {
  it("reads the totals line, not the summary line callgrind writes first", () => {
    const text = ["version: 1", "events: Ir", "summary: 0", "fn=(1) foo", "3 12", "totals: 485061154", ""].join("\n");
    expect(callgrindTotal(text)).toBe(485061154);
  });

  it("throws when the file has no totals (the window was never switched on)", () => {
    expect(() => callgrindTotal("events: Ir\nsummary: 0\n")).toThrow(/totals/);
  });
});

describe("summarizeInstr", () => {
  const run = (client: string, repeat: number, instructions: number) => ({
    client,
    repeat,
    instructions,
    requests: 1000,
  });

  it("pairs subject and base by repeat before taking the median ratio", () => {
    // Repeat 2 is 10 % slower for both clients; pairing by repeat keeps the ratio at 1.03 there too.
    const runs = [
      run("off", 1, 100_000_000),
      run("on", 1, 103_000_000),
      run("off", 2, 110_000_000),
      run("on", 2, 113_300_000),
      run("off", 3, 100_000_000),
      run("on", 3, 104_000_000),
    ];
    const s = summarizeInstr(runs, [["on", "off"]]);
    expect(s.clients.off).toEqual({ perRequest: { median: 100_000, min: 100_000, max: 110_000 }, runs: 3 });
    expect(s.clients.on.perRequest.median).toBe(104_000);
    expect(s.pairs).toHaveLength(1);
    expect(s.pairs[0].repeats).toBe(3);
    expect(s.pairs[0].ratio.median).toBeCloseTo(1.03, 10);
    expect(s.pairs[0].ratio.min).toBeCloseTo(1.03, 10);
    expect(s.pairs[0].ratio.max).toBeCloseTo(1.04, 10);
  });

  it("skips repeats where one side is missing, and pairs with no common repeat", () => {
    const runs = [run("a", 1, 2_000_000), run("b", 1, 1_000_000), run("a", 2, 4_000_000)];
    const s = summarizeInstr(runs, [
      ["a", "b"],
      ["a", "c"],
    ]);
    expect(s.pairs).toEqual([{ subject: "a", base: "b", ratio: { median: 2, min: 2, max: 2 }, repeats: 1 }]);
  });
});
