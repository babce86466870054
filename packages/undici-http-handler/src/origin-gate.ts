/**
 * OriginGate: the handler-side FIFO in front of one origin's pool of the handler-owned undici `Agent`, and
 * OriginGates, the handler's gates by exact origin.
 *
 * Why: undici drops an aborted queued request only when its turn comes. With the gate, a request beyond the
 * origin's limit never reaches undici: rejecting it is an O(1) unlink that never touches a connection.
 *
 *   handle() ─► inUse < limit ? ─yes─► dispatched to undici (inUse++, awaitingConn++) ─► onRequestStart (awaitingConn--)
 *                     └─no──► queue (intrusive FIFO: the request object is the node; head = oldest)
 *   end / error / failure before a connection ─► inUse-- ─► head of the queue dispatched
 *
 * The queue is the telemetry entry's `waitList` when the origin has an entry of its own, else a list of its own
 * (registered with `_OTHER`). Cost per request: two counter updates, plus an O(1) push/unlink when it waits.
 *
 * `OriginGates` keeps a gate only while it holds something, or while it is pinned (the gate of the handler's
 * one-entry origin cache, handed out without a lookup): a client of many hosts keeps O(busy origins) gates, one
 * endpoint keeps its gate allocation-free. A gate left idle tells its registry, which drops it in O(1).
 */
import type { Pool } from "undici";
import type { ConnectingSockets } from "./connecting-sockets";
import type { DispatcherLike } from "./dispatcher-like";
import { type OriginPoolState, type PoolRequestNode, RequestList } from "./origin-pool-state";

/** A request the gate can hold and later dispatch. @internal */
export interface GatedRequest extends PoolRequestNode {
  /** Hands the request to undici (the gate already counted it in `inUse`). */
  dispatchFromGate(): void;
}

/** List tag of a gate-owned queue (see `PoolRequestNode.listTag`). */
const GATE_LIST_TAG = 3;

/** @internal */
export class OriginGate {
  /** Requests handed to undici and not finished with their connection (response ended, failed or abandoned). */
  inUse = 0;
  /** Of those, requests that have no connection yet (undici is connecting one for them or will give them one). */
  awaitingConn = 0;
  /** Set by `UndiciHttpHandler.destroy()`: nothing is dispatched any more. */
  gateClosed = false;
  private draining = false;
  /** Where queued requests go when their turn comes: the handler's current dispatcher. */
  dispatchTo: DispatcherLike | undefined;
  /**
   * The origin's `Pool` in `dispatchTo` (set by the handler's pool factory): requests go to it directly, a hop and
   * a lookup fewer than through the `Agent`, while it is open. The `Agent` closes a pool whose connections all
   * closed; the next request then goes through the `Agent`, which creates a new one.
   */
  originPool: Pool | undefined = undefined;
  /** The registry holding the gate; `undefined` once dropped, or for a gate of its own. */
  gateRegistry: OriginGates | undefined = undefined;
  /** The `_OTHER` entry whose `gateQueues` lists `fifoQueue` (an origin without a telemetry entry of its own). */
  queueEntry: OriginPoolState | undefined = undefined;

  /**
   * @param gateOrigin - `scheme://host:port`.
   * @param gateLimit - connections per origin (`maxSockets`); `null` = unlimited (nothing ever waits here).
   * @param connectingSet - the handler's connecting sockets (to end an attempt nobody waits for).
   * @param fifoQueue - the FIFO: the telemetry entry's `waitList`, or a list of its own.
   */
  constructor(
    readonly gateOrigin: string,
    public gateLimit: number | null,
    readonly connectingSet: ConnectingSockets,
    readonly fifoQueue: RequestList = new RequestList(GATE_LIST_TAG)
  ) {}

  /** Where a request of the origin goes now: its open pool, else `dispatchTo`. */
  dispatchTarget(): DispatcherLike | undefined {
    const pool = this.originPool;
    if (pool !== undefined && !pool.closed && !pool.destroyed) return pool;
    this.originPool = undefined;
    return this.dispatchTo;
  }

  /** A request without a connection gave up its slot: when nobody else waits for one, end the origin's attempts. */
  abandonIfUnneeded(): void {
    if (!this.needsConnection()) this.connectingSet.abandon(this.gateOrigin);
  }

