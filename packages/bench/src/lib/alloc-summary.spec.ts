import { describe, expect, it } from "vitest";
import { combineAllocationRuns, summarizeAllocation } from "./alloc-summary.mjs";

const frame = (functionName: string, url: string, lineNumber = 9) => ({ functionName, url, lineNumber });
const node = (callFrame: object, selfSize: number, children: object[] = []) => ({ callFrame, selfSize, children });

describe("summarizeAllocation", () => {
  // root -> startRequest (Sockeye) -> ClientRequest (node http); root -> attachRequest (pool-monitor);
  // the same ClientRequest site reached from the harness as well.
  const sockeye = "file:///home/dev/sockeye/packages/node-http-handler/dist/index.mjs";
  const monitor = "file:///home/dev/sockeye/packages/pool-monitor/dist/index.mjs";
  const profile = {
    head: node(frame("(root)", ""), 0, [
      node(frame("startRequest", sockeye), 1000, [node(frame("ClientRequest", "node:_http_client", 133), 3000)]),
      node(frame("attachRequest", monitor), 200),
      node(frame("request", "file:///home/dev/sockeye/packages/bench/src/lib/clients.mjs"), 500, [
        node(frame("ClientRequest", "node:_http_client", 133), 1000),
      ]),
    ]),
  };

  it("adds self sizes into bytes per request, by category and by site over every stack", () => {
    const s = summarizeAllocation(profile, 10);
    expect(s.bytesPerRequest).toBe(570);
    expect(s.categories).toEqual({
      "node http client (_http_*)": 400,
      "Sockeye (@sockeye/node-http-handler)": 100,
      "bench harness": 50,
      "Sockeye (@sockeye/pool-monitor)": 20,
    });
    expect(s.sites[0]).toEqual({
      functionName: "ClientRequest",
      location: "node:_http_client:134",
      bytesPerRequest: 400,
    });
    expect(s.sites.map((x) => x.functionName)).toEqual(["ClientRequest", "startRequest", "request", "attachRequest"]);
  });

  it("keeps only the heaviest `top` sites", () => {
    expect(summarizeAllocation(profile, 10, 2).sites.map((x) => x.functionName)).toEqual([
      "ClientRequest",
      "startRequest",
    ]);
  });

  it("rejects a run without requests instead of dividing by zero", () => {
    expect(() => summarizeAllocation(profile, 0)).toThrow(/requests must be > 0, got 0/);
  });
});

describe("combineAllocationRuns", () => {
  const run = (bytesPerRequest: number, tag: string) => ({
    bytesPerRequest,
    categories: { tag: bytesPerRequest },
    sites: [{ functionName: tag, location: "x:1", bytesPerRequest }],
  });

  it("gives median (min–max) and the breakdown of the repeat closest to the median", () => {
    const c = combineAllocationRuns("sockeye-off", [run(14_300, "a"), run(14_500, "b"), run(14_310, "c")]);
    expect(c.bytesPerRequest).toEqual({ median: 14_310, min: 14_300, max: 14_500, values: [14_300, 14_500, 14_310] });
    expect(c.sites[0].functionName).toBe("c");
    expect(c.categories).toEqual({ tag: 14_310 });
  });

  it("throws on a client without runs", () => {
    expect(() => combineAllocationRuns("floor", [])).toThrow(/floor: no runs/);
  });
});
