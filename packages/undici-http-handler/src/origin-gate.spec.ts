/**
 * OriginGate on its own: admission up to the limit, FIFO order, O(1) unlink of a queued request, a freed slot
 * dispatching the oldest queued request, nothing dispatched once closed, and ending connection attempts only when
 * nobody waits.
 */
import { describe, expect, it } from "vitest";
import { ConnectingSockets } from "./connecting-sockets";
import { type GatedRequest, OriginGate } from "./origin-gate";

function node(name: string, sent: string[]): GatedRequest & { name: string } {
  return {
    name,
    begunAt: 0,
    heldSince: -1,
    pausedAt: 0,
    listTag: 0,
    wasQueued: false,
    listPrev: undefined,
    listNext: undefined,
    dispatchFromGate() {
      sent.push(name);
    },
  };
}

describe("OriginGate", () => {
  it("admits up to the limit, then queues; a freed slot dispatches the oldest queued request", () => {
    const sent: string[] = [];
    const gate = new OriginGate("http://a:80", 2, new ConnectingSockets());
    expect([gate.admit(), gate.admit(), gate.admit()]).toEqual([true, true, false]);
    const [c, d, e] = ["c", "d", "e"].map((n) => node(n, sent));
    gate.enqueueWaiter(c);
    gate.enqueueWaiter(d);
    gate.enqueueWaiter(e);
    gate.unlinkWaiter(d);
    expect(gate.fifoQueue.nodeCount).toBe(2);
    expect(d.listTag).toBe(0);
    gate.freeSlot();
    expect(sent).toEqual(["c"]);
    gate.freeSlot();
    expect(sent).toEqual(["c", "e"]);
    expect([gate.inUse, gate.fifoQueue.nodeCount]).toEqual([2, 0]);
  });

  it("a new request queues behind waiting ones even when a slot is momentarily free", () => {
    const gate = new OriginGate("http://a:80", 1, new ConnectingSockets());
    expect(gate.admit()).toBe(true);
    gate.enqueueWaiter(node("b", []));
    gate.inUse = 0;
    expect(gate.admit()).toBe(false);
  });

  it("a dispatch failing synchronously frees its slot inside drain(): the loop goes on, without recursion", () => {
    const gate = new OriginGate("http://a:80", 1, new ConnectingSockets());
    gate.admit();
    const sent: string[] = [];
    let depth = 0;
    let maxDepth = 0;
    for (let i = 0; i < 10_000; i++) {
      const n = node(String(i), sent);
      n.dispatchFromGate = () => {
        depth++;
        maxDepth = Math.max(maxDepth, depth);
        sent.push(String(i));
        gate.freeSlot(); // the dispatcher rejected it at once
        depth--;
      };
      gate.enqueueWaiter(n);
    }
    gate.freeSlot();
    expect(sent).toHaveLength(10_000);
    expect(maxDepth).toBe(1);
    expect([gate.inUse, gate.fifoQueue.nodeCount]).toEqual([0, 0]);
  });

  it("unlimited: never queues; closed: dispatches nothing", () => {
    const sent: string[] = [];
    const unlimited = new OriginGate("http://a:80", null, new ConnectingSockets());
    for (let i = 0; i < 100; i++) expect(unlimited.admit()).toBe(true);
    const gate = new OriginGate("http://a:80", 1, new ConnectingSockets());
    gate.admit();
    gate.enqueueWaiter(node("b", sent));
    gate.gateClosed = true;
    gate.freeSlot();
    expect(sent).toEqual([]);
  });

  it("abandonIfUnneeded ends connection attempts only when nobody waits", () => {
    const calls: string[] = [];
    const connecting = { abandon: (origin: string) => calls.push(origin) } as unknown as ConnectingSockets;
    const gate = new OriginGate("https://a:443", 1, connecting);
    gate.awaitingConn = 1;
    gate.abandonIfUnneeded();
    gate.awaitingConn = 0;
    gate.enqueueWaiter(node("b", []));
    gate.abandonIfUnneeded();
    expect(calls).toEqual([]);
    gate.unlinkWaiter(gate.fifoQueue.firstNode as GatedRequest);
    gate.abandonIfUnneeded();
    expect(calls).toEqual(["https://a:443"]);
  });
});
