/**
 * Http2Origin: the sessions of one origin, the streams waiting for capacity and those holding a slot.
 *
 *   sessions: [s1 ready 100/100] [s2 ready 37/100] [s3 connecting]      (array, at most maxSessionsPerOrigin)
 *   pooled:   head ─► [req] ⇄ [req] ⇄ [req] ◄─ tail                   (pooled streams waiting for a stream slot)
 *   isolated: head ─► [req] ⇄ [req] ◄─ tail                           (`disableConcurrentStreams` requests waiting
 *                                                                     for one of maxIsolatedSessionsPerOrigin)
 *   holders:  head ─► [req] ⇄ [req] ◄─ tail                           (streams holding a slot, oldest first)
 *
 * The lists are `AdmissionQueue`s used as FIFOs (a stream's capacity is a session slot, not a count), tagged 1–3.
 * Finding a free slot is O(maxSessionsPerOrigin). Generic over the session and request types (no import cycle).
 */
import { AdmissionQueue, type QueueNode } from "@sockeye/pool-monitor/internal";
import type { Http2OriginTelemetry } from "./http2-pool-monitor";

/** The links and facts of a request that the origin's lists use (fields of `Http2StreamRequest`). @internal */
export interface Http2Waiter<W extends QueueNode> extends QueueNode {
  readonly isolated: boolean;
  readonly begunAt: number;
  /** Counted as queued (not only waiting for a connecting session). */
  wasQueued: boolean;
  listNext: W | undefined;
  listPrev: W | undefined;
  slotAt: number;
  /** It waits behind others: counted queued. */
  countQueued(): void;
}

/** @internal */
export class Http2Origin<S extends { readonly available: boolean }, W extends Http2Waiter<W>> {
  /** Pooled sessions that are connecting or ready (a session leaves on GOAWAY, error or close). */
  readonly sessions: S[] = [];
  /** Every open session, isolated and closing ones included. */
  readonly open = new Set<S>();
  /** Pooled sessions still connecting, and under a silence check (streams wait for either). */
  connecting = 0;
  checking = 0;
  readonly pooled = new AdmissionQueue<W>(1);
  /** Pooled streams waiting only for a connecting session: not queued (as in node:http) until none is. */
  deferred = 0;
  readonly isolated = new AdmissionQueue<W>(2);
  /** Isolated sessions counted against `maxIsolatedSessionsPerOrigin` (event streams excluded). */
  isolatedOpen = 0;
  /** The stream limit of the last established session (a guess for those still connecting). */
  streamLimitHint: number | undefined = undefined;
  readonly holders = new AdmissionQueue<W>(3);
  /** Streams started and not finished: with `open`, what keeps the origin in the pool. */
  streamsInFlight = 0;

  /**
   * @param key - the URL given to `http2.connect()` (may carry user info, as upstream's pool key).
   * @param counters - the origin's telemetry entry (its own or `_OTHER`'s); `undefined` while telemetry is off.
   */
  constructor(
    readonly key: string,
    readonly name: string,
    public counters: Http2OriginTelemetry | undefined
  ) {}

  /** Every request waiting beyond the origin's capacity, pooled and isolated (what telemetry reports as `queued`). */
  get waiting(): number {
    return this.pooled.nodeCount - this.deferred + this.isolated.nodeCount;
  }

  /** The request that has waited longest beyond capacity, on either list. */
  get oldestWaiting(): W | undefined {
    let a = this.pooled.firstNode;
    while (a !== undefined && !a.wasQueued) a = a.listNext;
    const b = this.isolated.firstNode;
    if (a === undefined || b === undefined) return a ?? b;
    return a.begunAt <= b.begunAt ? a : b;
  }

  /** Appends `req` to its list, or to the head of the pooled one when `again` (a refused stream placed again). */
  enqueue(req: W, deferred: boolean, again = false): void {
    req.wasQueued = !deferred;
    if (deferred) this.deferred++;
    if (again) this.pooled.linkHead(req);
    else (req.isolated ? this.isolated : this.pooled).linkTail(req);
  }

  /** Takes `req` off its waiting list; false when it is on none. */
  remove(req: W): boolean {
    const list = req.isolated ? this.isolated : this.pooled;
    if (!list.has(req)) return false;
    if (!req.wasQueued) this.deferred--;
    list.unlinkNode(req);
    this.counters?.queueShrank(this.waiting);
    return true;
  }

  /** The head of the pooled or isolated list. */
  dequeue(isolated: boolean): W | undefined {
    const req = (isolated ? this.isolated : this.pooled).firstNode;
    if (req !== undefined) this.remove(req);
    return req;
  }

  /** No pooled session is connecting any more: the deferred requests count as queued now. */
  countDeferred(): void {
    if (this.deferred === 0 || this.connecting > 0 || this.checking > 0) return;
    for (let req = this.pooled.firstNode; req !== undefined && this.deferred > 0; req = req.listNext) {
      if (req.wasQueued) continue;
      req.wasQueued = true;
      this.deferred--;
      req.countQueued();
    }
  }

  /** A pooled session with a free stream slot (first fit, so load concentrates and spare sessions can idle). */
  available(): S | undefined {
    for (const entry of this.sessions) if (entry.available) return entry;
    return undefined;
  }
}
