/**
 * OriginGate: the handler-side FIFO in front of one origin's pool of the handler-owned undici `Agent`.
 *
 * Why: undici drops an aborted queued request only when its turn comes. With the gate, a request beyond the
 * origin's limit never reaches undici: rejecting it is an O(1) unlink that never touches a connection, and undici
 * sees at most `limit` requests of the origin.
 *
 *   handle() ─► inUse < limit ? ─yes─► dispatched to undici (inUse++, awaitingConn++) ─► onRequestStart (awaitingConn--)
 *                     └─no──► queue (intrusive FIFO: the request object is the node; head = oldest)
 *   end / error / failure before a connection ─► inUse-- ─► head of the queue dispatched
 *
 * The queue is the telemetry entry's `waitList` when the origin has an entry of its own, else a list of its own
 * (registered with `_OTHER`). Cost per request: two counter updates, plus an O(1) push/unlink when it waits. A gate
 * left idle tells its registry (`OriginGates`).
 */
import type { ConnectingSockets } from "./connecting-sockets";
import type { DispatcherLike } from "./dispatcher-like";
import { type OriginPoolState, type PoolRequestNode, RequestList } from "./origin-pool-state";

/** A request the gate can hold and later dispatch. @internal */
export interface GatedRequest extends PoolRequestNode {
  /** Hands the request to undici (the gate already counted it in `inUse`). */
  dispatchFromGate(): void;
}

/** List tag of a gate-owned queue (1 = telemetry `waitList`, 2 = paused bodies). */
const GATE_LIST_TAG = 3;

/** Where a gate left with nothing in use or queued reports (`OriginGates`). @internal */
export interface OriginGateRegistry {
  gateIdle(gate: OriginGate): void;
}

/** @internal */
export class OriginGate {
  /** Requests handed to undici and not finished with their connection (response ended, failed or abandoned). */
  inUse = 0;
  /** Of those, requests that have no connection yet (undici is connecting one for them or will give them one). */
  awaitingConn = 0;
  /** Set by `UndiciHttpHandler.destroy()`: nothing is dispatched any more. */
  gateClosed = false;
  /** `drainQueue()` is running (see there). */
  private draining = false;
  /** Where queued requests go when their turn comes: the handler's current dispatcher (updated on a rebuild). */
  dispatchTo: DispatcherLike | undefined;
  /** The registry holding the gate (told when it goes idle); `undefined` once dropped, or for a gate of its own. */
  gateRegistry: OriginGateRegistry | undefined = undefined;
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

  /**
   * A request that had no connection yet gave up its slot: when no other request of the origin waits for a
   * connection (none queued here, none dispatched without one), end the origin's connection attempts now.
   */
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

  /** Queues `n` behind the others (O(1)). */
  enqueueWaiter(n: GatedRequest): void {
    this.fifoQueue.linkTail(n);
  }

  /** Removes a queued `n` (O(1)); no-op when it is not queued here. */
  unlinkWaiter(n: GatedRequest): void {
    this.fifoQueue.unlinkNode(n);
    if (this.gateUnused) this.gateRegistry?.gateIdle(this);
  }

  /** A request finished with its slot: dispatch queued requests while slots are free. */
  freeSlot(): void {
    if (this.inUse > 0) this.inUse--;
    this.drainQueue();
    if (this.gateUnused) this.gateRegistry?.gateIdle(this);
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
