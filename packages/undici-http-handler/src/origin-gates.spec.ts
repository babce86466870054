/**
 * OriginGates on its own (issue 33): a gate is kept while it has a request in use or queued, or while it is pinned
 * (the handler's cached origin); an idle unpinned gate is dropped at once, with its `_OTHER` entry's gate queue; a
 * later request to the origin gets a new gate.
 */
import { describe, expect, it } from "vitest";
import { ConnectingSockets } from "./connecting-sockets";
import type { GatedRequest } from "./origin-gate";
import { OriginGates } from "./origin-gates";
import { OriginPoolState } from "./origin-pool-state";

function node(): GatedRequest {
  return {
    begunAt: 0,
    heldSince: -1,
    pausedAt: 0,
    listTag: 0,
    wasQueued: false,
    listPrev: undefined,
    listNext: undefined,
    dispatchFromGate() {},
  };
}

const other = () =>
  new OriginPoolState("_OTHER", { windowSamples: 5, sampleIntervalMs: 1000, stallAfterMs: 30_000 } as never);

describe("OriginGates", () => {
  it("keeps the pinned gate while idle, and drops an idle gate once another is pinned", () => {
    const gates = new OriginGates(new ConnectingSockets());
    const a = gates.pinGate("http://a:80", 1, undefined, undefined);
    expect(a.admit()).toBe(true);
    a.freeSlot();
    // Pinned: kept, and handed out again for the origin.
    expect(gates.byOrigin.get("http://a:80")).toBe(a);
    expect(gates.pinGate("http://a:80", 1, undefined, undefined)).toBe(a);
    gates.pinGate("http://b:80", 1, undefined, undefined);
    expect(gates.byOrigin.has("http://a:80")).toBe(false);
    expect(gates.pinGate("http://a:80", 1, undefined, undefined)).not.toBe(a);
  });

  it("keeps a busy unpinned gate until its last request leaves, then drops it and its _OTHER gate queue", () => {
    const o = other();
    const gates = new OriginGates(new ConnectingSockets());
    const a = gates.pinGate("http://a:80", 1, o, undefined);
    expect(o.gateQueues.get("http://a:80")).toBe(a.fifoQueue);
    expect(a.admit()).toBe(true);
    expect(a.admit()).toBe(false);
    const queued = node();
    a.enqueueWaiter(queued);
    gates.pinGate("http://b:80", 1, o, undefined); // a is busy: kept
    expect(gates.byOrigin.get("http://a:80")).toBe(a);
    a.freeSlot(); // the queued one is dispatched: still busy
    expect(gates.byOrigin.get("http://a:80")).toBe(a);
    a.freeSlot();
    expect(gates.byOrigin.has("http://a:80")).toBe(false);
    expect(o.gateQueues.has("http://a:80")).toBe(false);
    // The pinned gate of b stays, with its queue.
    expect([...gates.byOrigin.keys()]).toEqual(["http://b:80"]);
    expect([...o.gateQueues.keys()]).toEqual(["http://b:80"]);
  });

  it("a gate whose last queued request leaves (nothing in use) is dropped too", () => {
    const gates = new OriginGates(new ConnectingSockets());
    const a = gates.pinGate("http://a:80", 0, undefined, undefined);
    expect(a.admit()).toBe(false); // limit 0: everything waits
    const queued = node();
    a.enqueueWaiter(queued);
    gates.unpin(); // busy: kept
    expect(gates.byOrigin.get("http://a:80")).toBe(a);
    a.unlinkWaiter(queued);
    expect(gates.byOrigin.size).toBe(0);
  });

  it("clear() drops every gate and gate queue, busy or not", () => {
    const o = other();
    const gates = new OriginGates(new ConnectingSockets());
    for (let i = 0; i < 10; i++) gates.pinGate(`http://bucket-${i}:80`, 1, o, undefined).admit();
    expect(gates.byOrigin.size).toBe(10);
    gates.clear();
    expect(gates.byOrigin.size).toBe(0);
    expect(o.gateQueues.size).toBe(0);
  });
});
