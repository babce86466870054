/**
 * OriginGate: the handler-side queue in front of one origin's pool of the handler-owned undici `Agent`, and
 * OriginGates, the handler's gates by exact origin.
 *
 * Why: undici drops an aborted queued request only when its turn comes. With the gate, a request beyond the
 * origin's limit never reaches undici: rejecting it is an O(1) unlink that never touches a connection.
 *
 *   handle() ─► fifoQueue.admit() ─dispatch─► to undici (inUse++, awaitingConn++) ─► onRequestStart (awaitingConn--)
 *   end / error / failure before a connection ─► inUse-- ─► fifoQueue.drain()
 *
 * `fifoQueue` (an `AdmissionQueue`) is the telemetry entry's `waitList`, or a list of its own registered with
 * `_OTHER`. The gate adds what is undici's own: the pool shortcut and the connection attempts nobody waits for.
 *
 * `OriginGates` keeps a gate only while it holds something, or while it is pinned (the gate of the handler's
 * one-entry origin cache, handed out without a lookup): a client of many hosts keeps O(busy origins) gates, one
 * endpoint keeps its gate allocation-free. A gate left idle tells its registry, which drops it in O(1).
 */
import { AdmissionQueue, type GatedNode } from "@sockeye/pool-monitor/internal";
import type { Pool } from "undici";
import type { ConnectingSockets } from "./connecting-sockets";
import type { DispatcherLike } from "./dispatcher-like";
import type { OriginPoolState, PoolRequestNode, RequestList } from "./origin-pool-state";

/** A request the gate can hold and later dispatch (`dispatchFromGate()` hands it to undici). @internal */
export type GatedRequest = PoolRequestNode & GatedNode;

/** List tag of a gate-owned queue (see `PoolRequestNode.listTag`). */
const GATE_LIST_TAG = 3;

/** @internal */
export class OriginGate {
  /** Of the requests in `fifoQueue.inUse`, those that have no connection yet (undici connects one or will give one). */
  awaitingConn = 0;
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
   * @param connectingSet - the handler's connecting sockets (to end an attempt nobody waits for).
   * @param fifoQueue - its `inUse`: requests handed to undici and not finished with their connection.
   */
  constructor(
    readonly gateOrigin: string,
    limit: number | null,
    readonly connectingSet: ConnectingSockets,
    readonly fifoQueue: RequestList = new AdmissionQueue(GATE_LIST_TAG)
  ) {
    this.setLimit(limit);
  }

  /** Connections per origin from now on (`null`: unlimited; 0: the gate dispatches nothing any more). */
  setLimit(limit: number | null): void {
    this.fifoQueue.limit = limit ?? Number.POSITIVE_INFINITY;
  }

  /** `maxSockets=<limit>, <n> queued`, for error messages. */
  describe(): string {
    const { limit, nodeCount } = this.fifoQueue;
    return `maxSockets=${limit === Number.POSITIVE_INFINITY ? "unlimited" : limit}, ${nodeCount} queued`;
  }

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

  needsConnection(): boolean {
    return this.awaitingConn > 0 || this.fifoQueue.nodeCount > 0;
  }

  unlinkWaiter(n: GatedRequest): void {
    this.fifoQueue.unlinkNode(n);
    this.gateRegistry?.gateIdle(this);
  }

  /** A request finished with its slot: dispatch queued requests while slots are free. */
  freeSlot(): void {
    const queue = this.fifoQueue;
    if (queue.inUse > 0) queue.inUse--;
    this.drainQueue();
    this.gateRegistry?.gateIdle(this);
  }

  /** Nothing in use (awaiting a connection included: `awaitingConn <= inUse`) and nothing queued. */
  get gateUnused(): boolean {
    return this.fifoQueue.inUse === 0 && this.fifoQueue.nodeCount === 0;
  }

  /** Dispatches queued requests, oldest first, while the limit allows (the queue holds only `GatedRequest`s). */
  drainQueue(): void {
    (this.fifoQueue as AdmissionQueue<GatedRequest>).drain();
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
