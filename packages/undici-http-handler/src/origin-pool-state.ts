/**
 * OriginPoolState: everything the undici telemetry keeps for one origin (`scheme://host:port`).
 *
 * Request bookkeeping is intrusive: a request's state object carries `listPrev`/`listNext` and is linked into at
 * most one of two doubly linked lists of its origin at a time:
 *
 *   waitList:   requests not yet given a connection, in start order ─► firstNode = oldest queued (oldestQueuedMs in O(1))
 *   pausedList: responses whose body is paused by backpressure (the caller is not reading) ─► unconsumed-body detection
 *
 * With the handler-owned dispatcher (`gatedHere`), `waitList` is the origin's `OriginGate` FIFO itself: only requests
 * held by the handler beyond `maxSockets` (the ones undici has were given a slot, and a connection or a connecting
 * one); an `_OTHER` entry has one gate per overflowed origin with a request in use or queued, each with a list of its
 * own, registered here (`gateQueues`) by `OriginGates`, which removes it when it drops the gate, and read at sample /
 * snapshot time.
 *
 * Insert and remove are O(1) and allocate nothing. Connection state (attempts open, created, closed by reason, connect
 * and TLS times, age) is fed by the tracked connector; the pool's own gauges (connected / free / pending) come from
 * undici's `PoolStats` at read time. Counters only grow, except the per-sample ones the detector consumes.
 *
 * Pools: the handler's Agent factory registers each undici `Pool` it creates (`registerPool`) in a small map keyed by
 * the exact origin string:
 *
 *   "http://a:80" ─► { pool, limit }     a tracked origin: one entry
 *   _OTHER        ─► { pool, limit } × n  one entry per origin beyond maxOrigins (each has a Pool of its own)
 *
 * Registering again for an origin replaces its entry (undici's Agent closes a pool whose connections all went away
 * and creates a new one on the next request), so a replaced pool is never counted twice. A pool is live until undici
 * marks it `closed` or `destroyed`. A dead entry is dropped as soon as undici closes its pool: undici 7's `Agent`
 * closes and forgets an origin's `Pool` from its own `'disconnect'` / `'connectionError'` listener when the last
 * connection is gone, so each registered pool gets two listeners (closures, once per pool) that look at it on the next
 * tick (`process.nextTick`, once per connection closed; the Agent's listener runs after this entry's); and at the
 * latest by `refreshPools()` at each sample / snapshot, for any other way (a dispatcher closed or destroyed whole).
 * `releasePools()` forgets them all at once (the handler's `destroy()`). So the map holds at most one entry per origin
 * with a live pool: an `_OTHER` entry does not keep one per host ever seen. `connLimit` (the entry's `maxSockets`) is
 * a cached number (the hot path reads it per request), kept in O(1) per registration and drop from running counts
 * (live pools, the sum of their finite limits, how many are unlimited): no O(pools) walk per event, which would be
 * quadratic in an `_OTHER` entry holding thousands of origins. The gauges sum undici's stats over the live pools at
 * read time (one `PoolStats` object per pool and read: sample and snapshot time only).
 * A caller's own dispatcher registers no pool: the handler sets `statsReader` (and leaves `connLimit` null) instead.
 */
import { OriginTelemetry, type PoolReading, type SampleEvidence } from "@sockeye/pool-monitor/internal";

/** Fields a request state object carries for its origin's lists. @internal */
export interface PoolRequestNode {
  begunAt: number;
  /** When it got a connection (`timing.now()` ms); -1 while it holds none. */
  heldSince: number;
  pausedAt: number;
  /** 0: in no list, 1: waiting, 2: paused, 3: an `OriginGate` queue of its own, 4: holding a connection. */
  listTag: number;
  /**
   * It waited behind others for a connection at its origin's limit (`request:enqueued` was emitted for it), as opposed
   * to waiting only for a connection opened for it: the `queued` of its `request:acquired`.
   */
  wasQueued: boolean;
  listPrev: PoolRequestNode | undefined;
  listNext: PoolRequestNode | undefined;
}

/** Subset of undici's `PoolStats` / `ClientStats` read by the telemetry. @internal */
export interface UndiciStatsLike {
  connected?: number;
  free?: number;
  pending?: number;
  queued?: number;
  running?: number;
}

