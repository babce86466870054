/**
 * AdmissionQueue: every transport's request queue — an intrusive FIFO of the requests themselves and the count of
 * admitted ones in front of a capacity.
 *
 *   firstNode ─► [req] ⇄ [req] ⇄ [req] ◄─ lastNode   (`listPrev` / `listNext` / `listTag` are the requests' fields)
 *
 * Costs: admit, link and unlink are O(1) and allocate nothing per request; a node is on at most one list, which its
 * `listTag` names. `drain()` does not recurse: a slot freed by a dispatch goes to the running loop. Transports differ
 * by `limit` and two hooks (HTTP/1: the agent-wide `maxTotalSockets` in `hasRoom()`, its totals in `dispatch()`);
 * HTTP/2, whose capacity is a session slot, not a count, uses the FIFO alone.
 * @internal
 */

/** The link fields a request carries to be queued (a node is on at most one list). @internal */
export interface QueueNode {
  /** The `tag` of the list the node is on; 0: on none. */
  listTag: number;
  listPrev: QueueNode | undefined;
  listNext: QueueNode | undefined;
}

/** A node `drain()` can hand its slot to. @internal */
export interface GatedNode extends QueueNode {
  /** Starts the request (already counted in `inUse`). Never throws. */
  dispatchFromGate(): void;
}

/** What `admit()` did with a request: dispatch it now, queued it, or refused it (the queue is full). @internal */
export type Admission = "dispatch" | "queued" | "full";

/** @internal */
export class AdmissionQueue<N extends QueueNode = QueueNode> {
  /** The oldest queued node. */
  firstNode: N | undefined = undefined;
  lastNode: N | undefined = undefined;
  nodeCount = 0;
  /** Requests admitted (or drained) and not yet released by their owner: `inUse--` when one frees its slot. */
  inUse = 0;
  private draining = false;

  /** `tag`: non-zero, distinct for lists a node moves between; `limit`: slots (`Infinity`: unlimited). */
  constructor(
    readonly tag = 1,
    public limit = Number.POSITIVE_INFINITY
  ) {}

  /** Whether `n` is on a list of this tag (on this one, where a node's owner knows its list). */
  has(n: QueueNode): boolean {
    return n.listTag === this.tag;
  }

  /** Appends `n` (not on any list). O(1). */
  linkTail(n: N): void {
    n.listTag = this.tag;
    n.listPrev = this.lastNode;
    n.listNext = undefined;
    if (this.lastNode === undefined) this.firstNode = n;
    else this.lastNode.listNext = n;
    this.lastNode = n;
    this.nodeCount++;
  }

  /** Puts `n` (not on any list) first: it is dispatched next. O(1). */
  linkHead(n: N): void {
    n.listTag = this.tag;
    n.listPrev = undefined;
    n.listNext = this.firstNode;
    if (this.firstNode === undefined) this.lastNode = n;
    else this.firstNode.listPrev = n;
    this.firstNode = n;
    this.nodeCount++;
  }

  /** Unlinks `n`; no-op unless it is on a list of this tag. O(1). */
  unlinkNode(n: N): void {
    if (n.listTag !== this.tag) return;
    const prev = n.listPrev as N | undefined;
    const next = n.listNext as N | undefined;
    if (prev === undefined) this.firstNode = next;
    else prev.listNext = next;
    if (next === undefined) this.lastNode = prev;
    else next.listPrev = prev;
    n.listPrev = n.listNext = undefined;
    n.listTag = 0;
    this.nodeCount--;
  }

  /** `"dispatch"` (counted in `inUse`: the caller starts `n`), `"queued"` (at the tail) or `"full"` (not queued). */
  admit(n: N, maxQueued: number): Admission {
    if (this.nodeCount === 0 && this.hasRoom()) {
      this.inUse++;
      return "dispatch";
    }
    if (this.nodeCount >= maxQueued) return "full";
    this.linkTail(n);
    return "queued";
  }

  /** Dispatches queued nodes, oldest first, while `hasRoom()`. */
  drain(this: AdmissionQueue<N & GatedNode>): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let n = this.firstNode; n !== undefined && this.hasRoom(); n = this.firstNode) {
        this.unlinkNode(n);
        this.inUse++;
        this.dispatch(n);
      }
    } finally {
      this.draining = false;
    }
  }

  /** Whether one more request may start now. Hook: the default is `inUse < limit`. */
  protected hasRoom(): boolean {
    return this.inUse < this.limit;
  }

  /** Starts a drained node (counted in `inUse` already). Hook: the default is its `dispatchFromGate()`. */
  protected dispatch(n: N & GatedNode): void {
    n.dispatchFromGate();
  }
}
