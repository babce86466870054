import { timing } from "./timing";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { Deadline, DeadlineKind, DeadlineScheduler, STALL_CONFIRM_MS } from "./deadline-scheduler";
import { afterPollPhase, blockableClock, FAKE_TIMERS } from "./fake-timers.mock";

function owner<K = number>() {
  const fired: { kind: K; at: number }[] = [];
  return { fired, onDeadline: (kind: K, now: number) => fired.push({ kind, at: now }) };
}

/** The fake timer the scheduler created last (its `setTimeout` spy's last result). */
function lastTimer(spy: { mock: { results: { value: unknown }[] } }): NodeJS.Timeout {
  return spy.mock.results[spy.mock.results.length - 1].value as NodeJS.Timeout;
}

/** Node's own immediates waiting to run (the fake ones are not listed). */
const pendingImmediates = () => process.getActiveResourcesInfo().filter((r) => r === "Immediate").length;

/** Every timer the scheduler created (its `setTimeout` spy's results). */
function allTimers(spy: { mock: { results: { value: unknown }[] } }): NodeJS.Timeout[] {
  return spy.mock.results.map((r) => r.value as NodeJS.Timeout);
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
      vi.advanceTimersByTime(1);
      expect(o.fired).toHaveLength(before + 1);
      expect(o.fired[before].at).toBe(start + ms);
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
    vi.advanceTimersByTime(200);
    expect(o.fired.map((f) => f.kind)).toEqual([4]);
    expect(scheduler.dueAt).toBe(now + 5000);
    vi.advanceTimersByTime(4800);
    expect(o.fired.map((f) => f.kind)).toEqual([4, 1, 2]);
    vi.advanceTimersByTime(4000);
    expect(o.fired.map((f) => f.kind)).toEqual([4, 1, 2, 3]);
    expect(o.fired.map((f) => f.at - now)).toEqual([200, 5000, 5000, 9000]);
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
    const firedAt = o.fired.map((f) => f.at);
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
    vi.advanceTimersByTime(1);
    expect(o.fired).toEqual([{ kind: 2, at: start + 1300 }]);
    expect(setTimeout).toHaveBeenCalledTimes(2);
  });

  it("re-arming moves a deadline", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    const d = new Deadline(o, 1);
    scheduler.arm(d, start, 1000);
    vi.advanceTimersByTime(400);
    scheduler.arm(d, timing.now(), 1000); // moved: due at 1400
    expect(scheduler.size).toBe(1);
    vi.advanceTimersByTime(900);
    scheduler.arm(d, timing.now(), 1000); // at 1300: due at 2300
    expect(d.at).toBe(start + 2300);
    vi.advanceTimersByTime(999);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(o.fired).toEqual([{ kind: 1, at: start + 2300 }]);
    expect(scheduler.size).toBe(0);
  });

  it("a deadline armed with an older start than its list's tail is still fired at its own expiry", () => {
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 2), start + 50, 1000);
    scheduler.arm(new Deadline(o, 1), start, 1000);
    vi.advanceTimersByTime(1000);
    expect(o.fired).toEqual([{ kind: 1, at: start + 1000 }]);
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
    const start = timing.now();
    scheduler.ensureTicking();
    scheduler.arm(new Deadline(o, 1), start, 250);
    vi.advanceTimersByTime(1000);
    expect(o.fired.map((f) => f.at)).toEqual([start + 250]);
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
    vi.advanceTimersByTime(1000);
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
    vi.advanceTimersByTime(500);
    expect(o.fired.map((f) => f.kind)).toEqual([2]);
    // The first error is rethrown once every expired deadline has fired (bugs stay visible).
    expect(() => vi.advanceTimersByTime(500)).toThrow("owner bug");
    expect(o.fired.map((f) => f.kind)).toEqual([2, 1]);
    expect(scheduler.size).toBe(0);
    // The scheduler is intact afterwards.
    scheduler.arm(new Deadline(o, 3), timing.now(), 10);
    vi.advanceTimersByTime(10);
    expect(o.fired.map((f) => f.kind)).toEqual([2, 1, 3]);
  });

  it("a due deadline fires inside the advanceTimersByTime() call that reaches its expiry, with no immediate", () => {
    const setImmediate = vi.spyOn(timing, "setImmediate");
    const afterPoll = vi.spyOn(timing, "afterPoll");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 1), start, 1000);
    vi.advanceTimersByTime(1000);
    expect(o.fired).toEqual([{ kind: 1, at: start + 1000 }]);
    expect(setImmediate).not.toHaveBeenCalled();
    expect(afterPoll).not.toHaveBeenCalled();
    // Nothing is left pending either: no fake immediate, no timer.
    expect(vi.getTimerCount()).toBe(0);
    expect(scheduler.size).toBe(0);
  });

  it("with only setTimeout/clearTimeout faked (performance real), a tick of exactly the duration fires it", () => {
    vi.useRealTimers();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const scheduler = new DeadlineScheduler();
    const o = owner();
    // The real clock: it moves a few microseconds during the test, far less than the duration.
    const start = timing.now();
    scheduler.arm(new Deadline(o, 1), start, 1000);
    vi.advanceTimersByTime(999);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(1);
    // The timer's due time stands in for the clock, which reads ~1 s earlier.
    expect(o.fired).toEqual([{ kind: 1, at: start + 1000 }]);
    expect(timing.now()).toBeLessThan(start + 1000);
    expect(scheduler.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a stale timer that still fires (its implementation could not clear it) is ignored", () => {
    // An implementation whose clear function cannot clear the scheduler's handle (a fake handle after real timers
    // came back, or the reverse): the old timer stays armed.
    vi.spyOn(timing, "clearTimeout").mockImplementation(() => {});
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 1), start, 100);
    scheduler.stop(); // "clears" the timer due at 100: it stays armed
    scheduler.arm(new Deadline(o, 2), start, 1000);
    expect(setTimeout).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(2);
    // The stale timer fires at 100. Taken for the current one, its wake-up would read "now" as the current timer's
    // due time (1000) and fire deadline 2 900 ms early.
    vi.advanceTimersByTime(100);
    expect(o.fired).toEqual([]);
    expect(scheduler.ticking).toBe(true);
    expect(scheduler.dueAt).toBe(start + 1000);
    vi.advanceTimersByTime(899);
    expect(o.fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(o.fired).toEqual([{ kind: 2, at: start + 1000 }]);
    vi.advanceTimersByTime(10_000);
    expect(o.fired).toHaveLength(1);
  });

  it("fake -> real -> fake timers with a deadline pending: one live timer, which fires it once", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner<DeadlineKind>();
    scheduler.arm(new Deadline(o, DeadlineKind.Request), timing.now(), 1000);
    const fake = lastTimer(setTimeout);
    vi.useRealTimers();
    try {
      scheduler.ensureTicking(); // the fake timer's clock is gone: a real timer replaces it
      expect(setTimeout).toHaveBeenCalledTimes(2);
      const real = lastTimer(setTimeout);
      expect(real).not.toBe(fake);
      expect("_onTimeout" in real).toBe(true); // Node's own
      // Fake clear functions that do not forward Node's handles to Node (`@sinonjs/fake-timers`' default).
      vi.useFakeTimers({ toFake: [...FAKE_TIMERS], shouldClearNativeTimers: false });
      scheduler.ensureTicking(); // and a fake one replaces the real one
      expect(setTimeout).toHaveBeenCalledTimes(3);
      // The real timer was cleared by Node's own clearTimeout, although the fake one is installed now.
      expect((real as unknown as { _destroyed: boolean })._destroyed).toBe(true);
      expect(vi.getTimerCount()).toBe(1);
      expect(scheduler.holdingLoop).toBe(true);
      vi.advanceTimersByTime(scheduler.dueAt - timing.now() - 1);
      expect(o.fired).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(o.fired.map((f) => f.kind)).toEqual([DeadlineKind.Request]);
      expect(vi.getTimerCount()).toBe(0);
      expect(scheduler.size).toBe(0);
    } finally {
      scheduler.stop();
    }
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
    vi.advanceTimersByTime(1000);
    expect(o.fired.map((f) => f.kind)).toContain(1);
    scheduler.stop();
  });
});