/**
 * What the registry reads of an undici `Pool` (`closed` / `destroyed`: undici's `DispatcherBase` getters; `on`: its
 * events). @internal
 */
export interface PoolLike {
  readonly stats: UndiciStatsLike | undefined;
  readonly closed?: boolean;
  readonly destroyed?: boolean;
  on(event: "disconnect" | "connectionError", listener: () => void): unknown;
}

/** One registered pool and its connection limit (`null` = unlimited). @internal */
export interface RegisteredPool {
  readonly origin: string;
  readonly pool: PoolLike;
  readonly limit: number | null;
}

/** Active sockets, limit and queue summed over the pools the detector's sample covers. @internal */
export interface PoolEvidence {
  active: number;
  maxSockets: number;
  queued: number;
}

function isLive(pool: PoolLike): boolean {
  return pool.closed !== true && pool.destroyed !== true;
}

/** List tag of the requests holding a connection (body not paused). @internal */
export const HOLDING_LIST_TAG = 4;

/** An intrusive doubly linked list of request nodes. @internal */
export class RequestList {
  firstNode: PoolRequestNode | undefined;
  lastNode: PoolRequestNode | undefined;
  nodeCount = 0;

  constructor(private readonly tag: number) {}

  linkTail(n: PoolRequestNode): void {
    n.listTag = this.tag;
    n.listPrev = this.lastNode;
    n.listNext = undefined;
    if (this.lastNode === undefined) this.firstNode = n;
    else this.lastNode.listNext = n;
    this.lastNode = n;
    this.nodeCount++;
  }

  unlinkNode(n: PoolRequestNode): void {
    if (n.listTag !== this.tag) return;
    if (n.listPrev === undefined) this.firstNode = n.listNext;
    else n.listPrev.listNext = n.listNext;
    if (n.listNext === undefined) this.lastNode = n.listPrev;
    else n.listNext.listPrev = n.listPrev;
    n.listPrev = n.listNext = undefined;
    n.listTag = 0;
    this.nodeCount--;
  }
}

/** The undici transport's state of one origin entry: its pools, gates and request lists. @internal */
export class OriginPoolState extends OriginTelemetry {
  /**
   * Connection limit: the sum of the live registered pools' limits (cached, see `refreshPools()`); `null` =
   * unlimited (some live pool has no limit) or unknown (no pool registered: a caller's dispatcher).
   */
  connLimit: number | null = null;
  /** Reads undici's stats of this entry's pools (summed over the registry), when reachable. */
  statsReader: (() => UndiciStatsLike | undefined) | undefined;
  /** Registered pools by exact origin; `undefined` until the first `registerPool()`. */
  private pools: Map<string, RegisteredPool> | undefined;
  /** Registered pools not known to be dead (see the header). */
  private livePools = 0;
  /** Of those: the sum of the finite limits, and how many are unlimited. */
  private limitSum = 0;
  private unlimitedPools = 0;
  /** Limit of the latest registered pool: `connLimit` while no registered pool is live (the next one gets it). */
  private latestLimit: number | null = null;

  readonly waitList = new RequestList(1);
  readonly pausedList = new RequestList(2);
  /** Requests holding a connection whose body is not paused (acquired order: firstNode = oldest hold). */
  readonly holders = new RequestList(HOLDING_LIST_TAG);
  /** Requests of this entry are admitted by `OriginGate`s (the handler-owned dispatcher): see the header. */
  gatedHere = false;
  /** FIFO lists of the gates of origins aggregated in this entry (`_OTHER`), by exact origin (not `waitList`). */
  readonly gateQueues = new Map<string, RequestList>();
  /** Requests holding a connection (given one, not yet finished with it). */
  heldCount = 0;
  /** Connection attempts not yet connected or failed. */
  attemptsOpen = 0;
  /** Connected sockets whose first request has not been dispatched yet (to tell reused acquisitions). */
  freshConns = 0;

