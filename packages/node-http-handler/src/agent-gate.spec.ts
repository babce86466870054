/**
 * AgentGate on its own: admission against the agent's limits, FIFO dispatch on release (batched: one drain per
 * event-loop turn; at once for an agent that cannot park its freed sockets), O(1) unlink, the agent's total limit
 * over keys, re-entrant failures, and nothing dispatched while the owner is being destroyed. Plain agents (no socket
 * is opened: nothing here creates a request).
 */
import http from "node:http";
import https from "node:https";
import { describe, expect, test as it } from "vitest";
import { AgentGate, type GatedRequest } from "./agent-gate";

class Node implements GatedRequest {
  listTag = 0;
  listPrev: GatedRequest["listPrev"] = undefined;
  listNext: GatedRequest["listNext"] = undefined;
  gateKey: GatedRequest["gateKey"] = undefined;
  constructor(
    readonly id: number,
    readonly log: number[],
    readonly onDispatch: (n: Node) => void = () => {}
  ) {}
  dispatchFromGate(): void {
    this.log.push(this.id);
    this.onDispatch(this);
  }
}

const owner = { destroying: false };
/** `maxQueuedRequests` unset. */
const UNBOUNDED = Number.POSITIVE_INFINITY;
/** One event-loop turn: the gate's batched drain (a `setImmediate`) has run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const pendingImmediates = () => process.getActiveResourcesInfo().filter((r) => r === "Immediate").length;

describe("AgentGate", () => {
  it("admits up to maxSockets per key, queues the rest FIFO and dispatches one per release", async () => {
    const agent = new http.Agent({ maxSockets: 2 });
    const gate = new AgentGate(agent, owner);
    const key = gate.keyFor("127.0.0.1", 8080);
    const log: number[] = [];
    const nodes = Array.from({ length: 5 }, (_, i) => new Node(i, log));
    expect(nodes.map((n) => gate.admit(n, key, UNBOUNDED))).toEqual([
      "dispatch",
      "dispatch",
      "queued",
      "queued",
      "queued",
    ]);
    expect(gate).toMatchObject({ total: 2, queued: 3 });
    gate.leave(nodes[0]);
    expect(log).toEqual([]); // the drain comes in the same turn's check phase, not inside leave()
    await turn();
    expect(log).toEqual([2]);
    gate.leave(nodes[1]);
    gate.leave(nodes[2]);
    await turn();
    expect(log).toEqual([2, 3, 4]);
    expect(gate).toMatchObject({ total: 2, queued: 0 });
    for (const n of nodes.slice(3)) gate.leave(n);
    expect(gate.total).toBe(0);
    // A later leave() is a no-op.
    gate.leave(nodes[0]);
    expect(gate.total).toBe(0);
  });

  it("refuses a request beyond maxQueued per key (left outside the gate); the others keep their order", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 1 }), owner);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const nodes = Array.from({ length: 5 }, (_, i) => new Node(i, log));
    const admitted = nodes.slice(0, 4).map((n) => gate.admit(n, key, 2));
    const other = gate.keyFor("other", 1);
    expect(admitted).toEqual(["dispatch", "queued", "queued", "full"]);
    expect(nodes[3].gateKey).toBeUndefined();
    expect(gate).toMatchObject({ total: 1, queued: 2 });
    // The bound is per key: another origin still queues.
    expect(gate.admit(nodes[4], other, 2)).toBe("dispatch");
    gate.leave(nodes[3]); // no-op: it never entered
    gate.leave(nodes[0]);
    await turn();
    expect(log).toEqual([1]);
    expect(gate.admit(new Node(9, log), key, 0)).toBe("full"); // 0: never wait while a request waits already
    for (const n of [nodes[1], nodes[2], nodes[4]]) gate.leave(n);
    expect(gate).toMatchObject({ total: 0, queued: 0 });
  });

  it("a released slot goes to the oldest waiting request; a new one queues behind it (FIFO)", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 1 }), owner);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const [a, b, c] = [new Node(0, log), new Node(1, log), new Node(2, log)];
    gate.admit(a, key, UNBOUNDED);
    gate.admit(b, key, UNBOUNDED);
    gate.leave(a); // b takes the slot in the next drain; c, admitted before it, queues behind b
    expect(gate.admit(c, key, UNBOUNDED)).toBe("queued");
    await turn();
    expect(log).toEqual([1]);
    gate.leave(c); // c leaves the queue: b keeps its slot
    expect(gate).toMatchObject({ total: 1, queued: 0 });
  });

  it("unlinks a queued request from anywhere in O(1), keeping the order of the others", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 1 }), owner);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const nodes = Array.from({ length: 5 }, (_, i) => new Node(i, log));
    for (const n of nodes) gate.admit(n, key, UNBOUNDED);
    gate.leave(nodes[2]);
    gate.leave(nodes[4]);
    gate.leave(nodes[1]);
    expect(key.nodeCount).toBe(1);
    expect(nodes[2]).toMatchObject({ gateKey: undefined, listTag: 0, listPrev: undefined, listNext: undefined });
    gate.leave(nodes[0]);
    await turn();
    expect(log).toEqual([3]);
    expect(key.firstNode).toBeUndefined();
    expect(key.lastNode).toBeUndefined();
  });

  it("honours the agent's maxTotalSockets over keys", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 2, maxTotalSockets: 3 }), owner);
    const log: number[] = [];
    const nodes = Array.from({ length: 6 }, (_, i) => new Node(i, log));
    // A key is admitted into right after keyFor() returned it (the handler's order).
    const admitted = nodes.map((n, i) => gate.admit(n, gate.keyFor(i % 2 === 0 ? "a" : "b", 1), UNBOUNDED));
    expect(admitted).toEqual(["dispatch", "dispatch", "dispatch", "queued", "queued", "queued"]);
    gate.leave(nodes[0]); // key a frees a slot: the total allows one more, the oldest of a key with room
    await turn();
    expect(log).toEqual([4]);
    expect(gate.total).toBe(3);
  });

  it("a dispatch that fails synchronously releases its slot inside the drain: the next one goes, no recursion", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 1 }), owner);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const failing = (n: Node) => gate.leave(n);
    const nodes = [new Node(0, log), ...Array.from({ length: 1000 }, (_, i) => new Node(i + 1, log, failing))];
    for (const n of nodes) gate.admit(n, key, UNBOUNDED);
    gate.leave(nodes[0]);
    await turn();
    expect(log).toHaveLength(1000);
    expect(gate).toMatchObject({ total: 0, queued: 0 });
    expect(pendingImmediates()).toBe(0);
  });

  it("dispatches nothing while its owner is being destroyed", async () => {
    const destroying = { destroying: true };
    const gate = new AgentGate(new http.Agent({ maxSockets: 1 }), destroying);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const [a, b] = [new Node(0, log), new Node(1, log)];
    gate.admit(a, key, UNBOUNDED);
    gate.admit(b, key, UNBOUNDED);
    gate.leave(a);
    gate.leave(b);
    await turn();
    expect(log).toEqual([]);
    expect(gate).toMatchObject({ total: 0, queued: 0 });
  });

  it("batches: every slot freed in one turn is dispatched by one drain; none is pending once the queue is empty", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 3 }), owner);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const nodes = Array.from({ length: 8 }, (_, i) => new Node(i, log));
    for (const n of nodes) gate.admit(n, key, UNBOUNDED);
    const before = pendingImmediates();
    for (const n of nodes.slice(0, 3)) gate.leave(n);
    expect(pendingImmediates()).toBe(before + 1); // one drain for the three slots
    expect(log).toEqual([]);
    await turn();
    expect(log).toEqual([3, 4, 5]);
    gate.leave(nodes[3]);
    expect(pendingImmediates()).toBe(before + 1);
    // The queued ones leave (abort, timeout) before the drain: it is cancelled, not left to run for nothing.
    gate.leave(nodes[6]);
    gate.leave(nodes[7]);
    expect(pendingImmediates()).toBe(before);
    await turn();
    expect(log).toEqual([3, 4, 5]);
    expect(gate).toMatchObject({ total: 2, queued: 0 });
  });

  it("an agent that cannot park every freed socket (maxFreeSockets < maxSockets) hands the slot over at once", () => {
    const gate = new AgentGate(new http.Agent({ keepAlive: true, maxSockets: 2, maxFreeSockets: 1 }), owner);
    const key = gate.keyFor("h", 1);
    const log: number[] = [];
    const nodes = Array.from({ length: 4 }, (_, i) => new Node(i, log));
    for (const n of nodes) gate.admit(n, key, UNBOUNDED);
    gate.leave(nodes[0]);
    gate.leave(nodes[1]);
    expect(log).toEqual([2, 3]);
    expect(gate).toMatchObject({ total: 2, queued: 0 });
  });

  it("keys by the agent's own name (TLS options included for https); one key per (host, port)", () => {
    const agent = new https.Agent({ maxSockets: 1, rejectUnauthorized: false, servername: "sni.example" });
    const gate = new AgentGate(agent, owner);
    const key = gate.keyFor("127.0.0.1", 443);
    expect(key.name).toBe(
      agent.getName({ host: "127.0.0.1", port: 443, ...(agent as any).options, servername: "sni.example" })
    );
    expect(key.name).toContain("sni.example");
    expect(gate.keyFor("127.0.0.1", 443)).toBe(key);
    // A key with a request in it is kept while other endpoints are asked for.
    const busy = new Node(0, []);
    gate.admit(busy, key, UNBOUNDED);
    expect(gate.keyFor("localhost", 443)).not.toBe(key);
    expect(gate.keyFor("127.0.0.1", 443)).toBe(key);
    gate.leave(busy);
    const plain = new AgentGate(new http.Agent(), owner);
    expect(plain.keyFor("::1", 80).name).toBe("::1:80:");
  });

  it("keeps a key only while it has a request dispatched or queued, and the memoised key (issue 33)", async () => {
    const gate = new AgentGate(new http.Agent({ maxSockets: 1 }), owner);
    const keys = (gate as any).keys as Map<string, unknown>;
    const log: number[] = [];
    const nodes: Node[] = [];
    for (let host = 0; host < 100; host++) {
      for (let i = 0; i < 3; i++) {
        const n = new Node(nodes.length, log);
        nodes.push(n);
        gate.admit(n, gate.keyFor(`bucket-${host}.s3.test`, 443), UNBOUNDED);
      }
    }
    expect(keys.size).toBe(100);
    expect(gate).toMatchObject({ total: 100, queued: 200 });
    // Queued requests leave (abort) from half the hosts; the dispatched ones finish, their queues drain.
    for (let host = 0; host < 50; host++) {
      gate.leave(nodes[host * 3 + 1]);
      gate.leave(nodes[host * 3 + 2]);
    }
    for (let host = 0; host < 100; host++) gate.leave(nodes[host * 3]);
    await turn();
    expect(gate).toMatchObject({ total: 50, queued: 50 });
    expect(keys.size).toBe(50);
    for (const n of nodes) gate.leave(n);
    await turn();
    expect(gate).toMatchObject({ total: 0, queued: 0 });
    // Only the memoised key (the last endpoint asked for) is left.
    expect([...keys.keys()]).toEqual([gate.keyFor("bucket-99.s3.test", 443).name]);
    // One endpoint: its key is kept across requests (nothing re-created per request).
    const key = gate.keyFor("bucket-99.s3.test", 443);
    const n = new Node(0, log);
    gate.admit(n, key, UNBOUNDED);
    gate.leave(n);
    expect(gate.keyFor("bucket-99.s3.test", 443)).toBe(key);
    // Another endpoint: the idle memoised key goes.
    gate.keyFor("other.s3.test", 443);
    expect(keys.has(key.name)).toBe(false);
  });
});