describe("DeadlineScheduler: event-loop stalls (a wake-up more than STALL_CONFIRM_MS late)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("fires after the poll phase, from Node's own setImmediate: a deadline cancelled or re-armed before it does not fire", async () => {
    const clock = blockableClock();
    const afterPoll = vi.spyOn(timing, "afterPoll");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    const cancelled = new Deadline(o, 0);
    const rearmed = new Deadline(o, 1);
    const untouched = new Deadline(o, 2);
    for (const d of [cancelled, rearmed, untouched]) scheduler.arm(d, start, 1000);
    vi.advanceTimersByTime(999);
    clock.block(STALL_CONFIRM_MS + 1); // the loop is blocked over the due time
    vi.advanceTimersByTime(1); // the wake-up, 251 ms late: collects all three, fires none
    expect(o.fired).toEqual([]);
    expect(afterPoll).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0); // no fake immediate: a test need not advance its clock for it
    expect(scheduler.size).toBe(3);
    // The poll phase: one response arrived during the block, another request's socket moved a byte.
    scheduler.disarm(cancelled);
    scheduler.arm(rearmed, timing.now(), 1000);
    await afterPollPhase();
    expect(o.fired).toEqual([{ kind: 2, at: start + 1000 + STALL_CONFIRM_MS + 1 }]);
    expect(scheduler.size).toBe(1);
    // The re-armed one restarted from the activity.
    vi.advanceTimersByTime(999);
    expect(o.fired.map((f) => f.kind)).toEqual([2]);
    vi.advanceTimersByTime(1);
    expect(o.fired).toEqual([
      { kind: 2, at: start + 1000 + STALL_CONFIRM_MS + 1 },
      { kind: 1, at: start + 2000 + STALL_CONFIRM_MS + 1 },
    ]);
    expect(afterPoll).toHaveBeenCalledTimes(1);
    expect(scheduler.size).toBe(0);
  });

  it("a wake-up late by STALL_CONFIRM_MS or less fires at once, with no immediate", () => {
    const clock = blockableClock();
    const afterPoll = vi.spyOn(timing, "afterPoll");
    const setImmediate = vi.spyOn(timing, "setImmediate");
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 1), start, 1000);
    vi.advanceTimersByTime(999);
    clock.block(STALL_CONFIRM_MS);
    vi.advanceTimersByTime(1);
    expect(o.fired).toEqual([{ kind: 1, at: start + 1000 + STALL_CONFIRM_MS }]);
    expect(afterPoll).not.toHaveBeenCalled();
    expect(setImmediate).not.toHaveBeenCalled();
    expect(scheduler.size).toBe(0);
  });

  it("only the deadlines that are more than STALL_CONFIRM_MS overdue wait: the others of the same wake-up fire at once", async () => {
    const clock = blockableClock();
    const scheduler = new DeadlineScheduler();
    const o = owner();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 1), start, 1000);
    vi.advanceTimersByTime(999);
    clock.block(STALL_CONFIRM_MS + 1);
    // Armed during the block, due half-way into it: at the wake-up it is only about half STALL_CONFIRM_MS overdue.
    scheduler.arm(new Deadline(o, 2), start, 1000 + STALL_CONFIRM_MS / 2);
    vi.advanceTimersByTime(1);
    expect(o.fired.map((f) => f.kind)).toEqual([2]);
    await afterPollPhase();
    expect(o.fired.map((f) => f.kind)).toEqual([2, 1]);
  });

  it("stop() while the confirmation is pending: the immediate is cleared and nothing fires", async () => {
    const clock = blockableClock();
    const scheduler = new DeadlineScheduler();
    const o = owner();
    scheduler.arm(new Deadline(o, 1), timing.now(), 1000);
    const before = pendingImmediates();
    clock.block(1000 + STALL_CONFIRM_MS + 1);
    vi.advanceTimersByTime(1000);
    expect(scheduler.size).toBe(1);
    expect(pendingImmediates()).toBe(before + 1); // the confirmation, on Node's own queue
    scheduler.stop();
    expect(pendingImmediates()).toBe(before); // cleared by Node's own clearImmediate
    await afterPollPhase();
    expect(o.fired).toEqual([]);
    expect(scheduler.size).toBe(0);
  });
});