  /**
   * Registers `pool` (connection limit `limit`, `null` = unlimited) as the pool of `origin` in this entry, replacing
   * a previous pool of the same origin, and listens for its close (see the header); updates `connLimit`. O(1); once
   * per pool creation.
   */
  registerPool(origin: string, pool: PoolLike, limit: number | null): void {
    let pools = this.pools;
    if (pools === undefined) {
      pools = this.pools = new Map();
      this.statsReader = () => this.sumStats();
    }
    // The running counts hold exactly the entries of the map: one replaced or removed leaves them at once.
    const previous = pools.get(origin);
    if (previous !== undefined) this.count(previous, -1);
    const entry: RegisteredPool = { origin, pool, limit };
    pools.set(origin, entry);
    this.latestLimit = limit;
    this.count(entry, 1);
    const check = (): void => this.dropIfClosed(entry);
    // undici's Agent closes the pool in its own listener of the same event, added after this one.
    const onGone = (): void => process.nextTick(check);
    pool.on("disconnect", onGone);
    pool.on("connectionError", onGone);
  }

  /**
   * Drops registered pools that undici closed or destroyed without their close being seen yet, and updates the cached
   * `connLimit`: the sum of the live pools' limits (`null` when one is unlimited), or the latest registered limit when
   * none is live (the Agent dropped them all; the next request's pool gets that limit). O(pools); at sample / snapshot
   * time. No-op without registered pools (`connLimit` stays as set, `null` for a caller's dispatcher).
   */
  refreshPools(): void {
    const pools = this.pools;
    if (pools === undefined) return;
    for (const entry of pools.values()) if (!isLive(entry.pool)) this.dropIfClosed(entry);
  }

  /**
   * Forgets every registered pool now (the handler destroyed its dispatcher, or is closing it for good) and every
   * gate queue (its gates are gone too); `connLimit` falls back to the latest registered limit. O(pools).
   */
  releasePools(): void {
    const pools = this.pools;
    if (pools !== undefined) {
      pools.clear();
      this.livePools = this.limitSum = this.unlimitedPools = 0;
      this.updateLimit();
    }
    this.gateQueues.clear();
  }

  /** Registered pools not known to be dead. */
  get poolCount(): number {
    return this.livePools;
  }

  /** `entry`'s pool was closed or destroyed: dropped from the map and the counts, unless no longer there. O(1). */
  private dropIfClosed(entry: RegisteredPool): void {
    if (isLive(entry.pool) || this.pools?.get(entry.origin) !== entry) return;
    this.pools.delete(entry.origin);
    this.count(entry, -1);
  }

  /** Adds (`sign` 1) or removes (-1) `entry` in the running counts and updates `connLimit`. */
  private count(entry: RegisteredPool, sign: 1 | -1): void {
    this.livePools += sign;
    if (entry.limit === null) this.unlimitedPools += sign;
    else this.limitSum += sign * entry.limit;
    this.updateLimit();
  }

  private updateLimit(): void {
    this.connLimit = this.livePools === 0 ? this.latestLimit : this.unlimitedPools > 0 ? null : this.limitSum;
  }

  /**
   * undici's gauges the readers use (`connected`, `free`, `pending`) summed over the live registered pools; `undefined`
   * when none is live. Allocates one object.
   */
  private sumStats(): UndiciStatsLike | undefined {
    const pools = this.pools;
    if (pools === undefined) return undefined;
    let any = false;
    const sum = { connected: 0, free: 0, pending: 0 };
    for (const { pool } of pools.values()) {
      if (!isLive(pool)) continue;
      const s = pool.stats;
      if (s === undefined) continue;
      any = true;
      sum.connected += s.connected ?? 0;
      sum.free += s.free ?? 0;
      sum.pending += s.pending ?? 0;
    }
    return any ? sum : undefined;
  }

