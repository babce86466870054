/**
 * OriginPoolState's pool registry with plain objects standing in for undici pools: the summed limit and gauges, a
 * replaced pool counted once, closed / destroyed pools left out (at once when the pool reports a connection gone,
 * else at the next refresh), everything released at once, and the per-pool evidence fed to the detector (each pool's stats read once per reading). The limit
 * is summed at sample and snapshot time (`refreshPools()`), so each check refreshes first, as a sample does.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { AdmissionQueue, PoolReading } from "@sockeye/pool-monitor/internal";
import { OriginPoolState, type PoolEvidence, type UndiciStatsLike } from "./origin-pool-state";

interface FakePool {
  stats: UndiciStatsLike;
  closed?: boolean;
  destroyed?: boolean;
  on(): void;
}

function pool(stats: UndiciStatsLike = {}): FakePool {
  return { stats: { connected: 0, free: 0, pending: 0, queued: 0, running: 0, ...stats }, on() {} };
}

/** The per-pool evidence `o` adds up (after a refresh, as a sample), or `undefined` when it reports none. */
function evidenceOf(o: OriginPoolState): PoolEvidence | undefined {
  const e = { active: 0, maxSockets: 0, queued: 0 };
  o.refreshPools();
  o.sumPools(e);
  return e.queued > 0 ? e : undefined;
}

/** What a sample reads of `o`. */
function reading(o: OriginPoolState): PoolReading {
  const r = new PoolReading();
  r.clear(1000, 2000);
  o.poll(0, r);
  return r;
}

/** The registered pools, as a sample sees them (after its `refreshPools()`). */
function poolCount(o: OriginPoolState): number {
  o.refreshPools();
  return (o as any).pools?.size ?? 0;
}

/** The summed limit, as a sample sees it. */
function limitOf(o: OriginPoolState): number | null {
  o.refreshPools();
  return o.connLimit;
}

function entry(): OriginPoolState {
  return new OriginPoolState("_OTHER", { windowSamples: 5, sampleIntervalMs: 1000, stallAfterMs: 30_000 });
}

