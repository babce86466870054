import { describe, expect, it } from "vitest";
import { callgrindEvents, callgrindTotal, instrConfigKey, mergeInstrResult, summarizeInstr } from "./instr-summary.mjs";

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

describe("callgrindEvents", () => {
  it("names each total by the events line, trailing zeros omitted by callgrind included", () => {
    const text = [
      "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw",
      "summary: 0",
      "totals: 900 300 200 5 40 30 2 7",
    ].join("\n");
    expect(callgrindEvents(text)).toEqual({
      Ir: 900,
      Dr: 300,
      Dw: 200,
      I1mr: 5,
      D1mr: 40,
      D1mw: 30,
      ILmr: 2,
      DLmr: 7,
      DLmw: 0,
    });
  });

  it("throws without an events or totals line", () => {
    expect(() => callgrindEvents("totals: 5\n")).toThrow(/events/);
  });
});

describe("summarizeInstr with cache simulation", () => {
  it("adds L1 data and last-level misses per request when the runs carry callgrind's cache events", () => {
    const events = (d1: number, ll: number) => ({ Ir: 0, D1mr: d1, D1mw: d1, DLmr: ll, DLmw: 0, ILmr: ll });
    const runs = [
      { client: "a", repeat: 1, instructions: 1000, requests: 10, events: events(50, 5) },
      { client: "a", repeat: 2, instructions: 1000, requests: 10, events: events(70, 10) },
      { client: "b", repeat: 1, instructions: 1000, requests: 10 },
    ];
    const s = summarizeInstr(runs, []);
    expect(s.clients.a.l1DataMisses).toEqual({ median: 12, min: 10, max: 14 });
    expect(s.clients.a.lastLevelMisses).toEqual({ median: 1.5, min: 1, max: 2 });
    expect(s.clients.b).not.toHaveProperty("l1DataMisses");
  });
});

describe("mergeInstrResult", () => {
  const meta = (over: object = {}) => ({
    clients: ["sockeye-off", "sockeye-interval"],
    c: 50,
    body: 128,
    timeouts: true,
    reader: true,
    cacheSim: false,
    requests: 3000,
    warmup: 20000,
    ...over,
  });

  it("replaces the result of the same configuration and keeps the others, newest last", () => {
    const a = { meta: meta(), tag: "a" };
    const b = { meta: meta({ reader: false }), tag: "b" };
    const a2 = { meta: meta(), tag: "a2" };
    const merged = mergeInstrResult(mergeInstrResult(mergeInstrResult(undefined, a), b), a2);
    expect(merged.results.map((r: { tag: string }) => r.tag)).toEqual(["b", "a2"]);
  });

  it("keys on every knob that changes what is measured", () => {
    const base = instrConfigKey(meta());
    for (const over of [
      { clients: ["floor"] },
      { c: 1 },
      { body: 65536 },
      { timeouts: false },
      { reader: false },
      { cacheSim: true },
      { requests: 1000 },
      { warmup: 100 },
    ]) {
      expect(instrConfigKey(meta(over))).not.toBe(base);
    }
    // A result written before the reader knob existed measured with the reader on.
    expect(instrConfigKey({ ...meta(), reader: undefined } as never)).toBe(base);
  });
});