  /**
   * Per-pool evidence for the detector: when more than one pool is live and some pool is full with a queue (`pending
   * > 0` and `connected − free >= limit`), writes into `e` the active sockets, limit and queue summed over those full
   * pools only and returns true, so one saturated host of `_OTHER` is not diluted by the idle capacity of the others.
   * Otherwise false (and `e` is left to the caller): the sample covers the entry as a whole. Call after
   * `refreshPools()`. O(pools), one `PoolStats` per live pool; sample time only.
   */
  poolEvidence(e: PoolEvidence): boolean {
    const pools = this.pools;
    if (pools === undefined || this.livePools < 2) return false;
    e.active = 0;
    e.maxSockets = 0;
    e.queued = 0;
    let full = 0;
    for (const [origin, { pool, limit }] of pools) {
      if (limit === null || !isLive(pool)) continue;
      const s = pool.stats;
      if (s === undefined) continue;
      // Requests of this origin held by its gate (beyond the limit) are its queue too.
      const pending = (s.pending ?? 0) + (this.gateQueues.get(origin)?.nodeCount ?? 0);
      const busy = (s.connected ?? 0) - (s.free ?? 0);
      if (pending <= 0 || busy < limit) continue;
      full++;
      // A full pool has every connection connected (busy >= limit), so none of the entry's connecting sockets is
      // its own: its pending requests are all queued.
      e.active += busy;
      e.maxSockets += limit;
      e.queued += pending;
    }
    return full > 0;
  }

  /** Requests waiting for a connection, excluding the one each connecting socket will take. */
  get queuedNow(): number {
    const s = this.statsReader?.();
    const undiciQueued =
      s !== undefined && typeof s.pending === "number"
        ? Math.max(0, s.pending - this.attemptsOpen)
        : this.gatedHere
          ? 0
          : Math.max(0, this.waitList.nodeCount - this.attemptsOpen);
    if (!this.gatedHere) return undiciQueued;
    let held = this.waitList.nodeCount;
    for (const list of this.gateQueues.values()) held += list.nodeCount;
    return held + undiciQueued;
  }

  /** Connections carrying a request, connecting ones included. */
  get activeNow(): number {
    const s = this.statsReader?.();
    if (s !== undefined && typeof s.connected === "number" && typeof s.free === "number") {
      return Math.max(0, s.connected - s.free) + this.attemptsOpen;
    }
    return this.heldCount + this.attemptsOpen;
  }

  /** Idle pooled connections (0 when the dispatcher exposes no stats). */
  get idle(): number {
    const s = this.statsReader?.();
    return s !== undefined && typeof s.free === "number" ? s.free : 0;
  }

  /** Age of the oldest request still waiting for a connection, ms. */
  oldestWaitMs(now: number): number {
    if (this.gatedHere) {
      let oldest = this.waitList.firstNode?.begunAt ?? Number.POSITIVE_INFINITY;
      for (const list of this.gateQueues.values()) {
        const at = list.firstNode?.begunAt;
        if (at !== undefined && at < oldest) oldest = at;
      }
      return oldest === Number.POSITIVE_INFINITY ? 0 : Math.max(0, now - oldest);
    }
    const head = this.waitList.firstNode;
    return head === undefined || this.queuedNow === 0 ? 0 : Math.max(0, now - head.begunAt);
  }

  /**
   * Ages of the requests holding a connection now (their bodies paused or not), into `s`: the oldest, the sum and
   * the count (the detector's long-hold evidence and sizing, as `PoolMonitor` reads them from the agent's sockets).
   * O(holding requests).
   */
  activeAges(now: number, s: SampleEvidence): void {
    let oldest = 0;
    let sum = 0;
    let count = 0;
    for (const list of [this.holders, this.pausedList]) {
      for (let n = list.firstNode; n !== undefined; n = n.listNext) {
        if (n.heldSince < 0) continue;
        const age = now - n.heldSince;
        sum += age;
        count++;
        if (age > oldest) oldest = age;
      }
    }
    s.oldestActiveMs = oldest;
    s.activeAgeSumMs = sum;
    s.activeAgeCount = count;
  }

  /**
   * Paused bodies (backpressure: the caller is not reading) as the one unread-body rule counts them
   * (`PoolReading.addUnread`), into `r` (whose `queued` is already read). O(paused bodies).
   */
  readUnconsumed(now: number, thresholdMs: number, queuedThresholdMs: number, r: PoolReading): void {
    const limit = r.unreadLimit(thresholdMs, queuedThresholdMs);
    for (let n = this.pausedList.firstNode; n !== undefined; n = n.listNext)
      r.addUnread(now, limit, n.pausedAt, n.pausedAt);
  }
}