describe("OriginPoolState pool registry", () => {
  it("without a registered pool, maxSockets stays null and no stats are read", () => {
    const o = entry();
    o.refreshPools();
    expect(limitOf(o)).toBeNull();
    expect(o.statsReader).toBeUndefined();
    expect(poolCount(o)).toBe(0);
    expect(evidenceOf(o)).toBeUndefined();
  });

  it("sums limits and gauges over the pools of different origins", () => {
    const o = entry();
    o.registerPool("http://b:80", pool({ connected: 2, free: 0, pending: 1, running: 2 }), 2);
    o.registerPool("http://c:80", pool({ connected: 2, free: 1, pending: 0, running: 1 }), 3);
    expect(limitOf(o)).toBe(5);
    expect(poolCount(o)).toBe(2);
    expect(o.statsReader?.()).toEqual({ connected: 4, free: 1, pending: 1 });
    expect(reading(o).gauges).toMatchObject({ active: 3, idle: 1, queued: 1 });
  });

  it("a reading reads each live pool's stats once (undici builds the object in a getter)", () => {
    const o = entry();
    let reads = 0;
    const counted = (stats: UndiciStatsLike): FakePool =>
      Object.defineProperty(pool(), "stats", {
        get: () => {
          reads++;
          return stats;
        },
      });
    o.registerPool("http://b:80", counted({ connected: 2, free: 0, pending: 3 }), 2);
    o.registerPool("http://c:80", counted({ connected: 1, free: 1, pending: 0 }), 2);
    expect(reading(o).gauges).toMatchObject({ maxSockets: 4, active: 2, idle: 1, queued: 3 });
    expect(reads).toBe(2);
  });

  it("registering a pool again for the same origin replaces it (the limit does not double)", () => {
    const o = entry();
    const first = pool({ connected: 1, free: 1 });
    o.registerPool("http://b:80", first, 2);
    o.registerPool("http://c:80", pool(), 2);
    o.registerPool("http://b:80", pool({ connected: 2, free: 0 }), 2);
    expect(limitOf(o)).toBe(4);
    expect(poolCount(o)).toBe(2);
    // The replaced pool's gauges are no longer read, even while it is still open.
    expect(o.statsReader?.()).toMatchObject({ connected: 2, free: 0 });
  });

  it("leaves closed and destroyed pools out, at the next refresh", () => {
    const o = entry();
    const b = pool({ connected: 1, free: 1 });
    const c = pool({ connected: 2, free: 0 });
    o.registerPool("http://b:80", b, 2);
    o.registerPool("http://c:80", c, 3);
    expect(limitOf(o)).toBe(5);
    b.closed = true;
    // The gauges skip a dead pool at once; the limit follows at the next refresh (sample / snapshot time).
    expect(o.statsReader?.()).toMatchObject({ connected: 2, free: 0 });
    expect(o.connLimit).toBe(5);
    expect(limitOf(o)).toBe(3);
    expect(poolCount(o)).toBe(1);
    c.destroyed = true;
    o.refreshPools();
    // No live pool: the latest registered limit stands (the next request's pool gets it), the gauges are unknown.
    expect(poolCount(o)).toBe(0);
    expect(limitOf(o)).toBe(3);
    expect(o.statsReader?.()).toBeUndefined();
    o.registerPool("http://b:80", pool(), 2);
    expect(limitOf(o)).toBe(2);
  });

  it("an unlimited live pool makes the sum unlimited", () => {
    const o = entry();
    o.registerPool("http://b:80", pool(), 2);
    o.registerPool("http://c:80", pool(), null);
    expect(limitOf(o)).toBeNull();
  });

  it("per-pool evidence: only the pools full with a queue, when there are some and more than one pool", () => {
    const o = entry();
    const b = pool({ connected: 2, free: 0, pending: 3 });
    const c = pool({ connected: 1, free: 1, pending: 0 });
    o.registerPool("http://b:80", b, 2);
    // One pool: the entry as a whole is the evidence.
    expect(evidenceOf(o)).toBeUndefined();
    o.registerPool("http://c:80", c, 2);
    expect(evidenceOf(o)).toEqual({ active: 2, maxSockets: 2, queued: 3 });
    // Full without a queue, or a queue behind a free slot: no per-pool evidence.
    b.stats = { connected: 2, free: 0, pending: 0 };
    expect(evidenceOf(o)).toBeUndefined();
    b.stats = { connected: 1, free: 0, pending: 1 };
    expect(evidenceOf(o)).toBeUndefined();
    // Two full pools: summed over both.
    b.stats = { connected: 2, free: 0, pending: 3 };
    c.stats = { connected: 2, free: 0, pending: 1 };
    expect(evidenceOf(o)).toEqual({ active: 4, maxSockets: 4, queued: 4 });
    // A closed pool is no evidence.
    c.closed = true;
    o.refreshPools();
    expect(evidenceOf(o)).toBeUndefined();
  });

  it("drops a pool undici closed on the tick of its last connection's 'disconnect', without a refresh (issue 33)", async () => {
    const o = entry();
    const emitter = () => Object.assign(new EventEmitter(), { stats: pool().stats, closed: false });
    const pools = Array.from({ length: 1000 }, emitter);
    for (const [i, p] of pools.entries()) o.registerPool(`http://bucket-${i}.s3.test:80`, p, 2);
    expect(limitOf(o)).toBe(2000);
    // A connection of a pool that stays open: nothing changes.
    pools[0].emit("disconnect");
    await new Promise((resolve) => process.nextTick(resolve));
    expect((o as any).pools.size).toBe(1000);
    // undici's Agent closes the pool in its own listener of the same event (added after the entry's).
    for (const p of pools.slice(0, 999)) {
      p.emit("disconnect");
      p.closed = true;
    }
    pools[999].emit("connectionError");
    pools[999].closed = true;
    await new Promise((resolve) => process.nextTick(resolve));
    expect((o as any).pools.size).toBe(0);
    // No live pool: the latest registered limit stands.
    expect(limitOf(o)).toBe(2);
    // A late event of a pool already replaced changes nothing.
    const first = emitter();
    o.registerPool("http://b:80", first, 3);
    o.registerPool("http://b:80", pool(), 4);
    first.closed = true;
    first.emit("disconnect");
    await new Promise((resolve) => process.nextTick(resolve));
    expect((o as any).pools.size).toBe(1);
    expect(limitOf(o)).toBe(4);
  });

  it("releasePools() forgets every pool and gate queue at once", () => {
    const o = entry();
    o.registerPool("http://b:80", pool(), 2);
    o.registerPool("http://c:80", pool(), null);
    o.gateQueues.set("http://c:80", new AdmissionQueue(3));
    expect(limitOf(o)).toBeNull();
    o.releasePools();
    expect(poolCount(o)).toBe(0);
    expect((o as any).pools.size).toBe(0);
    expect(o.gateQueues.size).toBe(0);
    expect(limitOf(o)).toBeNull(); // the latest registered limit (unlimited)
    o.registerPool("http://b:80", pool(), 2);
    expect(limitOf(o)).toBe(2);
  });
});
