/**
 * Http2Origin: the pooled sessions of one origin and the two FIFOs of streams waiting for capacity.
 *
 *   sessions: [s1 ready 100/100] [s2 ready 37/100] [s3 connecting]      (array, at most maxSessionsPerOrigin)
 *   waiting:  head ─► [req] ⇄ [req] ⇄ [req] ◄─ tail                   (pooled streams waiting for a stream slot)
 *   isolated: head ─► [req] ⇄ [req] ◄─ tail                           (`disableConcurrentStreams` requests waiting
 *                                                                     for one of maxIsolatedSessionsPerOrigin)
 *
 * Both lists are intrusive (links are fields of the requests); a request is on at most one, per its `isolated` flag.
 * Event streams are long-lived, so never queued and not counted in `isolatedOpen`.
 *
 * Costs: enqueue/enqueueFirst/dequeue/remove O(1) with no allocation (a request that ends while waiting unlinks itself); finding a
 * session with a free slot is O(sessions), i.e. O(maxSessionsPerOrigin) (4 by default).
 *
 * Lifetime: the pool forgets an origin once it has no open session and no stream in flight; its counters live in
 * the telemetry entry. Generic over the session and request types, so this file imports neither.
 */
import type { Http2OriginTelemetry } from "./http2-pool-monitor";

/** The links and facts of a request that the origin's lists use (fields of `Http2StreamRequest`). @internal */
export interface Http2Waiter<W> {
  /** On the isolated list rather than the pooled one. */
  readonly isolated: boolean;
  /** `timing.now()` ms at `handle()`. */
  readonly begunAt: number;
  /** On a waiting list now / ever. */
  queued: boolean;
  wasQueued: boolean;
  waitNext: W | undefined;
  waitPrev: W | undefined;
  /** Links of the slot-holder list, and when the slot was taken (`timing.now()` ms). */
  activeNext: W | undefined;
  activePrev: W | undefined;
  slotAt: number;
}

/** @internal */
export class Http2Origin<S extends { readonly available: boolean }, W extends Http2Waiter<W>> {
  /** Pooled sessions that are connecting or ready (a session leaves on GOAWAY, error or close). */
  readonly sessions: S[] = [];
  /** Every open session of the origin, isolated and closing ones included (for stats and `destroy()`). */
  readonly open = new Set<S>();
  /** Pooled sessions still connecting. */
  connecting = 0;
  /** Pooled sessions under a silence check: no new stream until its verdict; streams wait as for a connecting one. */
  checking = 0;
  waitHead: W | undefined = undefined;
  waitTail: W | undefined = undefined;
  /** Pooled streams waiting for a stream slot. */
  queued = 0;
  /**
   * Of those, the ones waiting only for a connecting session: not counted as queued (as node:http does not count a
   * request assigned a connecting socket) until no session is connecting (`countDeferred()`).
   */
  deferred = 0;
  isolatedHead: W | undefined = undefined;
  isolatedTail: W | undefined = undefined;
  /** Isolated (non-event-stream) requests waiting for a session of their own. */
  isolatedQueued = 0;
  /** Isolated sessions counted against `maxIsolatedSessionsPerOrigin` (event streams excluded), until they close. */
  isolatedOpen = 0;
  /** The stream limit of the origin's last established session (a guess for sessions still connecting). */
  streamLimitHint: number | undefined = undefined;
  /** Requests holding a stream slot, oldest first (saturation: age of the oldest holder). */
  activeHead: W | undefined = undefined;
  activeTail: W | undefined = undefined;
  /** Streams started and not finished (waiting ones included): with `open`, what keeps the origin in the pool. */
  streamsInFlight = 0;
  /** Its index in its telemetry entry's `members` (-1: not a member). */
  memberIndex = -1;

  /**
   * @param key - the URL given to `http2.connect()` (may carry user info, as upstream's pool key).
   * @param name - `scheme://host:port`, the only form that reaches telemetry.
   */
  constructor(
    readonly key: string,
    readonly name: string,
    /** The origin's telemetry entry (its own or `_OTHER`'s); `undefined` while telemetry is off. */
    public counters: Http2OriginTelemetry | undefined
  ) {}

  /** Every request waiting beyond the origin's capacity, pooled and isolated (what telemetry reports as `queued`). */
  get waiting(): number {
    return this.queued - this.deferred + this.isolatedQueued;
  }

