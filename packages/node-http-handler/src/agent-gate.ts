/**
 * AgentGate: the handler-side queue in front of one `http.Agent`.
 *
 * Node's agent queues a request it has no socket for as a full `ClientRequest` in `agent.requests` (several KB, body
 * already piped) and removes it by an O(queue) splice. The gate keeps the handler's requests out of that queue: per
 * agent key (`agent.getName()`) it counts requests dispatched and not finished (`inUse`) and creates a
 * `ClientRequest` only while `inUse < agent.maxSockets` and the handler's total is below `agent.maxTotalSockets`
 * (both read at each decision). Otherwise the request waits in its key's FIFO, an intrusive doubly linked list of
 * the requests themselves (`GatedRequest`): waiting allocates nothing, leaving is an O(1) unlink.
 *
 * The drain is batched: one `setImmediate` per gate and turn dispatches every slot freed in the turn, once Node has
 * parked the freed sockets in `freeSockets` (dispatching inside `'close'` would queue them in `agent.requests` for a
 * tick). An agent whose `maxFreeSockets` is below `maxSockets` would destroy the sockets it cannot park, so there
 * `leave()` drains at once. An agent shared with other code may still queue a dispatched request (`agent-queue.ts`).
 *
 * Memory: one `GateKey` per key with a request dispatched or queued, dropped when it empties, except the memoised
 * last one: so the key `keyFor()` returns is valid for `admit()` until the next `keyFor()`.
 */
import { timing as importedTiming } from "@sockeye/pool-monitor/internal";
import type { Agent } from "node:http";
import { isIP } from "node:net";

// Bound once: in this package's CommonJS build (what Node's `require` and `import` load) every use of another
// package's export is a getter call.
const timing = importedTiming;

/** A request the gate can hold and later dispatch: its own state object, with the gate's link fields. @internal */
export interface GatedRequest {
  /** Neighbours while queued (older / younger). */
  gatePrev: GatedRequest | undefined;
  gateNext: GatedRequest | undefined;
  /** The key it is counted under (dispatched) or queued on; `undefined` outside the gate. */
  gateKey: GateKey | undefined;
  /** Queued (true) or dispatched (false) while `gateKey` is set. */
  inGateQueue: boolean;
  /** Creates the Node request (the gate has counted it in `inUse` already). Never throws. */
  dispatchFromGate(): void;
}

/** What `admit()` did with a request: dispatch it now, queued it, or refused it (its key's queue is full). @internal */
export type Admission = "dispatch" | "queued" | "full";

/** One agent key's count and queue. @internal */
export class GateKey {
  /** The handler's requests of this key dispatched to the agent and not finished. */
  inUse = 0;
  /** Queued requests. */
  size = 0;
  head: GatedRequest | undefined = undefined;
  tail: GatedRequest | undefined = undefined;

  /** @param name - the agent's name for the key (`agent.getName()`), the same string `agent.requests` uses. */
  constructor(readonly name: string) {}
}

/** Something whose `destroying` flag stops every dispatch (the handler runtime during `destroy()`). @internal */
export interface GateOwner {
  readonly destroying: boolean;
}

/** @internal */
export class AgentGate {
  /** The handler's requests dispatched to the agent, over all keys. */
  total = 0;
  /** Requests queued, over all keys. */
  queued = 0;
  private readonly keys = new Map<string, GateKey>();
  private draining = false;
  /** The pending batched drain (`timing.afterPoll`), cancelled when the queue empties. */
  private drainImmediate: ReturnType<typeof setImmediate> | undefined = undefined;
  /** `drain`, bound once per gate (`timing.afterPoll` passes no argument). */
  private readonly drainLater = (): void => this.drain();
  /** The key a slot freed in last (drained first). */
  private lastFreed: GateKey | undefined = undefined;
  // One-entry memo of the last (host, port) → key: one endpoint per client is the common case.
  private memoHost: string | undefined = undefined;
  private memoPort: number | undefined = undefined;
  private memoKey: GateKey | undefined = undefined;

  constructor(
    readonly agent: Agent,
    private readonly owner: GateOwner
  ) {}

