/**
 * AgentGate: the handler-side queue in front of one `http.Agent` (issue 25).
 *
 * Node's agent queues a request it has no socket for as a full `ClientRequest` in `agent.requests[name]` (several KB
 * each, its body already piped into it), and taking one out again on abort or timeout is an O(queue) splice. The
 * gate keeps the handler's requests out of that queue: per agent key (`agent.getName()`: host, port and the TLS
 * options that select a pool) it counts the handler's requests dispatched to the agent and not finished (`inUse`),
 * and a request is dispatched (its `ClientRequest` created) only while `inUse < agent.maxSockets` and the handler's
 * total over the agent's keys is below `agent.maxTotalSockets`. Otherwise it waits here, in FIFO order, as a node of
 * an intrusive doubly linked list: the request's own state object (`GatedRequest`) is the node, so waiting allocates
 * nothing, and leaving (abort, a deadline, `destroy()`) is an O(1) unlink. A dispatched request that finishes
 * releases its slot and dispatches the head of its key's queue (or, when the agent's total limit held others back,
 * of another key's).
 *
 *   admit(): inUse < maxSockets && total < maxTotalSockets && nobody queued ─yes─► dispatched (inUse++, total++)
 *                                     └─no──► enqueue (tail)
 *   leave(): queued ─► O(1) unlink;  dispatched ─► inUse--, total-- ─► drain (heads first)
 *
 * Node emits a keep-alive request's `'close'` (when the handler's request finishes) right *before* its socket's
 * `'free'`, in the same tick: the request dispatched in that `'close'` waits in `agent.requests` for the length of
 * that tick, and `'free'` hands it the socket directly (no extra connection). That is on purpose: dispatching after
 * `'free'` instead (from a microtask) made Node park the socket in `freeSockets` and take it out again for every
 * request (`setKeepAlive`, `unref`/`ref`, the pool's key churn): in the 10,000-request drain of
 * docs/perf/handler-queue.md that variant took 25–40 % more client CPU than the handler before the gate, this one
 * 10–20 % (a noisy VM; instructions per request: 4 % fewer than before). Limits are read
 * from the agent at each decision, so a caller changing `maxSockets` is honoured. An agent shared with other code
 * may still queue a dispatched request in `agent.requests` (its sockets are busy with the others'); the request
 * handles that as before (`agent-queue.ts`). Cost per request: one memoised key lookup (`keyFor`), two counter
 * updates, plus an O(1) link and unlink when it has to wait. Per key: one `GateKey` (a few fields), kept while
 * the agent lives (the gate is held in a `WeakMap` by agent).
 */
import type { Agent } from "node:http";
import { isIP } from "node:net";

/** A request the gate can hold and later dispatch: its own state object, with the gate's link fields. @internal */
export interface GatedRequest {
  /** Neighbours while queued (older / younger). */
  gatePrev: GatedRequest | undefined;
  gateNext: GatedRequest | undefined;
  /** The key it is counted under (dispatched) or queued on; `undefined` outside the gate. */
  gateKey: GateKey | undefined;
  /** Queued (true) or dispatched (false) while `gateKey` is set. */
  gateQueued: boolean;
  /** Creates the Node request (the gate has counted it in `inUse` already). Never throws. */
  dispatchFromGate(): void;
}

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
  // One-entry memo of the last (host, port) → key: one endpoint per client is the common case.
  private memoHost: string | undefined = undefined;
  private memoPort: number | undefined = undefined;
  private memoKey: GateKey | undefined = undefined;

  constructor(
    readonly agent: Agent,
    private readonly owner: GateOwner
  ) {}

  /**
   * The key of a request to `host`:`port` (`host` as given to `http.request`, IPv6 without brackets): the agent's own
   * name for it, computed as Node's agent does (request options merged under the agent's own, `servername` from the
   * host unless the agent sets one), once per new (host, port).
   */
  keyFor(host: string, port: number | undefined): GateKey {
    if (host === this.memoHost && port === this.memoPort && this.memoKey !== undefined) return this.memoKey;
    const agent = this.agent as Agent & { options?: Record<string, unknown> };
    const options: Record<string, unknown> = { host, port, ...agent.options };
    if (options.servername == null) options.servername = isIP(host) ? "" : host;
    const name = agent.getName(options as never);
    let key = this.keys.get(name);
    if (key === undefined) this.keys.set(name, (key = new GateKey(name)));
    this.memoHost = host;
    this.memoPort = port;
    this.memoKey = key;
    return key;
  }

  /** Requests queued under `name` (an agent key), for upstream's socket-usage check. */
  queuedUnder(name: string): number {
    return this.keys.get(name)?.size ?? 0;
  }

  /**
   * Counts `r` under `key` and returns true when it may be dispatched now; otherwise queues it (tail) and returns
   * false. O(1).
   */
  admit(r: GatedRequest, key: GateKey): boolean {
    r.gateKey = key;
    if (key.size === 0 && this.hasRoom(key)) {
      r.gateQueued = false;
      key.inUse++;
      this.total++;
      return true;
    }
    r.gateQueued = true;
    r.gateNext = undefined;
    r.gatePrev = key.tail;
    if (key.tail !== undefined) key.tail.gateNext = r;
    else key.head = r;
    key.tail = r;
    key.size++;
    this.queued++;
    return false;
  }

  /**
   * `r` leaves the gate (its single way out): a queued one is unlinked (O(1)); a dispatched one releases its slot
   * and the queue is drained. No-op for a request outside the gate.
   */
  leave(r: GatedRequest): void {
    const key = r.gateKey;
    if (key === undefined) return;
    r.gateKey = undefined;
    if (r.gateQueued) {
      r.gateQueued = false;
      this.unlink(key, r);
      return;
    }
    key.inUse--;
    this.total--;
    if (this.queued !== 0) this.drain(key);
  }

  private hasRoom(key: GateKey): boolean {
    const agent = this.agent;
    // A non-numeric maxTotalSockets (an agent built before Node had it) compares false: treated as unlimited.
    return key.inUse < agent.maxSockets && !(this.total >= agent.maxTotalSockets);
  }

  private unlink(key: GateKey, r: GatedRequest): void {
    const { gatePrev: prev, gateNext: next } = r;
    if (prev !== undefined) prev.gateNext = next;
    else key.head = next;
    if (next !== undefined) next.gatePrev = prev;
    else key.tail = prev;
    r.gatePrev = r.gateNext = undefined;
    key.size--;
    this.queued--;
  }

  /**
   * Dispatches queued requests, oldest first, while the limits allow: `key`'s (the one a slot just freed in) first,
   * then, only when the agent has a total limit that may have held other keys back, the other keys' (an iteration
   * of the key map, never on the common path). Not re-entrant: a dispatch that fails synchronously leaves the gate
   * inside this loop, which then simply continues (no recursion per queued request). Nothing is dispatched while the
   * owner is being destroyed.
   */
  private drain(key: GateKey): void {
    if (this.draining || this.owner.destroying) return;
    this.draining = true;
    try {
      this.drainKey(key);
      if (this.queued !== 0 && this.agent.maxTotalSockets !== Number.POSITIVE_INFINITY) {
        for (const other of this.keys.values()) {
          if (other.size !== 0 && other !== key) this.drainKey(other);
          if (this.queued === 0) break;
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private drainKey(key: GateKey): void {
    while (key.head !== undefined && this.hasRoom(key) && !this.owner.destroying) {
      const head = key.head;
      this.unlink(key, head);
      head.gateQueued = false;
      key.inUse++;
      this.total++;
      head.dispatchFromGate();
    }
  }
}