  /** The request that has waited longest beyond capacity, on either list. */
  get oldestWaiting(): W | undefined {
    let a = this.waitHead;
    while (a !== undefined && !a.wasQueued) a = a.waitNext;
    const b = this.isolatedHead;
    if (a === undefined) return b;
    if (b === undefined) return a;
    return a.begunAt <= b.begunAt ? a : b;
  }

  /**
   * Appends `req` to its list (the isolated one when `req.isolated`). `deferred`: it waits only for a connecting
   * session (see `deferred`).
   */
  enqueue(req: W, deferred = false): void {
    req.queued = true;
    req.wasQueued = !deferred;
    if (deferred) this.deferred++;
    req.waitNext = undefined;
    if (req.isolated) {
      req.waitPrev = this.isolatedTail;
      if (this.isolatedTail) this.isolatedTail.waitNext = req;
      else this.isolatedHead = req;
      this.isolatedTail = req;
      this.isolatedQueued++;
      return;
    }
    req.waitPrev = this.waitTail;
    if (this.waitTail) this.waitTail.waitNext = req;
    else this.waitHead = req;
    this.waitTail = req;
    this.queued++;
  }

  /**
   * Puts pooled `req` back at the head of the pooled list: it waited its turn already (a stream the peer refused,
   * placed again). `deferred` as for `enqueue()`.
   */
  enqueueFirst(req: W, deferred: boolean): void {
    req.queued = true;
    req.wasQueued = !deferred;
    if (deferred) this.deferred++;
    req.waitPrev = undefined;
    req.waitNext = this.waitHead;
    if (this.waitHead) this.waitHead.waitPrev = req;
    else this.waitTail = req;
    this.waitHead = req;
    this.queued++;
  }

  remove(req: W): void {
    if (!req.queued) return;
    req.queued = false;
    if (!req.wasQueued && !req.isolated) this.deferred--;
    if (req.isolated) {
      if (req.waitPrev) req.waitPrev.waitNext = req.waitNext;
      else this.isolatedHead = req.waitNext;
      if (req.waitNext) req.waitNext.waitPrev = req.waitPrev;
      else this.isolatedTail = req.waitPrev;
      this.isolatedQueued--;
    } else {
      if (req.waitPrev) req.waitPrev.waitNext = req.waitNext;
      else this.waitHead = req.waitNext;
      if (req.waitNext) req.waitNext.waitPrev = req.waitPrev;
      else this.waitTail = req.waitPrev;
      this.queued--;
    }
    req.waitNext = req.waitPrev = undefined;
    this.counters?.queueShrank(this.waiting);
  }

  /** No pooled session is connecting any more: the deferred requests count as queued now. O(deferred). */
  countDeferred(counted: (req: W) => void): void {
    if (this.deferred === 0 || this.connecting > 0 || this.checking > 0) return;
    for (let req = this.waitHead; req !== undefined && this.deferred > 0; req = req.waitNext) {
      if (req.wasQueued) continue;
      req.wasQueued = true;
      this.deferred--;
      counted(req);
    }
  }

  /** The head of the pooled list. */
  dequeue(): W | undefined {
    const req = this.waitHead;
    if (req !== undefined) this.remove(req);
    return req;
  }

  /** The head of the isolated list. */
  dequeueIsolated(): W | undefined {
    const req = this.isolatedHead;
    if (req !== undefined) this.remove(req);
    return req;
  }

  /** `req` got a stream slot at `now`. O(1). */
  holdStart(req: W, now: number): void {
    req.slotAt = now;
    req.activeNext = undefined;
    req.activePrev = this.activeTail;
    if (this.activeTail) this.activeTail.activeNext = req;
    else this.activeHead = req;
    this.activeTail = req;
  }

  /** `req` released its slot. O(1). */
  holdEnd(req: W): void {
    if (req.activePrev) req.activePrev.activeNext = req.activeNext;
    else if (this.activeHead === req) this.activeHead = req.activeNext;
    else return;
    if (req.activeNext) req.activeNext.activePrev = req.activePrev;
    else this.activeTail = req.activePrev;
    req.activeNext = req.activePrev = undefined;
  }

  /** A pooled session with a free stream slot (first fit, so load concentrates and spare sessions can idle). */
  available(): S | undefined {
    for (const entry of this.sessions) if (entry.available) return entry;
    return undefined;
  }
}
