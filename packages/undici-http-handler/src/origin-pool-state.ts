/**
 * OriginPoolState: everything the undici telemetry keeps for one origin (`scheme://host:port`).
 *
 * A request is linked (O(1), no allocation) into at most one list of its origin:
 *
 *   waitList:   requests not yet given a connection, in start order ─► firstNode = oldest queued
 *   holders:    requests holding a connection, body not paused ─► firstNode = oldest hold
 *   pausedList: responses whose body is paused by backpressure ─► unread-body detection
 *
 * With the handler-owned dispatcher (`gatedHere`), `waitList` is the origin's `OriginGate` FIFO (requests beyond
 * `maxSockets`); an `_OTHER` entry has one gate per overflowed origin, registered here (`gateQueues`).
 *
 * Pools: the handler's Agent factory registers each undici `Pool` it creates, by exact origin, replacing the one
 * before (undici's Agent replaces a pool whose connections all went away). A pool undici closes is dropped on the
 * next tick of its last `'disconnect'` / `'connectionError'`, else by `refreshPools()`. `connLimit` and the gauges
 * are summed over the pools at sample and snapshot time only, never per event, which would be quadratic in an
 * `_OTHER` entry of thousands of origins. A caller's own dispatcher registers no pool: the handler sets `statsReader`.
 */
import {
  AdmissionQueue,
  OriginTelemetry,
  type QueueNode,
  type PoolReading,
  type SampleEvidence,
} from "@sockeye/pool-monitor/internal";

/** Fields a request state object carries for its origin's lists. @internal */
export interface PoolRequestNode extends QueueNode {
  begunAt: number;
  /** When it got a connection (`timing.now()` ms); -1 while it holds none. */
  heldSince: number;
  pausedAt: number;
  /** 0: in no list, 1: waiting, 2: paused, 3: an `OriginGate` queue of its own, 4: holding a connection. */
  listTag: number;
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

/** What the registry reads of an undici `Pool`. @internal */
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

/** An intrusive list of request nodes (a gate's queue admits through it too). @internal */
export type RequestList = AdmissionQueue<PoolRequestNode>;

/** The undici transport's state of one origin entry: its pools, gates and request lists. @internal */
export class OriginPoolState extends OriginTelemetry {
  /**
   * Sum of the live registered pools' limits as of the last `refreshPools()` (the latest registered limit when none
   * is live); `null`: unlimited, or unknown (a caller's dispatcher).
   */
  connLimit: number | null = null;
  /** Reads undici's stats of this entry's pools, when reachable. */
  statsReader: (() => UndiciStatsLike | undefined) | undefined;
  private pools: Map<string, RegisteredPool> | undefined;
  /** Limit of the latest registered pool: `connLimit` while no registered pool is live (the next one gets it). */
  private latestLimit: number | null = null;

  readonly waitList: RequestList = new AdmissionQueue(1);
  readonly pausedList: RequestList = new AdmissionQueue(2);
  readonly holders: RequestList = new AdmissionQueue(4);
  /** Requests of this entry are admitted by `OriginGate`s (see the header). */
  gatedHere = false;
  /** FIFO lists of the gates of origins aggregated in this entry (`_OTHER`), by exact origin (not `waitList`). */
  readonly gateQueues = new Map<string, RequestList>();
  /** Requests holding a connection (given one, not yet finished with it): their body is paused or not. */
  get heldCount(): number {
    return this.holders.nodeCount + this.pausedList.nodeCount;
  }

  /** Connection attempts not yet connected or failed. */
  attemptsOpen = 0;
  /** Connected sockets whose first request has not been dispatched yet (to tell reused acquisitions). */
  freshConns = 0;

  /** Registers `pool` (limit `limit`, `null` = unlimited) for `origin`, replacing its previous one. O(1). */
  registerPool(origin: string, pool: PoolLike, limit: number | null): void {
    let pools = this.pools;
    if (pools === undefined) {
      pools = this.pools = new Map();
      this.statsReader = () => this.sumStats();
    }
    const entry: RegisteredPool = { origin, pool, limit };
    pools.set(origin, entry);
    this.latestLimit = limit;
    const check = (): void => {
      if (!isLive(pool) && this.pools?.get(origin) === entry) this.pools.delete(origin);
    };
    // undici's Agent closes the pool in its own listener of the same event, added after this one.
    const onGone = (): void => process.nextTick(check);
    pool.on("disconnect", onGone);
    pool.on("connectionError", onGone);
  }

  /** Drops pools undici closed unseen and sums `connLimit`. O(pools); at sample / snapshot time. */
  refreshPools(): void {
    const pools = this.pools;
    if (pools === undefined) return;
    let sum: number | null = 0;
    for (const entry of pools.values()) {
      if (!isLive(entry.pool)) pools.delete(entry.origin);
      else sum = sum === null || entry.limit === null ? null : sum + entry.limit;
    }
    this.connLimit = pools.size === 0 ? this.latestLimit : sum;
  }

  /** Forgets every registered pool and gate queue (the handler's `destroy()`). O(pools). */
  releasePools(): void {
    this.pools?.clear();
    this.refreshPools();
    this.gateQueues.clear();
  }

  /** undici's gauges summed over the live registered pools; `undefined` when none is live. */
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
   * When several pools are live and some are full with a queue, writes those pools' sums into `e` and returns true, so
   * one saturated host of `_OTHER` is not diluted by the others. Call after `refreshPools()`. O(pools).
   */
  poolEvidence(e: PoolEvidence): boolean {
    const pools = this.pools;
    if (pools === undefined || pools.size < 2) return false;
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
      // A full pool has no connecting socket: its pending requests are all queued.
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

  /** Ages of the requests holding a connection now into `s`: the oldest, the sum, the count. O(holding requests). */
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

  /** Paused bodies, by the unread-body rule (`PoolReading.addUnread`), into `r`. O(paused bodies). */
  readUnconsumed(now: number, thresholdMs: number, queuedThresholdMs: number, r: PoolReading): void {
    const limit = r.unreadLimit(thresholdMs, queuedThresholdMs);
    for (let n = this.pausedList.firstNode; n !== undefined; n = n.listNext)
      r.addUnread(now, limit, n.pausedAt, n.pausedAt);
  }
}
