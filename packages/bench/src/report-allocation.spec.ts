import { describe, expect, it } from "vitest";
import { allocationSection } from "./report.mjs";

const row = (client: string, median: number, categories: Record<string, number>) => ({
  client,
  bytesPerRequest: { median, min: median - 10, max: median + 10, values: [median - 10, median + 10] },
  categories,
  sites: [],
});

const alloc = {
  meta: { date: "2026-11-24T08:28:00.000Z", node: "v20.20.2", samplingInterval: 1024, requests: 30000, repeats: 2 },
  results: [
    {
      cell: { c: 50, body: 128, timeouts: "on" },
      rows: [
        row("floor", 12_000, { "node http client (_http_*)": 6_000 }),
        row("upstream", 18_000, { "node http client (_http_*)": 8_000, "Smithy (@smithy/*)": 2_500 }),
        row("sockeye-off", 14_000, {
          "node http client (_http_*)": 6_800,
          "Sockeye (@sockeye/node-http-handler)": 1_600,
        }),
        row("sockeye-interval", 14_140, { "Sockeye (@sockeye/pool-monitor)": 290, "other node internals": 0.4 }),
      ],
      skipped: { "sockeye-undici": "not built" },
    },
  ],
};

describe("allocationSection", () => {
  const md = allocationSection(alloc).join("\n");

  it("gives each client's bytes per request with its ratios to the floor and to upstream", () => {
    expect(md).toContain("| sockeye-off | 14000 (13990–14010) | 1.17 | 0.78 |");
    expect(md).toContain("| upstream | 18000 (17990–18010) | 1.50 | 1.00 |");
    expect(md).toContain("30,000 requests");
  });

  it("states telemetry's allocation as sockeye-interval minus sockeye-off", () => {
    expect(md).toContain("Telemetry (sockeye-interval − sockeye-off): +140 B per request (+1.0 %).");
  });

  it("breaks the c=50 cell down by category, heaviest first, leaving out categories under 1 B everywhere", () => {
    const header = md.split("\n").find((l) => l.startsWith("| category |"));
    expect(header).toBe("| category | floor | upstream | sockeye-off | sockeye-interval |");
    const cats = md
      .split("\n")
      .filter((l) => /^\| (node|Smithy|Sockeye|other)/.test(l))
      .map((l) => l.split(" | ")[0].slice(2));
    expect(cats).toEqual([
      "node http client (_http_*)",
      "Smithy (@smithy/*)",
      "Sockeye (@sockeye/node-http-handler)",
      "Sockeye (@sockeye/pool-monitor)",
    ]);
    expect(md).toContain("| Sockeye (@sockeye/pool-monitor) | 0 | 0 | 0 | 290 |");
  });

  it("names a skipped client and why", () => {
    expect(md).toContain("- sockeye-undici: skipped (not built)");
  });
});
