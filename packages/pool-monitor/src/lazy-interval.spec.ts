import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { LazyInterval } from "./lazy-interval";
import { timing } from "./timing";

const FAKE = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "performance"] as const;

describe("LazyInterval", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("creates nothing until ensure(), then exactly one unref'd interval however often ensure() is called", () => {
    const setInterval = vi.spyOn(timing, "setInterval");
    const tick = vi.fn();
    const interval = new LazyInterval(tick, 100);
    expect(interval.running).toBe(false);
    interval.ensure();
    interval.ensure();
    expect(setInterval).toHaveBeenCalledTimes(1);
    expect((setInterval.mock.results[0].value as NodeJS.Timeout).hasRef()).toBe(false);
    vi.advanceTimersByTime(250);
    expect(tick).toHaveBeenCalledTimes(2);
    interval.stop();
    interval.stop();
    expect(interval.running).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("can be stopped from its own callback and started again", () => {
    let ticks = 0;
    const interval: LazyInterval = new LazyInterval(() => {
      if (++ticks === 2) interval.stop();
    }, 100);
    interval.ensure();
    vi.advanceTimersByTime(1000);
    expect(ticks).toBe(2);
    interval.ensure();
    vi.advanceTimersByTime(100);
    expect(ticks).toBe(3);
    interval.stop();
  });

  it("recreates the interval when the timer implementation changed (real -> fake timers)", () => {
    vi.useRealTimers();
    const tick = vi.fn();
    const interval = new LazyInterval(tick, 100);
    interval.ensure();
    vi.useFakeTimers({ toFake: [...FAKE] });
    interval.ensure();
    vi.advanceTimersByTime(100);
    expect(tick).toHaveBeenCalledTimes(1);
    interval.stop();
  });
});
