import { timing } from "./timing";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { Deadline, DeadlineScheduler } from "./deadline-scheduler";
import { CONFIRM_MS, FAKE_TIMERS } from "./fake-timers.mock";

function owner() {
  const fired: { kind: number; at: number }[] = [];
  return { fired, onDeadline: (kind: number, now: number) => fired.push({ kind, at: now }) };
}

/** The confirmation of an expiry, and so `onDeadline`'s `now`, comes this late under fake timers. */
const CONFIRM = CONFIRM_MS;

/** The fake timer the scheduler created last (its `setTimeout` spy's last result). */
function lastTimer(spy: { mock: { results: { value: unknown }[] } }): NodeJS.Timeout {
  return spy.mock.results[spy.mock.results.length - 1].value as NodeJS.Timeout;
}

describe("DeadlineScheduler", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("creates no timer until something is armed, then exactly one unref'd timer for many deadlines", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    expect(scheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    const o = owner();
    const start = timing.now();
    for (let i = 0; i < 1000; i++) scheduler.arm(new Deadline(o, 0), start, 5000);
    // Appends to an existing list whose head is not earlier than the timer never touch the timer.
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(lastTimer(setTimeout).hasRef()).toBe(false);
    expect(scheduler.size).toBe(1000);
    expect(scheduler.dueAt).toBe(start + 5000);
    expect(vi.getTimerCount()).toBe(1);
    scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("fires each deadline exactly at its expiry, never early, whatever the duration (1 ms to 10 min)", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    vi.advanceTimersByTime(37); // arm at an arbitrary time
    const start = timing.now();
    const durations = [1, 10, 50, 100, 1000, 60_000, 600_000];
    for (const [i, ms] of durations.entries()) scheduler.arm(new Deadline(o, i), start, ms);
    for (const ms of durations) {
      const before = o.fired.length;
      vi.advanceTimersByTime(start + ms - 1 - timing.now());
      expect(o.fired).toHaveLength(before);
      vi.advanceTimersByTime(1 + CONFIRM);
      expect(o.fired).toHaveLength(before + 1);
      expect(o.fired[before].at - (start + ms)).toBe(CONFIRM);
    }
    expect(scheduler.size).toBe(0);
  });

  it("re-arms the timer only when a list head becomes the earliest expiry", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const clearTimeout = vi.spyOn(timing, "clearTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const now = timing.now();
    scheduler.arm(new Deadline(o, 1), now, 5000);
    scheduler.arm(new Deadline(o, 2), now, 5000); // same list, later head: no re-arm
    scheduler.arm(new Deadline(o, 3), now, 9000); // new, later list: no re-arm
    expect(setTimeout).toHaveBeenCalledTimes(1);
    scheduler.arm(new Deadline(o, 4), now, 200); // new earliest: re-armed for it
    expect(setTimeout).toHaveBeenCalledTimes(2);
    expect(clearTimeout).toHaveBeenCalledTimes(1);
    expect(scheduler.dueAt).toBe(now + 200);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(200 + CONFIRM);
    expect(o.fired.map((f) => f.kind)).toEqual([4]);
    expect(scheduler.dueAt).toBe(now + 5000);
    vi.advanceTimersByTime(4800);
    expect(o.fired.map((f) => f.kind)).toEqual([4, 1, 2]);
    vi.advanceTimersByTime(4000);
    expect(o.fired.map((f) => f.kind)).toEqual([4, 1, 2, 3]);
    expect(o.fired.map((f) => f.at - now - CONFIRM)).toEqual([200, 5000, 5000, 9000]);
  });

  it("many durations: every deadline fires at its own expiry, in expiry order", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    // 50 durations, 20 deadlines each, armed interleaved and a little apart.
    const expected: number[] = [];
    for (let k = 0; k < 20; k++) {
      for (let j = 0; j < 50; j++) {
        const ms = 10 + ((j * 37) % 50) * 13;
        scheduler.arm(new Deadline(o, ms), start + k, ms);
        expected.push(start + k + ms);
      }
    }
    vi.advanceTimersByTime(1000);
    expect(o.fired).toHaveLength(1000);
    const firedAt = o.fired.map((f) => f.at - CONFIRM);
    expect(firedAt).toEqual([...firedAt].sort((a, b) => a - b));
    // Each fired exactly at its expiry: the multiset of firing times is the multiset of expiries.
    expect([...firedAt].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
  });

  it("cancelling the head leaves a stale key: one early wake-up re-keys it, nothing fires early, none is lost", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    const head = new Deadline(o, 1);
    scheduler.arm(head, start, 1000);
    vi.advanceTimersByTime(300);
    scheduler.arm(new Deadline(o, 2), timing.now(), 1000); // due at 1300
    scheduler.disarm(head);
    expect(scheduler.size).toBe(1);
    vi.advanceTimersByTime(700); // the stale wake-up at 1000
    expect(o.fired).toEqual([]);
    expect(scheduler.dueAt).toBe(start + 1300);
    vi.advanceTimersByTime(299);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(1 + CONFIRM);
    expect(o.fired).toEqual([{ kind: 2, at: start + 1300 + CONFIRM }]);
    expect(setTimeout).toHaveBeenCalledTimes(2);
  });

  it("re-arming moves a deadline; refresh() restarts it from now in O(1)", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    const d = new Deadline(o, 1);
    scheduler.arm(d, start, 1000);
    vi.advanceTimersByTime(400);
    scheduler.arm(d, timing.now(), 1000); // moved: due at 1400
    expect(scheduler.size).toBe(1);
    vi.advanceTimersByTime(900);
    scheduler.refresh(d, timing.now()); // at 1300: due at 2300
    expect(d.at).toBe(start + 2300);
    vi.advanceTimersByTime(999);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(1 + CONFIRM);
    expect(o.fired).toEqual([{ kind: 1, at: start + 2300 + CONFIRM }]);
    scheduler.refresh(d, timing.now()); // idle: no-op
    expect(scheduler.size).toBe(0);
  });

  it("a deadline armed with an older start than its list's tail is still fired at its own expiry", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 2), start + 50, 1000);
    scheduler.arm(new Deadline(o, 1), start, 1000);
    vi.advanceTimersByTime(1000 + CONFIRM);
    expect(o.fired).toEqual([{ kind: 1, at: start + 1000 + CONFIRM }]);
    vi.advanceTimersByTime(50);
    expect(o.fired.map((f) => f.kind)).toEqual([1, 2]);
  });

  it("does not fire a cancelled deadline; once nothing is armed the timer lapses and is not re-armed", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const d = new Deadline(o, 0);
    scheduler.arm(d, timing.now(), 1000);
    scheduler.disarm(d);
    scheduler.disarm(d);
    expect(scheduler.size).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(o.fired).toEqual([]);
    expect(scheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    expect(setTimeout).toHaveBeenCalledTimes(1);
  });

  it("sequential requests share the timer: no native timer per request", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const d = new Deadline(o, 0);
    // 1,000 one-at-a-time requests of 5 ms each, 1 s deadline: the timer is re-armed about once per second.
    for (let i = 0; i < 1000; i++) {
      scheduler.arm(d, timing.now(), 1000);
      vi.advanceTimersByTime(5);
      scheduler.disarm(d);
    }
    expect(o.fired).toEqual([]);
    expect(setTimeout.mock.calls.length).toBeLessThanOrEqual(6);
  });

  it("confirms expiries after the poll phase: a deadline cancelled in between does not fire (stall rule)", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const d = new Deadline(o, 0);
    const refreshed = new Deadline(o, 1);
    scheduler.arm(d, timing.now(), 1000);
    scheduler.arm(refreshed, timing.now(), 1000);
    const immediate = vi.spyOn(timing, "setImmediate");
    vi.advanceTimersToNextTimer(); // the wake-up collects both and schedules the confirmation
    expect(immediate).toHaveBeenCalledTimes(1);
    expect(o.fired).toEqual([]);
    scheduler.disarm(d); // the response arrived in the poll phase
    scheduler.refresh(refreshed, timing.now()); // its socket moved a byte in the poll phase
    vi.advanceTimersByTime(CONFIRM);
    expect(o.fired).toEqual([]);
    expect(scheduler.size).toBe(1);
    vi.advanceTimersByTime(1000 + CONFIRM);
    expect(o.fired.map((f) => f.kind)).toEqual([1]);
  });

  it("ignores non-finite and negative durations", () => {
    const scheduler = new DeadlineScheduler();
    const d = new Deadline(owner(), 0);
    scheduler.arm(d, timing.now(), Number.NaN);
    scheduler.arm(d, timing.now(), -1);
    scheduler.arm(d, timing.now(), Number.POSITIVE_INFINITY);
    expect(scheduler.size).toBe(0);
    expect(scheduler.ticking).toBe(false);
  });

  it("the owner tick is a recurring entry: every period while the owner reports work, then it stops", () => {
    let busy = true;
    let period = 250;
    const ticks: number[] = [];
    const start = timing.now();
    const onTick = vi.fn((now: number) => {
      ticks.push(now - start);
      return busy;
    });
    const scheduler = new DeadlineScheduler(onTick, () => period);
    expect(vi.getTimerCount()).toBe(0);
    scheduler.ensureTicking();
    scheduler.ensureTicking();
    expect(scheduler.size).toBe(0); // the tick is not a deadline
    vi.advanceTimersByTime(1000);
    // At once in the timers phase (no confirmation), without drift.
    expect(ticks).toEqual([250, 500, 750, 1000]);
    period = 100; // read at each re-arm: the tick already armed for 1250 keeps its time
    vi.advanceTimersByTime(350);
    expect(ticks).toEqual([250, 500, 750, 1000, 1250, 1350]);
    busy = false;
    vi.advanceTimersByTime(100);
    expect(onTick).toHaveBeenCalledTimes(7);
    vi.advanceTimersByTime(10_000);
    expect(onTick).toHaveBeenCalledTimes(7);
    expect(scheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the tick and deadlines share the one timer", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler(() => true, 100);
    const o = owner();
    scheduler.ensureTicking();
    scheduler.arm(new Deadline(o, 1), timing.now(), 250);
    vi.advanceTimersByTime(1000);
    expect(o.fired.map((f) => f.at - CONFIRM)).toEqual([250]);
    // 10 ticks and one deadline: one timer at a time, re-armed once per wake-up.
    expect(vi.getTimerCount()).toBe(1);
    expect(setTimeout.mock.calls.length).toBeLessThanOrEqual(12);
    expect(setTimeout.mock.calls.every((call) => call[2] === scheduler)).toBe(true);
    scheduler.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("stop() clears the timer and forgets every deadline and the tick; the scheduler stays usable", () => {
    const onTick = vi.fn(() => true);
    const scheduler = new DeadlineScheduler(onTick, 100);
    const o = owner();
    scheduler.ensureTicking();
    for (let i = 0; i < 10; i++) scheduler.arm(new Deadline(o, i), timing.now(), 10 + i * 300);
    scheduler.stop();
    expect(scheduler.ticking).toBe(false);
    expect(scheduler.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(o.fired).toEqual([]);
    expect(onTick).not.toHaveBeenCalled();
    scheduler.arm(new Deadline(o, 3), timing.now(), 1000);
    vi.advanceTimersByTime(1000 + CONFIRM);
    expect(o.fired.map((f) => f.kind)).toEqual([3]);
    expect(scheduler.size).toBe(0);
    expect(scheduler.ticking).toBe(false);
  });

  it("a throwing owner does not keep the other deadlines of the same wake-up from firing", () => {
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
    scheduler.arm(new Deadline(o, 2), start, 500);
    vi.advanceTimersByTime(500 + CONFIRM);
    expect(o.fired.map((f) => f.kind)).toEqual([2]);
    // The first error is rethrown once every expired deadline has fired (bugs stay visible).
    expect(() => vi.advanceTimersByTime(500)).toThrow("owner bug");
    expect(o.fired.map((f) => f.kind)).toEqual([2, 1]);
    expect(scheduler.size).toBe(0);
    // The scheduler is intact afterwards.
    scheduler.arm(new Deadline(o, 3), timing.now(), 10);
    vi.advanceTimersByTime(10 + CONFIRM);
    expect(o.fired.map((f) => f.kind)).toEqual([2, 1, 3]);
  });

  it("recreates its timer when the timer implementation changed (real -> fake timers)", () => {
    vi.useRealTimers();
    const scheduler = new DeadlineScheduler();
    const o = owner();
    scheduler.arm(new Deadline(o, 0), timing.now(), 60_000);
    expect(scheduler.ticking).toBe(true);
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    const d = new Deadline(o, 1);
    scheduler.arm(d, timing.now(), 1000);
    vi.advanceTimersByTime(1000 + CONFIRM);
    expect(o.fired.map((f) => f.kind)).toContain(1);
    scheduler.stop();
  });
});