  /** The agent's name for a request to `host`:`port`, as Node computes it; valid for `admit()` until the next call. */
  keyFor(host: string, port: number | undefined): GateKey {
    const memo = this.memoKey;
    if (host === this.memoHost && port === this.memoPort && memo !== undefined) return memo;
    const agent = this.agent as Agent & { options?: Record<string, unknown> };
    const options: Record<string, unknown> = { host, port, ...agent.options };
    if (options.servername == null) options.servername = isIP(host) ? "" : host;
    const name = agent.getName(options as never);
    let key = this.keys.get(name);
    if (key === undefined) this.keys.set(name, (key = new GateKey(name)));
    this.memoHost = host;
    this.memoPort = port;
    this.memoKey = key;
    // The memo moves on: its old key is kept no longer than the agent's other keys.
    if (memo !== undefined) this.dropIfIdle(memo);
    return key;
  }

  /** Requests queued under `name` (an agent key), for upstream's socket-usage check. */
  queuedUnder(name: string): number {
    return this.keys.get(name)?.size ?? 0;
  }

  /** Counts `r` under `key`: `"dispatch"` now, `"queued"` at the tail, or `"full"` (`maxQueued` wait). O(1). */
  admit(r: GatedRequest, key: GateKey, maxQueued: number): Admission {
    if (key.size === 0 && this.hasRoom(key)) {
      r.gateKey = key;
      r.inGateQueue = false;
      key.inUse++;
      this.total++;
      return "dispatch";
    }
    if (key.size >= maxQueued) return "full";
    r.gateKey = key;
    r.inGateQueue = true;
    r.gateNext = undefined;
    r.gatePrev = key.tail;
    if (key.tail !== undefined) key.tail.gateNext = r;
    else key.head = r;
    key.tail = r;
    key.size++;
    this.queued++;
    return "queued";
  }

  /** `r` leaves the gate: a queued one is unlinked (O(1)), a dispatched one frees its slot. No-op if outside. */
  leave(r: GatedRequest): void {
    const key = r.gateKey;
    if (key === undefined) return;
    r.gateKey = undefined;
    if (r.inGateQueue) {
      r.inGateQueue = false;
      this.unlink(key, r);
    } else {
      key.inUse--;
      this.total--;
      if (this.queued !== 0) {
        this.lastFreed = key;
        const agent = this.agent;
        // An agent that cannot park every freed socket would destroy the extra ones: hand them over at once instead.
        if (agent.maxFreeSockets < agent.maxSockets) this.drain();
        else if (this.drainImmediate === undefined) this.drainImmediate = timing.afterPoll(this.drainLater);
      }
    }
    this.dropIfIdle(key);
  }

  /**
   * Dispatches queued requests, oldest first, while the limits allow: the key a slot freed in last first, then the
   * others (a total limit lets a slot freed in one key go to another); nothing while the owner is being destroyed.
   */
  drain(): void {
    const immediate = this.drainImmediate;
    if (immediate !== undefined) {
      timing.clearImmediate(immediate);
      this.drainImmediate = undefined;
    }
    if (this.draining || this.owner.destroying) return;
    this.draining = true;
    try {
      const first = this.lastFreed;
      if (first !== undefined) this.drainKey(first);
      if (this.queued === 0) return;
      for (const other of this.keys.values()) {
        if (other.size !== 0 && other !== first) this.drainKey(other);
        if (this.queued === 0) break;
      }
    } finally {
      this.draining = false;
    }
  }

  /** Drops `key` when nothing is dispatched or queued under it, unless it is the memoised key. O(1). */
  private dropIfIdle(key: GateKey): void {
    if (key.inUse + key.size === 0 && key !== this.memoKey) this.keys.delete(key.name);
  }

  private hasRoom(key: GateKey): boolean {
    const agent = this.agent;
    // A non-numeric maxTotalSockets (an agent built before Node had it) compares false: treated as unlimited.
    return key.inUse < agent.maxSockets && !(this.total >= agent.maxTotalSockets);
  }

  private unlink(key: GateKey, r: GatedRequest): void {
    const prev = r.gatePrev;
    const next = r.gateNext;
    if (prev !== undefined) prev.gateNext = next;
    else key.head = next;
    if (next !== undefined) next.gatePrev = prev;
    else key.tail = prev;
    r.gatePrev = r.gateNext = undefined;
    key.size--;
    if (--this.queued === 0 && this.drainImmediate !== undefined) {
      timing.clearImmediate(this.drainImmediate);
      this.drainImmediate = undefined;
    }
  }

  private drainKey(key: GateKey): void {
    while (key.head !== undefined && this.hasRoom(key) && !this.owner.destroying) {
      const head = key.head;
      this.unlink(key, head);
      head.inGateQueue = false;
      key.inUse++;
      this.total++;
      head.dispatchFromGate();
    }
  }
}
