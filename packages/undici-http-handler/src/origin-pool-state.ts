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
 * Pools: the handler's Agent factory registers each undici `Pool` by exact origin, replacing the one before (undici's
 * Agent replaces a pool whose connections all went away). `connLimit` and the gauges are summed over the pools at
 * sample and snapshot time only: per event, that would be quadratic in an `_OTHER` entry of thousands of origins.
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
export type PoolEvidence = Pick<SampleEvidence, "active" | "maxSockets" | "queued">;

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
      this.statsReader = () => this.sumPools();
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

  /**
   * undici's gauges summed over the live registered pools, each pool's `stats` read once (`undefined` when none is
   * live). With `full`, when several pools are live: adds to it the figures of those full with a queue, so one
   * saturated host of `_OTHER` is not diluted by the others (`full.queued` stays 0 when none is). O(pools).
   */
  sumPools(full?: PoolEvidence): UndiciStatsLike | undefined {
    const pools = this.pools;
    if (pools === undefined) return undefined;
    const perPool = full !== undefined && pools.size > 1;
    let any = false;
    const sum = { connected: 0, free: 0, pending: 0 };
    for (const [origin, { pool, limit }] of pools) {
      if (!isLive(pool)) continue;
      const s = pool.stats;
      if (s === undefined) continue;
      any = true;
      sum.connected += s.connected ?? 0;
      sum.free += s.free ?? 0;
      sum.pending += s.pending ?? 0;
      if (!perPool || limit === null) continue;
      // Requests of this origin held by its gate (beyond the limit) are its queue too.
      const pending = (s.pending ?? 0) + (this.gateQueues.get(origin)?.nodeCount ?? 0);
      const busy = (s.connected ?? 0) - (s.free ?? 0);
      if (pending <= 0 || busy < limit) continue;
      // A full pool has no connecting socket: its pending requests are all queued.
      full.active += busy;
      full.maxSockets += limit;
      full.queued += pending;
    }
    return any ? sum : undefined;
  }

  /** `n` leaves `waitList` if it waits there (the interval's queue floor follows). */
  leaveWaitList(n: PoolRequestNode): void {
    if (n.listTag !== 1) return;
    this.waitList.unlinkNode(n);
    this.queueShrank(this.waitList.nodeCount);
  }

  /** Requests waiting for a connection now, excluding the one each connecting socket will take. */
  get queuedNow(): number {
    return this.queuedOf(this.statsReader?.());
  }

  /** `queuedNow` from undici's stats `s`, plus the gates' queues. */
  private queuedOf(s: UndiciStatsLike | undefined): number {
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

  /**
   * Reads this entry into `r` at sample and snapshot time (see the header): undici's stats once, the gates' queues,
   * the ages of the requests holding a connection, the paused bodies. Gauges: active = busy + connecting, idle = free,
   * queued = pending − connecting (plus the gates' queues). O(pools + holding requests + paused bodies).
   */
  poll(now: number, r: PoolReading): void {
    this.refreshPools();
    const e = r.evidence;
    e.active = e.maxSockets = e.queued = 0;
    const s = this.pools !== undefined ? this.sumPools(e) : this.statsReader?.();
    const queued = this.queuedOf(s);
    let oldestAt =
      queued === 0 ? Number.POSITIVE_INFINITY : (this.waitList.firstNode?.begunAt ?? Number.POSITIVE_INFINITY);
    if (this.gatedHere) {
      for (const list of this.gateQueues.values()) {
        const at = list.firstNode?.begunAt;
        if (at !== undefined && at < oldestAt) oldestAt = at;
      }
    }
    const busy =
      s !== undefined && typeof s.connected === "number" && typeof s.free === "number"
        ? Math.max(0, s.connected - s.free)
        : this.heldCount;
    const active = busy + this.attemptsOpen;
    const idle = s !== undefined && typeof s.free === "number" ? s.free : 0;
    const oldestQueuedMs = oldestAt === Number.POSITIVE_INFINITY ? 0 : Math.max(0, now - oldestAt);
    const maxSockets = this.connLimit;
    r.setGauges({ maxSockets, active, idle, queued, oldestQueuedMs });
    for (let n = this.pausedList.firstNode; n !== undefined; n = n.listNext) r.addUnread(now, n.pausedAt, n.pausedAt);
    // No per-pool evidence: the entry's gauges are (request figures stay the entry's either way).
    if (e.queued === 0) {
      e.active = active;
      e.maxSockets = maxSockets ?? Number.POSITIVE_INFINITY;
      e.queued = queued;
    }
    e.oldestQueuedMs = oldestQueuedMs;
    for (const list of [this.holders, this.pausedList]) {
      for (let n = list.firstNode; n !== undefined; n = n.listNext) {
        if (n.heldSince < 0) continue;
        const age = now - n.heldSince;
        e.activeAgeSumMs += age;
        e.activeAgeCount++;
        if (age > e.oldestActiveMs) e.oldestActiveMs = age;
      }
    }
  }
}
