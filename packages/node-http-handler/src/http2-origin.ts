/**
 * Http2Origin: the pooled sessions of one origin and the FIFO of streams waiting for a stream slot.
 *
 *   sessions: [s1 ready 100/100] [s2 ready 37/100] [s3 connecting]      (array, at most maxSessionsPerOrigin)
 *   waiting:  head ─► [req] ⇄ [req] ⇄ [req] ◄─ tail                   (intrusive list, links in the requests)
 *
 * Costs: enqueue/dequeue/remove O(1) with no allocation (an aborted or timed-out waiter unlinks itself); finding a
 * session with a free slot is O(sessions), i.e. O(maxSessionsPerOrigin) (4 by default).
 */
import type { Http2OriginCounters } from "./http2-origin-counters";
import type { Http2SessionEntry } from "./http2-session-entry";
import type { Http2StreamRequest } from "./http2-stream-request";

/** @internal */
export class Http2Origin {
  /** Pooled sessions that are connecting or ready (a session leaves on GOAWAY, error or close). */
  readonly sessions: Http2SessionEntry[] = [];
  /** Every open session of the origin, isolated and closing ones included (for stats and `destroy()`). */
  readonly open = new Set<Http2SessionEntry>();
  /** Pooled sessions still connecting. */
  connecting = 0;
  waitHead: Http2StreamRequest | undefined = undefined;
  waitTail: Http2StreamRequest | undefined = undefined;
  queued = 0;
  /** The stream limit of the origin's last established session (a guess for sessions still connecting). */
  streamLimitHint: number | undefined = undefined;
  /** Requests holding a stream slot, oldest first (saturation: age of the oldest holder). */
  activeHead: Http2StreamRequest | undefined = undefined;
  activeTail: Http2StreamRequest | undefined = undefined;

  /**
   * @param key - the URL given to `http2.connect()` (may carry user info, as upstream's pool key).
   * @param name - `scheme://host:port`, the only form that reaches telemetry.
   */
  constructor(
    readonly key: string,
    readonly name: string,
    readonly counters: Http2OriginCounters | undefined
  ) {}

  enqueue(req: Http2StreamRequest): void {
    req.queued = true;
    req.wasQueued = true;
    req.waitNext = undefined;
    req.waitPrev = this.waitTail;
    if (this.waitTail) this.waitTail.waitNext = req;
    else this.waitHead = req;
    this.waitTail = req;
    this.queued++;
  }

  remove(req: Http2StreamRequest): void {
    if (!req.queued) return;
    req.queued = false;
    if (req.waitPrev) req.waitPrev.waitNext = req.waitNext;
    else this.waitHead = req.waitNext;
    if (req.waitNext) req.waitNext.waitPrev = req.waitPrev;
    else this.waitTail = req.waitPrev;
    req.waitNext = req.waitPrev = undefined;
    this.queued--;
    const counters = this.counters;
    if (counters !== undefined && this.queued < counters.minQueued) counters.minQueued = this.queued;
  }

  dequeue(): Http2StreamRequest | undefined {
    const req = this.waitHead;
    if (req !== undefined) this.remove(req);
    return req;
  }

  /** `req` got a stream slot at `now`. O(1). */
  holdStart(req: Http2StreamRequest, now: number): void {
    req.slotAt = now;
    req.activeNext = undefined;
    req.activePrev = this.activeTail;
    if (this.activeTail) this.activeTail.activeNext = req;
    else this.activeHead = req;
    this.activeTail = req;
  }

  /** `req` released its slot. O(1). */
  holdEnd(req: Http2StreamRequest): void {
    if (req.activePrev) req.activePrev.activeNext = req.activeNext;
    else if (this.activeHead === req) this.activeHead = req.activeNext;
    else return;
    if (req.activeNext) req.activeNext.activePrev = req.activePrev;
    else this.activeTail = req.activePrev;
    req.activeNext = req.activePrev = undefined;
  }

  /** A pooled session with a free stream slot (first fit, so load concentrates and spare sessions can idle). */
  available(): Http2SessionEntry | undefined {
    for (const entry of this.sessions) if (entry.available) return entry;
    return undefined;
  }
}
