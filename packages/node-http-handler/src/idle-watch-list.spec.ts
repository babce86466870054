import type { Socket } from "node:net";
import { timing } from "@sockeye/pool-monitor";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { FAKE_TIMERS } from "./fake-timers.mock";
import { IdleWatchList, type IdleWatcher } from "./idle-watch-list";

// Only byte counters are read from the socket: a plain object stands in for it.
function watcher(limit: number, socket: { bytesRead: number; bytesWritten: number }) {
  const w: IdleWatcher & { timeouts: number } = {
    idleNext: undefined,
    idlePrev: undefined,
    idleWatched: false,
    idleExpiring: false,
    idleBytes: 0,
    idleSince: 0,
    idleLimitMs: limit,
    timeouts: 0,
    idleSocket: () => socket as Socket,
    onIdleTimeout() {
      w.timeouts++;
    },
  };
  return w;
}

describe("IdleWatchList", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("times out a watcher whose socket moved no byte for its limit, confirmed after the poll phase", () => {
    const list = new IdleWatchList();
    const socket = { bytesRead: 0, bytesWritten: 0 };
    const w = watcher(1000, socket);
    list.watch(w, socket as Socket, timing.now());
    vi.advanceTimersByTime(999);
    list.sample(timing.now());
    vi.runAllTicks();
    expect(w.timeouts).toBe(0);
    vi.advanceTimersByTime(1);
    list.sample(timing.now());
    expect(w.timeouts).toBe(0); // collected, not yet fired
    vi.advanceTimersByTime(0); // the setImmediate
    expect(w.timeouts).toBe(1);
    expect(w.idleWatched).toBe(false);
    expect(list.empty).toBe(true);
  });

  it("activity resets the watch, also when bytes arrive between collection and confirmation", () => {
    const list = new IdleWatchList();
    const socket = { bytesRead: 0, bytesWritten: 0 };
    const w = watcher(1000, socket);
    list.watch(w, socket as Socket, timing.now());
    vi.advanceTimersByTime(1000);
    list.sample(timing.now());
    socket.bytesRead = 10; // read during a stall, before the confirmation
    vi.advanceTimersByTime(0);
    expect(w.timeouts).toBe(0);
    expect(w.idleWatched).toBe(true);
  });

  it("unwatch and clear are O(1)/idempotent and keep the list consistent", () => {
    const list = new IdleWatchList();
    const socket = { bytesRead: 0, bytesWritten: 0 };
    const ws = [watcher(1000, socket), watcher(1000, socket), watcher(1000, socket)];
    for (const w of ws) list.watch(w, socket as Socket, timing.now());
    list.unwatch(ws[1]);
    list.unwatch(ws[1]);
    expect(ws[0].idlePrev).toBe(ws[2]);
    list.clear();
    expect(list.empty).toBe(true);
    expect(ws.every((w) => !w.idleWatched)).toBe(true);
  });

  it("one throwing watcher does not keep the others from timing out", () => {
    const list = new IdleWatchList();
    const socket = { bytesRead: 0, bytesWritten: 0 };
    const bad = watcher(1000, socket);
    bad.onIdleTimeout = () => {
      throw new Error("bug");
    };
    const good = watcher(1000, socket);
    list.watch(good, socket as Socket, timing.now());
    list.watch(bad, socket as Socket, timing.now());
    vi.advanceTimersByTime(1000);
    list.sample(timing.now());
    expect(() => vi.advanceTimersByTime(0)).toThrow("bug");
    expect(good.timeouts).toBe(1);
  });
});