  /** Whether a request of the origin waits for a connection: dispatched without one yet, or queued here. */
  needsConnection(): boolean {
    return this.awaitingConn > 0 || this.fifoQueue.nodeCount > 0;
  }

  /** True (and counted in `inUse`) when the request may go to undici now; false: the caller queues it. */
  admit(): boolean {
    const limit = this.gateLimit;
    if (limit !== null && (this.inUse >= limit || this.fifoQueue.nodeCount > 0)) return false;
    this.inUse++;
    return true;
  }

  enqueueWaiter(n: GatedRequest): void {
    this.fifoQueue.linkTail(n);
  }

  /** Removes a queued `n` (O(1)); no-op when it is not queued. */
  unlinkWaiter(n: GatedRequest): void {
    this.fifoQueue.unlinkNode(n);
    this.gateRegistry?.gateIdle(this);
  }

  /** A request finished with its slot: dispatch queued requests while slots are free. */
  freeSlot(): void {
    if (this.inUse > 0) this.inUse--;
    this.drainQueue();
    this.gateRegistry?.gateIdle(this);
  }

  /** Nothing in use (awaiting a connection included: `awaitingConn <= inUse`) and nothing queued. */
  get gateUnused(): boolean {
    return this.inUse === 0 && this.fifoQueue.nodeCount === 0;
  }

  /** Dispatches queued requests, oldest first, while the limit allows. Not re-entrant: no recursion per request. */
  drainQueue(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      while (!this.gateClosed) {
        const head = this.fifoQueue.firstNode as GatedRequest | undefined;
        const limit = this.gateLimit;
        if (head === undefined || (limit !== null && this.inUse >= limit)) return;
        this.fifoQueue.unlinkNode(head);
        this.inUse++;
        head.dispatchFromGate();
      }
    } finally {
      this.draining = false;
    }
  }
}

/** The handler's `OriginGate`s that hold something, plus the pinned one (see the header). @internal */
export class OriginGates {
  readonly byOrigin = new Map<string, OriginGate>();
  private pinned: OriginGate | undefined = undefined;

  constructor(private readonly connecting: ConnectingSockets) {}

  /** The gate of `origin` (created if it has none), pinned; the gate pinned before is dropped if idle. */
  pinGate(
    origin: string,
    limit: number | null,
    o: OriginPoolState | undefined,
    dispatchTo: DispatcherLike | undefined
  ): OriginGate {
    let gate = this.byOrigin.get(origin);
    if (gate === undefined) {
      if (o !== undefined && o.origin === origin) {
        gate = new OriginGate(origin, limit, this.connecting, o.waitList);
      } else {
        gate = new OriginGate(origin, limit, this.connecting);
        if (o !== undefined) {
          o.gateQueues.set(origin, gate.fifoQueue);
          gate.queueEntry = o;
        }
      }
      if (o !== undefined) o.gatedHere = true;
      gate.dispatchTo = dispatchTo;
      gate.gateRegistry = this;
      this.byOrigin.set(origin, gate);
    }
    const previous = this.pinned;
    this.pinned = gate;
    if (previous !== undefined && previous !== gate) this.gateIdle(previous);
    return gate;
  }

  /** The origin cache was reset: the gate pinned before is dropped if idle. */
  unpin(): void {
    const previous = this.pinned;
    this.pinned = undefined;
    if (previous !== undefined) this.gateIdle(previous);
  }

  /** Drops `gate` if it has nothing in use or queued and is not pinned. O(1). */
  gateIdle(gate: OriginGate): void {
    if (gate === this.pinned || !gate.gateUnused) return;
    this.drop(gate);
  }

  /** Drops every gate (and its `gateQueues` entry). */
  clear(): void {
    for (const gate of this.byOrigin.values()) this.drop(gate);
    this.byOrigin.clear();
    this.pinned = undefined;
  }

  private drop(gate: OriginGate): void {
    if (gate.gateRegistry !== this) return;
    gate.gateRegistry = undefined;
    const origin = gate.gateOrigin;
    if (this.byOrigin.get(origin) === gate) this.byOrigin.delete(origin);
    const entry = gate.queueEntry;
    if (entry !== undefined) {
      gate.queueEntry = undefined;
      if (entry.gateQueues.get(origin) === gate.fifoQueue) entry.gateQueues.delete(origin);
    }
  }
}