describe("DeadlineScheduler: keeping the process alive", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("every DeadlineKind holds the loop while armed, and lets go once it is cancelled", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner<DeadlineKind>();
    for (const kind of Object.values(DeadlineKind)) {
      const d = new Deadline(o, kind);
      scheduler.arm(d, timing.now(), 1000);
      expect([kind, scheduler.holdingLoop, lastTimer(setTimeout).hasRef()]).toEqual([kind, true, true]);
      scheduler.disarm(d);
      // The same timer (left to lapse), unref'd.
      expect([kind, scheduler.holdingLoop, lastTimer(setTimeout).hasRef()]).toEqual([kind, false, false]);
    }
    scheduler.stop();
  });

  it("a holding deadline armed behind an unref'd timer refs that timer without re-arming it; it is unref'd after it fired", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner<DeadlineKind | number>();
    const start = timing.now();
    scheduler.arm(new Deadline(o, 0), start, 100); // an inactivity watch: does not hold
    const timer = lastTimer(setTimeout);
    expect(timer.hasRef()).toBe(false);
    scheduler.arm(new Deadline(o, DeadlineKind.Acquire), start, 500);
    scheduler.arm(new Deadline(o, 0), start, 1000);
    expect(setTimeout).toHaveBeenCalledTimes(1);
    expect(timer.hasRef()).toBe(true);
    vi.advanceTimersByTime(100);
    // Re-armed for the acquisition deadline: still held.
    expect(lastTimer(setTimeout).hasRef()).toBe(true);
    vi.advanceTimersByTime(400);
    expect(o.fired.map((f) => f.kind)).toEqual([0, DeadlineKind.Acquire]);
    // Only the watch is left: the timer armed for it keeps nothing alive.
    expect(setTimeout).toHaveBeenCalledTimes(3);
    expect(lastTimer(setTimeout).hasRef()).toBe(false);
    expect(scheduler.holdingLoop).toBe(false);
    expect(scheduler.ticking).toBe(true);
    scheduler.stop();
  });

  it("a holding deadline awaiting its stall confirmation keeps the timer ref'd until it fires", async () => {
    const clock = blockableClock();
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    const o = owner<DeadlineKind | number>();
    const start = timing.now();
    scheduler.arm(new Deadline(o, DeadlineKind.Request), start, 1000);
    scheduler.arm(new Deadline(o, 0), start, 5000);
    clock.block(1000 + STALL_CONFIRM_MS + 1);
    vi.advanceTimersByTime(1000);
    expect(o.fired).toEqual([]);
    // Re-armed for the watch while the request deadline is expiring: held.
    expect(setTimeout).toHaveBeenCalledTimes(2);
    expect(lastTimer(setTimeout).hasRef()).toBe(true);
    expect(scheduler.holdingLoop).toBe(true);
    await afterPollPhase();
    expect(o.fired.map((f) => f.kind)).toEqual([DeadlineKind.Request]);
    expect(lastTimer(setTimeout).hasRef()).toBe(false);
    expect(scheduler.holdingLoop).toBe(false);
    scheduler.stop();
  });

  it("never refs the timer for deadlines of other kinds or for the owner tick", () => {
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler(() => true, 100);
    const o = owner<unknown>();
    scheduler.ensureTicking();
    const start = timing.now();
    // Numbers (the scheduler's own tests), an inactivity watcher object, a string that is not a DeadlineKind.
    const kinds: unknown[] = [0, 7, { idleLimitMs: 300 }, "idle"];
    for (const [i, kind] of kinds.entries()) scheduler.arm(new Deadline(o, kind), start, 150 + 200 * i);
    for (let t = 0; t < 1000; t += 50) {
      vi.advanceTimersByTime(50);
      expect(scheduler.holdingLoop).toBe(false);
    }
    expect(o.fired).toHaveLength(kinds.length);
    expect(setTimeout.mock.calls.length).toBeGreaterThan(10);
    expect(allTimers(setTimeout).filter((t) => t.hasRef())).toEqual([]);
    scheduler.stop();
  });

  it("with real timers: Node's timer is ref'd while a request deadline is armed, unref'd once it is cancelled", () => {
    vi.useRealTimers();
    const setTimeout = vi.spyOn(timing, "setTimeout");
    const scheduler = new DeadlineScheduler();
    try {
      const d = new Deadline(owner<DeadlineKind>(), DeadlineKind.Request);
      scheduler.arm(d, timing.now(), 60_000);
      const timer = lastTimer(setTimeout);
      expect("_onTimeout" in timer).toBe(true);
      expect(timer.hasRef()).toBe(true);
      scheduler.disarm(d);
      expect(timer.hasRef()).toBe(false);
      scheduler.arm(d, timing.now(), 60_000);
      expect(setTimeout).toHaveBeenCalledTimes(1);
      expect(timer.hasRef()).toBe(true);
    } finally {
      scheduler.stop();
    }
    expect((lastTimer(setTimeout) as unknown as { _destroyed: boolean })._destroyed).toBe(true);
  });
});
