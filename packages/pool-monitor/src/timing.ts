/**
 * Clock and interval seam.
 *
 * Every time read and every interval the monitor creates goes through this object, so that
 * `vi.useFakeTimers({ toFake: [..., "performance"] })` drives the monitor and specs can spy on it.
 * Globals are resolved at call time, never captured at module load: a monitor created under fake
 * timers must see the fake `performance`, and one created later under real timers the real one.
 * Exported so tests and an embedding handler read the same clock (`startedAt` given to
 * `trackRequest()` must come from it).
 *
 * @public
 */
export const timing = {
  /** Monotonic milliseconds (`performance.now()`). */
  now: (): number => performance.now(),
  /** `setInterval`, resolved at call time. */
  setInterval: (fn: () => void, ms: number): ReturnType<typeof setInterval> => setInterval(fn, ms),
  /** `clearInterval`, resolved at call time. */
  clearInterval: (handle: ReturnType<typeof setInterval>): void => clearInterval(handle),
};
