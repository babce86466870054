/**
 * OriginGate on its own: admission up to the limit, FIFO order, O(1) unlink of a queued request, a freed slot
 * dispatching the oldest queued request, nothing dispatched once closed, and ending connection attempts only when
 * nobody waits. OriginGates (issue 33): a gate is kept while it has a request in use or queued, or while it is
 * pinned (the handler's cached origin); an idle unpinned gate is dropped at once, with its `_OTHER` entry's gate
 * queue; a later request to the origin gets a new gate.
 */
import { describe, expect, it } from "vitest";
import { ConnectingSockets } from "./connecting-sockets";
import { type GatedRequest, OriginGate, OriginGates } from "./origin-gate";
import { OriginPoolState } from "./origin-pool-state";

/** `maxQueuedRequests` unset. */
const UNBOUNDED = Number.POSITIVE_INFINITY;

/** Admits a new request (`n`) into `gate`'s queue: `"dispatch"`, `"queued"` or `"full"`. */
const admit = (gate: OriginGate, n: GatedRequest = node("x", [])) => gate.fifoQueue.admit(n, UNBOUNDED);

function node(name: string, sent: string[]): GatedRequest & { name: string } {
  return {
    name,
    begunAt: 0,
    heldSince: -1,
    pausedAt: 0,
    listTag: 0,
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
    const [c, d, e] = ["c", "d", "e"].map((n) => node(n, sent));
    expect([admit(gate), admit(gate), admit(gate, c)]).toEqual(["dispatch", "dispatch", "queued"]);
    expect([admit(gate, d), admit(gate, e)]).toEqual(["queued", "queued"]);
    gate.unlinkWaiter(d);
    expect(gate.fifoQueue.nodeCount).toBe(2);
    expect(d.listTag).toBe(0);
    gate.freeSlot();
    expect(sent).toEqual(["c"]);
    gate.freeSlot();
    expect(sent).toEqual(["c", "e"]);
    expect([gate.fifoQueue.inUse, gate.fifoQueue.nodeCount]).toEqual([2, 0]);
  });

  it("a new request queues behind waiting ones even when a slot is momentarily free", () => {
    const gate = new OriginGate("http://a:80", 1, new ConnectingSockets());
    expect(admit(gate)).toBe("dispatch");
    expect(admit(gate, node("b", []))).toBe("queued");
    gate.fifoQueue.inUse = 0;
    expect(admit(gate)).toBe("queued");
  });

  it("a dispatch failing synchronously frees its slot inside the drain: the loop goes on, without recursion", () => {
    const gate = new OriginGate("http://a:80", 1, new ConnectingSockets());
    admit(gate);
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
      admit(gate, n);
    }
    gate.freeSlot();
    expect(sent).toHaveLength(10_000);
    expect(maxDepth).toBe(1);
    expect([gate.fifoQueue.inUse, gate.fifoQueue.nodeCount]).toEqual([0, 0]);
  });

  it("unlimited: never queues; closed (limit 0): dispatches nothing", () => {
    const sent: string[] = [];
    const unlimited = new OriginGate("http://a:80", null, new ConnectingSockets());
    for (let i = 0; i < 100; i++) expect(admit(unlimited)).toBe("dispatch");
    expect(unlimited.describe()).toBe("maxSockets=unlimited, 0 queued");
    const gate = new OriginGate("http://a:80", 1, new ConnectingSockets());
    admit(gate);
    admit(gate, node("b", sent));
    expect(gate.describe()).toBe("maxSockets=1, 1 queued");
    gate.setLimit(0);
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
    gate.fifoQueue.linkTail(node("b", []));
    gate.abandonIfUnneeded();
    expect(calls).toEqual([]);
    gate.unlinkWaiter(gate.fifoQueue.firstNode as GatedRequest);
    gate.abandonIfUnneeded();
    expect(calls).toEqual(["https://a:443"]);
  });
});

const other = () =>
  new OriginPoolState("_OTHER", { windowSamples: 5, sampleIntervalMs: 1000, stallAfterMs: 30_000 } as never);

describe("OriginGates", () => {
  it("keeps the pinned gate while idle, and drops an idle gate once another is pinned", () => {
    const gates = new OriginGates(new ConnectingSockets());
    const a = gates.pinGate("http://a:80", 1, undefined, undefined);
    expect(admit(a)).toBe("dispatch");
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
    expect(admit(a)).toBe("dispatch");
    expect(admit(a, node("queued", []))).toBe("queued");
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
    const queued = node("queued", []);
    expect(admit(a, queued)).toBe("queued"); // limit 0: everything waits
    gates.unpin(); // busy: kept
    expect(gates.byOrigin.get("http://a:80")).toBe(a);
    a.unlinkWaiter(queued);
    expect(gates.byOrigin.size).toBe(0);
  });

  it("clear() drops every gate and gate queue, busy or not", () => {
    const o = other();
    const gates = new OriginGates(new ConnectingSockets());
    for (let i = 0; i < 10; i++) admit(gates.pinGate(`http://bucket-${i}:80`, 1, o, undefined));
    expect(gates.byOrigin.size).toBe(10);
    gates.clear();
    expect(gates.byOrigin.size).toBe(0);
    expect(o.gateQueues.size).toBe(0);
  });
});
