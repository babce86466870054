/**
 * The `timing` seam across fake/real timer swaps: each handle is cleared by the implementation that made it, and
 * `afterPoll` is Node's own `setImmediate` whatever a test fakes. Real timers here are only ever cleared or run at
 * once (no test waits for real time to pass), except the one guard that turns a broken immediate queue into a failure
 * instead of a hang.
 */
import { afterEach, describe, expect, test as it, vi } from "vitest";
import { afterPollPhase, FAKE_TIMERS } from "./fake-timers.mock";
import { timing } from "./timing";

/** Captured before any test fakes timers. */
const realSetImmediate = setImmediate;
const realSetTimeout = setTimeout;
const realClearTimeout = clearTimeout;

/** Whether Node's own `setImmediate` still runs callbacks: "ran", or "stuck" after a 2 s guard. */
function realImmediateRuns(): Promise<"ran" | "stuck"> {
  return new Promise((resolve) => {
    const guard = realSetTimeout(() => resolve("stuck"), 2000);
    realSetImmediate(() => {
      realClearTimeout(guard);
      resolve("ran");
    });
  });
}

/** Node clears a timer by marking it destroyed (`unenroll`); a timer still armed is not. */
const destroyed = (handle: unknown) => (handle as { _destroyed?: boolean })._destroyed === true;

describe("timing", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("clearImmediate of a fake immediate after real timers are back leaves Node's setImmediate working", async () => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    let fakeRan = false;
    const fake = timing.setImmediate(() => {
      fakeRan = true;
    });
    vi.useRealTimers();
    // Handed to Node's clearImmediate, this handle would decrement the loop's count of immediates without being one
    // of them: from then on no setImmediate callback of the process would run.
    timing.clearImmediate(fake);
    expect(await realImmediateRuns()).toBe("ran");
    expect(await realImmediateRuns()).toBe("ran");
    expect(fakeRan).toBe(false);
  });

  it("clearImmediate clears a fake immediate while its fake timers are installed", () => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    const fn = vi.fn();
    timing.clearImmediate(timing.setImmediate(fn));
    expect(vi.getTimerCount()).toBe(0);
    vi.runAllTimers();
    expect(fn).not.toHaveBeenCalled();
  });

  it("clearTimeout / clearInterval of Node's own handles go to Node while fake timers are installed", () => {
    const fn = vi.fn();
    const timeout = timing.setTimeout(fn, 60_000);
    const interval = timing.setInterval(fn, 60_000);
    try {
      // As `@sinonjs/fake-timers` installs by default (vitest forwards such calls to Node unless told not to).
      vi.useFakeTimers({ toFake: [...FAKE_TIMERS], shouldClearNativeTimers: false });
      timing.clearTimeout(timeout);
      timing.clearInterval(interval);
      // The fake clear functions would have left both armed (and ref'd: the process could not exit).
      expect(destroyed(timeout)).toBe(true);
      expect(destroyed(interval)).toBe(true);
    } finally {
      realClearTimeout(timeout);
      clearInterval(interval);
    }
  });

  it("clearTimeout / clearInterval of a fake handle once real timers are back change nothing, and do not throw", () => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    const timeout = timing.setTimeout(() => {}, 1000);
    const interval = timing.setInterval(() => {}, 1000);
    const immediate = timing.setImmediate(() => {});
    vi.useRealTimers();
    expect(() => {
      timing.clearTimeout(timeout);
      timing.clearInterval(interval);
      timing.clearImmediate(immediate);
      timing.clearTimeout(undefined);
      timing.clearImmediate(undefined);
    }).not.toThrow();
  });

  it("afterPoll runs under vi.useFakeTimers() without advancing the fake clock", async () => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    const t0 = performance.now();
    let ranAt: number | undefined;
    timing.afterPoll(() => {
      ranAt = performance.now();
    });
    expect(vi.getTimerCount()).toBe(0); // not a fake immediate
    await afterPollPhase();
    expect(ranAt).toBe(t0);
  });

  it("an afterPoll handle is cancelled by clearImmediate, fake timers installed or not", async () => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS], shouldClearNativeTimers: false });
    const underFakes = vi.fn();
    timing.clearImmediate(timing.afterPoll(underFakes));
    vi.useRealTimers();
    const underReal = vi.fn();
    timing.clearImmediate(timing.afterPoll(underReal));
    await afterPollPhase();
    expect(underFakes).not.toHaveBeenCalled();
    expect(underReal).not.toHaveBeenCalled();
  });

  it("now() reads the fake clock while fake timers are installed, and the real one once they are removed", () => {
    for (let round = 0; round < 2; round++) {
      vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
      const fakeStart = performance.now();
      expect(timing.now()).toBe(fakeStart);
      vi.advanceTimersByTime(1000);
      expect(timing.now()).toBe(fakeStart + 1000);
      vi.useRealTimers();
      const before = performance.now();
      const now = timing.now();
      expect(now).toBeGreaterThanOrEqual(before);
      expect(now).toBeLessThanOrEqual(performance.now());
    }
  });

  it("now() follows fake timers that fake performance alone (as the handlers' idle-socket specs install them)", () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const fakeStart = performance.now();
    expect(timing.now()).toBe(fakeStart);
    vi.advanceTimersByTime(500);
    expect(timing.now()).toBe(fakeStart + 500);
  });

  it("afterPoll is the global setImmediate when that is not a test's fake", () => {
    const spy = vi.spyOn(globalThis, "setImmediate");
    const handle = timing.afterPoll(() => {});
    expect(spy).toHaveBeenCalledTimes(1);
    timing.clearImmediate(handle);
  });
});

describe("timing: one registered instance per process", () => {
  it("a copy loaded after one of an older version (no afterPoll) adds the missing member to the registered object", async () => {
    const { afterPoll } = timing;
    const registered = timing as Partial<typeof timing>;
    delete registered.afterPoll; // what a copy of an older version registered
    try {
      vi.resetModules();
      const again = await import("./timing.js");
      expect(again.timing).toBe(timing);
      expect(typeof timing.afterPoll).toBe("function");
    } finally {
      registered.afterPoll ??= afterPoll;
    }
  });
});
