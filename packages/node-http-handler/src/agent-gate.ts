/**
 * AgentGate: the handler-side queue in front of one `http.Agent`.
 *
 * Node's agent queues a request it has no socket for as a full `ClientRequest` in `agent.requests` (several KB, body
 * already piped) and removes it by an O(queue) splice. The gate keeps the handler's requests out of that queue: per
 * agent key (`agent.getName()`) it counts requests dispatched and not finished (`inUse`) and creates a
 * `ClientRequest` only while `inUse < agent.maxSockets` and the handler's total is below `agent.maxTotalSockets`
 * (both read at each decision). Otherwise the request waits in its key's FIFO (`GateKey`, an `AdmissionQueue`).
 *
 * The drain is batched: one `setImmediate` per gate and turn dispatches every slot freed in the turn, once Node has
 * parked the freed sockets in `freeSockets` (dispatching inside `'close'` would queue them in `agent.requests` for a
 * tick). An agent whose `maxFreeSockets` is below `maxSockets` would destroy the sockets it cannot park, so there
 * `leave()` drains at once. An agent shared with other code may still queue a dispatched request (`agent-queue.ts`).
 *
 * Memory: one `GateKey` per key with a request dispatched or queued, dropped when it empties, except the memoised
 * last one: so the key `keyFor()` returns is valid for `admit()` until the next `keyFor()`.
 */
import {
  type Admission,
  AdmissionQueue,
  type GatedNode,
  timing as importedTiming,
} from "@sockeye/pool-monitor/internal";
import type { Agent } from "node:http";
import { isIP } from "node:net";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const timing = importedTiming;

export type { Admission } from "@sockeye/pool-monitor/internal";

/** A request the gate can hold and later dispatch: its own state object, with the gate's link fields. @internal */
export interface GatedRequest extends GatedNode {
  /** The key it is counted under (dispatched) or queued on (`listTag` set); `undefined` outside the gate. */
  gateKey: GateKey | undefined;
}

/** One agent key's count (`inUse`: the handler's requests dispatched to the agent and not finished) and FIFO. @internal */
export class GateKey extends AdmissionQueue<GatedRequest> {
  /** `name`: the agent's name for the key (`agent.getName()`, as `agent.requests` keys it); `gate`: its holder. */
  constructor(
    readonly name: string,
    private readonly gate: AgentGate
  ) {
    super();
  }

  /** Below the agent's `maxSockets` here and `maxTotalSockets` over all keys, unless the owner is being destroyed. */
  protected override hasRoom(): boolean {
    const gate = this.gate;
    const agent = gate.agent;
    // A non-numeric maxTotalSockets (an agent built before Node had it) compares false: treated as unlimited.
    return this.inUse < agent.maxSockets && !(gate.total >= agent.maxTotalSockets) && !gate.owner.destroying;
  }

  protected override dispatch(r: GatedRequest): void {
    const gate = this.gate;
    gate.total++;
    if (--gate.queued === 0) gate.cancelDrain();
    r.dispatchFromGate();
  }
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
    readonly owner: GateOwner
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
    if (key === undefined) this.keys.set(name, (key = new GateKey(name, this)));
    this.memoHost = host;
    this.memoPort = port;
    this.memoKey = key;
    // The memo moves on: its old key is kept no longer than the agent's other keys.
    if (memo !== undefined) this.dropIfIdle(memo);
    return key;
  }

  /** Requests queued under `name` (an agent key), for upstream's socket-usage check. */
  queuedUnder(name: string): number {
    return this.keys.get(name)?.nodeCount ?? 0;
  }

  /** Counts `r` under `key`: `"dispatch"` now, `"queued"` at the tail, or `"full"` (`maxQueued` wait). O(1). */
  admit(r: GatedRequest, key: GateKey, maxQueued: number): Admission {
    const admission = key.admit(r, maxQueued);
    if (admission === "full") return admission;
    r.gateKey = key;
    if (admission === "dispatch") this.total++;
    else this.queued++;
    return admission;
  }

  /** `r` leaves the gate: a queued one is unlinked (O(1)), a dispatched one frees its slot. No-op if outside. */
  leave(r: GatedRequest): void {
    const key = r.gateKey;
    if (key === undefined) return;
    r.gateKey = undefined;
    if (r.listTag !== 0) {
      key.unlinkNode(r);
      if (--this.queued === 0) this.cancelDrain();
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
    this.cancelDrain();
    if (this.draining || this.owner.destroying) return;
    this.draining = true;
    try {
      const first = this.lastFreed;
      if (first !== undefined) first.drain();
      if (this.queued === 0) return;
      for (const other of this.keys.values()) {
        if (other.nodeCount !== 0 && other !== first) other.drain();
        if (this.queued === 0) break;
      }
    } finally {
      this.draining = false;
    }
  }

  /** The queue emptied: no batched drain is needed any more. */
  cancelDrain(): void {
    if (this.drainImmediate === undefined) return;
    timing.clearImmediate(this.drainImmediate);
    this.drainImmediate = undefined;
  }

  /** Drops `key` when nothing is dispatched or queued under it, unless it is the memoised key. O(1). */
  private dropIfIdle(key: GateKey): void {
    if (key.inUse + key.nodeCount === 0 && key !== this.memoKey) this.keys.delete(key.name);
  }
}
