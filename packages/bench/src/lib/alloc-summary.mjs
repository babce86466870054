// =============================================================================
// alloc-summary.mjs: reading a sampling heap profile (V8's `HeapProfiler.stopSampling`) as bytes allocated per
// request, and combining a client's repeats; used by bench-alloc.mjs, kept apart so it can be tested without
// running a profiler.
// =============================================================================
import { frameCategory, shortLocation } from "./frame-category.mjs";
import { summary } from "./stats.mjs";

/** @typedef {{ functionName: string, location: string, bytesPerRequest: number }} AllocationSite */

/**
 * Bytes per request in total, per category (`frame-category.mjs`) and for the `top` heaviest allocation sites. A
 * node's `selfSize` is what was allocated with that node's frame on top of the stack (the frame that allocated),
 * so the tree's self sizes add up to the total; a site is one function at one location, over every stack it was on.
 * @param {{ head: { callFrame: object, selfSize: number, children: object[] } }} profile
 * @param {number} requests
 * @param {number} [top]
 */
export function summarizeAllocation(profile, requests, top = 25) {
  if (!(requests > 0)) throw new RangeError(`requests must be > 0, got ${requests}`);
  const categories = new Map();
  const sites = new Map();
  let total = 0;
  const stack = [profile.head];
  while (stack.length > 0) {
    const node = stack.pop();
    for (const child of node.children) stack.push(child);
    if (!node.selfSize) continue;
    const frame = node.callFrame;
    total += node.selfSize;
    const cat = frameCategory(frame);
    categories.set(cat, (categories.get(cat) ?? 0) + node.selfSize);
    const key = `${frame.functionName || "(anonymous)"}\u0000${shortLocation(frame)}`;
    sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
  }
  const perReq = (bytes) => bytes / requests;
  return {
    bytesPerRequest: perReq(total),
    categories: Object.fromEntries([...categories].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, perReq(v)])),
    sites: [...sites]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, v]) => {
        const [functionName, location] = k.split("\u0000");
        return { functionName, location, bytesPerRequest: perReq(v) };
      }),
  };
}

/**
 * One client's repeats in one cell: median (min–max) of bytes per request, and the breakdown (categories, sites) of
 * the repeat closest to the median (breakdowns are not averaged: sites differ between repeats).
 * @param {string} client
 * @param {{ bytesPerRequest: number, categories: Record<string, number>, sites: AllocationSite[] }[]} runs
 */
export function combineAllocationRuns(client, runs) {
  if (runs.length === 0) throw new RangeError(`${client}: no runs to combine`);
  const values = runs.map((r) => r.bytesPerRequest);
  const s = summary(values);
  const typical = runs.reduce((a, b) =>
    Math.abs(b.bytesPerRequest - s.median) < Math.abs(a.bytesPerRequest - s.median) ? b : a
  );
  return {
    client,
    bytesPerRequest: { median: s.median, min: s.min, max: s.max, values },
    categories: typical.categories,
    sites: typical.sites,
  };
}
