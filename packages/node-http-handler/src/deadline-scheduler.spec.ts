import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { FAKE_TIMERS } from "./fake-timers.mock";
import { TICK_MS } from "./constants";
import { Deadline, DeadlineScheduler } from "./deadline-scheduler";
import { timing } from "@sockeye/pool-monitor";

function owner() {
  const fired: { kind: number; at: number }[] = [];
  return { fired, onDeadline: (kind: number, now: number) => fired.push({ kind, at: now }) };
}

describe("DeadlineScheduler", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("creates no interval until something is armed, then exactly one for many deadlines", () => {
    const setInterval = vi.spyOn(timing, "setInterval");
    const scheduler = new DeadlineScheduler();
    expect(scheduler.ticking).toBe(false);
    const o = owner();
    const start = timing.now();
    for (let i = 0; i < 1000; i++) scheduler.arm(new Deadline(o, 0), start, 5000);
    expect(setInterval).toHaveBeenCalledTimes(1);
    expect(setInterval).toHaveBeenCalledWith(expect.any(Function), TICK_MS);
    expect(scheduler.size).toBe(1000);
    expect(vi.getTimerCount()).toBe(1);
    scheduler.stop();
  });

  it("unrefs its interval so it never keeps the process alive", () => {
    const setInterval = vi.spyOn(timing, "setInterval");
    const scheduler = new DeadlineScheduler();
    scheduler.arm(new Deadline(owner(), 0), timing.now(), 1000);
    const ticker = setInterval.mock.results[0].value as NodeJS.Timeout;
    expect(ticker.hasRef()).toBe(false);
    scheduler.stop();
  });

  it("never fires early and at most one tick late", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    vi.advanceTimersByTime(37); // arm off the tick phase
    scheduler.arm(new Deadline(o, 7), start + 37, 1000);
    vi.advanceTimersByTime(999);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(TICK_MS + 1); // the next tick collects it, the immediate fires it
    expect(o.fired).toHaveLength(1);
    expect(o.fired[0].kind).toBe(7);
    const lateBy = o.fired[0].at - (start + 37 + 1000);
    expect(lateBy).toBeGreaterThanOrEqual(0);
    expect(lateBy).toBeLessThanOrEqual(TICK_MS + 1);
  });

  it("keeps deadlines of several durations apart and fires each in order", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const now = timing.now();
    scheduler.arm(new Deadline(o, 3), now, 3000);
    scheduler.arm(new Deadline(o, 1), now, 1000);
    scheduler.arm(new Deadline(o, 2), now, 2000);
    vi.advanceTimersByTime(3000 + TICK_MS + 1);
    expect(o.fired.map((f) => f.kind)).toEqual([1, 2, 3]);
  });

  it("does not fire a cancelled deadline and stops ticking once nothing is armed", () => {
    const clearInterval = vi.spyOn(timing, "clearInterval");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const d = new Deadline(o, 0);
    scheduler.arm(d, timing.now(), 1000);
    scheduler.cancel(d);
    expect(scheduler.size).toBe(0);
    vi.advanceTimersByTime(TICK_MS);
    expect(clearInterval).toHaveBeenCalledTimes(1);
    expect(scheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(o.fired).toEqual([]);
  });

  it("re-checks in setImmediate: a deadline cancelled after collection (e.g. by I/O after a stall) does not fire", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const d = new Deadline(o, 0);
    scheduler.arm(d, timing.now(), 1000);
    // Advance just past the collecting tick but before the immediate runs.
    vi.advanceTimersByTime(1000);
    expect(d.armed).toBe(true); // collected (expiring) but not fired
    scheduler.cancel(d); // the response arrived in the poll phase
    vi.advanceTimersByTime(TICK_MS);
    expect(o.fired).toEqual([]);
    expect(scheduler.size).toBe(0);
  });

  it("uses a native timer for durations shorter than two ticks, without starting the interval", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    scheduler.arm(new Deadline(o, 0), timing.now(), 150);
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(scheduler.ticking).toBe(false);
    vi.advanceTimersByTime(149);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(o.fired).toHaveLength(1);
    expect(scheduler.size).toBe(0);
  });

  it("ignores non-finite or negative durations", () => {
    const scheduler = new DeadlineScheduler();
    const d = new Deadline(owner(), 0);
    scheduler.arm(d, timing.now(), Number.NaN);
    scheduler.arm(d, timing.now(), -1);
    scheduler.arm(d, timing.now(), Number.POSITIVE_INFINITY);
    expect(scheduler.size).toBe(0);
    expect(scheduler.ticking).toBe(false);
  });

  it("keeps ticking while the owner reports work, then stops", () => {
    let busy = true;
    const onTick = vi.fn(() => busy);
    const scheduler = new DeadlineScheduler(onTick);
    scheduler.ensureTicking();
    vi.advanceTimersByTime(5 * TICK_MS);
    expect(onTick).toHaveBeenCalledTimes(5);
    expect(scheduler.ticking).toBe(true);
    busy = false;
    vi.advanceTimersByTime(TICK_MS);
    expect(scheduler.ticking).toBe(false);
    vi.advanceTimersByTime(10 * TICK_MS);
    expect(onTick).toHaveBeenCalledTimes(6);
  });

  it("stop() clears the interval and forgets every deadline", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    for (let i = 0; i < 10; i++) scheduler.arm(new Deadline(o, i), timing.now(), 1000 + i * 300);
    scheduler.stop();
    expect(scheduler.ticking).toBe(false);
    expect(scheduler.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(o.fired).toEqual([]);
  });

  it("stop() also clears native short deadlines: nothing fires after it and size never goes negative", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    scheduler.arm(new Deadline(o, 0), timing.now(), 50);
    scheduler.arm(new Deadline(o, 1), timing.now(), 150);
    scheduler.arm(new Deadline(o, 2), timing.now(), 1000);
    expect(scheduler.size).toBe(3);
    scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5000);
    expect(o.fired).toEqual([]);
    expect(scheduler.size).toBe(0);
    // Still usable: a deadline armed after stop() fires, and the interval stops itself afterwards.
    scheduler.arm(new Deadline(o, 3), timing.now(), 1000);
    vi.advanceTimersByTime(1000 + 2 * TICK_MS + 1);
    expect(o.fired.map((f) => f.kind)).toEqual([3]);
    expect(scheduler.size).toBe(0);
    expect(scheduler.ticking).toBe(false);
  });

  it("a throwing owner does not keep the other deadlines of the same tick from firing", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const thrower = {
      onDeadline: () => {
        throw new Error("owner bug");
      },
    };
    const start = timing.now();
    scheduler.arm(new Deadline(thrower, 0), start, 1000);
    scheduler.arm(new Deadline(o, 1), start, 1000);
    scheduler.arm(new Deadline(o, 2), start, 1000);
    // The first error is rethrown once every expired deadline has fired (bugs stay visible).
    expect(() => vi.advanceTimersByTime(1000 + TICK_MS + 1)).toThrow("owner bug");
    expect(o.fired.map((f) => f.kind)).toEqual([1, 2]);
    expect(scheduler.size).toBe(0);
    vi.advanceTimersByTime(TICK_MS);
    expect(scheduler.ticking).toBe(false);
  });

  it("recreates its interval when the timer implementation changed (real -> fake timers)", () => {
    vi.useRealTimers();
    const scheduler = new DeadlineScheduler();
    const o = owner();
    scheduler.arm(new Deadline(o, 0), timing.now(), 60_000);
    expect(scheduler.ticking).toBe(true);
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    const d = new Deadline(o, 1);
    scheduler.arm(d, timing.now(), 1000);
    vi.advanceTimersByTime(1000 + TICK_MS + 1);
    expect(o.fired.map((f) => f.kind)).toContain(1);
    scheduler.stop();
  });
});
