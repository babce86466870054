import { DeadlineScheduler, timing } from "@sockeye/pool-monitor/internal";
import net, { type AddressInfo, type Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { afterPollPhase, blockableClock, FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import { STALL_CONFIRM_MS } from "../../pool-monitor/src/deadline-scheduler";
import { IdleWatchList, type IdleWatcher } from "./idle-watch-list";

/** Captured before any test fakes timers: real event-loop turns for loopback I/O. */
const realSetImmediate = setImmediate;

async function until(predicate: () => boolean): Promise<void> {
  const start = process.hrtime.bigint();
  while (!predicate() && process.hrtime.bigint() - start < 2_000_000_000n) {
    await new Promise((resolve) => realSetImmediate(resolve));
  }
  expect(predicate()).toBe(true);
}

let list: IdleWatchList;

/** A watched request as `InFlightRequest` is one: when it times out, it ends, and its end unwatches it. */
function watcher(limit: number, onTimeout: () => void = () => {}) {
  const w: IdleWatcher & { timeouts: number[] } = {
    idleWatch: undefined,
    idleOn: undefined,
    idleLimitMs: limit,
    timeouts: [],
    onIdle() {
      list.unwatch(w);
      w.timeouts.push(timing.now());
      onTimeout();
    },
  };
  return w;
}

/** A socket object as Node builds them (never connected): Node reports its activity through `_unrefTimer()`. */
function socket(): Socket & { _unrefTimer(): void } {
  return new net.Socket() as Socket & { _unrefTimer(): void };
}

describe("IdleWatchList", () => {
  let scheduler: DeadlineScheduler;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    scheduler = new DeadlineScheduler();
    list = new IdleWatchList(scheduler);
  });
  afterEach(() => {
    scheduler.stop();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("times out a watcher exactly its limit after the last activity, never early", () => {
    const s = socket();
    const w = watcher(200);
    const start = timing.now();
    list.watch(w, s, start);
    expect(list.empty).toBe(false);
    vi.advanceTimersByTime(150);
    s._unrefTimer(); // Node: a read or a write at 150 ms
    vi.advanceTimersByTime(199);
    expect(w.timeouts).toEqual([]);
    vi.advanceTimersByTime(1); // due at 350: fired in that timers phase
    expect(w.timeouts).toEqual([start + 350]);
    expect(w.idleOn).toBeUndefined();
    expect(list.empty).toBe(true);
    expect(scheduler.size).toBe(0);
  });

  it("after an event-loop block longer than STALL_CONFIRM_MS, bytes read in the poll phase restart the watch instead", async () => {
    const clock = blockableClock();
    const s = socket();
    const w = watcher(200);
    const start = timing.now();
    list.watch(w, s, start);
    vi.advanceTimersByTime(199);
    clock.block(STALL_CONFIRM_MS + 1); // blocked over the limit
    vi.advanceTimersByTime(1); // the late wake-up: collected, to be fired after the poll phase
    expect(w.timeouts).toEqual([]);
    s._unrefTimer(); // the poll phase reads the bytes that arrived during the block
    await afterPollPhase();
    expect(w.timeouts).toEqual([]);
    expect(list.empty).toBe(false);
    vi.advanceTimersByTime(199);
    expect(w.timeouts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(w.timeouts).toEqual([start + 400 + STALL_CONFIRM_MS + 1]);
  });

  it("after an event-loop block longer than STALL_CONFIRM_MS with no byte read, the watcher times out after the poll phase", async () => {
    const clock = blockableClock();
    const w = watcher(200);
    const start = timing.now();
    list.watch(w, socket(), start);
    clock.block(200 + STALL_CONFIRM_MS + 1);
    vi.advanceTimersByTime(200);
    expect(w.timeouts).toEqual([]);
    await afterPollPhase();
    expect(w.timeouts).toEqual([start + 400 + STALL_CONFIRM_MS + 1]);
    expect(list.empty).toBe(true);
  });

  it("hooks a socket once, keeps calling Node's own method, and forgets it when unwatched", () => {
    const s = socket();
    const original = vi.fn();
    (s as unknown as { _unrefTimer: () => void })._unrefTimer = original;
    const w = watcher(200);
    list.watch(w, s, timing.now());
    const hook = s._unrefTimer;
    expect(hook).not.toBe(original);
    list.unwatch(w);
    list.unwatch(w);
    expect(list.empty).toBe(true);
    const again = watcher(200);
    list.watch(again, s, timing.now());
    expect(s._unrefTimer).toBe(hook); // one hook per socket, however many requests use it
    s._unrefTimer();
    expect(original).toHaveBeenCalledTimes(1);
    list.unwatch(again);
    // Unwatched: activity touches nothing and no timeout comes.
    s._unrefTimer();
    vi.advanceTimersByTime(1000);
    expect(again.timeouts).toEqual([]);
    expect(original).toHaveBeenCalledTimes(2);
    expect(scheduler.size).toBe(0);
  });

  it("a socket's activity restarts only the request watching it now", () => {
    const a = socket();
    const b = socket();
    const wa = watcher(300);
    const wb = watcher(300);
    const start = timing.now();
    list.watch(wa, a, start);
    list.watch(wb, b, start);
    for (let t = 100; t <= 600; t += 100) {
      vi.advanceTimersByTime(100);
      b._unrefTimer();
    }
    expect(wa.timeouts).toEqual([start + 300]);
    expect(wb.timeouts).toEqual([]);
    vi.advanceTimersByTime(299);
    expect(wb.timeouts).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(wb.timeouts).toEqual([start + 900]);
  });

  it("activity only records the time: the scheduler is touched once per limit period, not per event", () => {
    const s = socket();
    const w = watcher(100);
    const arm = vi.spyOn(scheduler, "arm");
    const disarm = vi.spyOn(scheduler, "disarm");
    list.watch(w, s, timing.now());
    for (let i = 0; i < 300; i++) {
      s._unrefTimer();
      s._unrefTimer();
      vi.advanceTimersByTime(1);
    }
    // 600 events over three periods: the first arm, then one re-arm from the last event each time it came due.
    expect([arm.mock.calls.length, disarm.mock.calls.length]).toEqual([4, 0]);
    expect(w.timeouts).toEqual([]);
    expect(scheduler.size).toBe(1);
  });

  it("a stopped watch serves the next request and keeps nothing of the last one", () => {
    const s = socket();
    const first = watcher(200);
    list.watch(first, s, timing.now());
    const watch = first.idleWatch!;
    list.unwatch(first);
    expect(first.idleWatch).toBeUndefined();
    expect(watch.target).not.toBe(first);
    const next = watcher(300);
    const start = timing.now();
    list.watch(next, s, start);
    expect(next.idleWatch).toBe(watch);
    vi.advanceTimersByTime(299);
    expect([first.timeouts, next.timeouts]).toEqual([[], []]);
    vi.advanceTimersByTime(1);
    expect([first.timeouts, next.timeouts]).toEqual([[], [start + 300]]);
  });

  it("one throwing watcher does not keep the others from timing out", () => {
    const bad = watcher(100, () => {
      throw new Error("watcher bug");
    });
    const good = watcher(100);
    list.watch(bad, socket(), timing.now());
    list.watch(good, socket(), timing.now());
    expect(() => vi.advanceTimersByTime(100)).toThrow("watcher bug");
    expect(bad.timeouts).toHaveLength(1);
    expect(good.timeouts).toHaveLength(1);
    expect(list.empty).toBe(true);
  });

  it("real loopback bytes restart the watch at the moment they are read", async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve));
    const client = net.connect((server.address() as AddressInfo).port, "127.0.0.1");
    await new Promise((resolve) => client.once("connect", resolve));
    const peer = await accepted;
    let received = 0;
    client.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    try {
      const w = watcher(500);
      const start = timing.now();
      list.watch(w, client, start);
      vi.advanceTimersByTime(400);
      peer.write("x");
      await until(() => received === 1); // the read happened at fake time 400
      vi.advanceTimersByTime(100);
      expect(w.timeouts).toEqual([]); // the original 500 ms would have fired here
      vi.advanceTimersByTime(399);
      expect(w.timeouts).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(w.timeouts).toEqual([start + 900]);
    } finally {
      client.destroy();
      peer.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
