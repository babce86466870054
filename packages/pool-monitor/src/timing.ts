/** The registry key of the one `timing` object. */
const TIMING_KEY = Symbol.for("@sockeye/timing");

/** The clock and timer functions (see `timing`). @public */
export type Timing = ReturnType<typeof createTiming>;

/**
 * Clock and timer seam, shared by `@sockeye/pool-monitor` and `@sockeye/node-http-handler` (one seam, not two).
 *
 * The handlers' and the monitor's clock reads and timers go through this object, so that
 * `vi.useFakeTimers({ toFake: [...] })` drives them and specs can spy on one object. (The empty-stats snapshot of a
 * handler without telemetry stamps `takenAt` with `performance.now()` directly: the same clock, read once.) Globals are resolved at call
 * time, never captured at module load: a monitor or handler created under fake timers must see the fake
 * `performance`, and one created later under real timers the real one. Exported so tests and an embedding handler
 * read the same clock (`startedAt` given to `trackRequest()` must come from it).
 *
 * One instance per process: both entry points of this package (`.` and `./internal`, each its own bundle) and a
 * CommonJS and an ESM copy loaded side by side share the object registered under `Symbol.for("@sockeye/timing")`,
 * so a spy or a seam override is seen by every caller.
 *
 * @public
 */
export const timing: Timing = ((globalThis as { [TIMING_KEY]?: Timing })[TIMING_KEY] ??= createTiming());

function createTiming() {
  return {
    /** Monotonic milliseconds (`performance.now()`). */
    now: (): number => performance.now(),
    /** Wall-clock milliseconds (`Date.now()`); only for contracts defined on wall time (upstream's warning stamp). */
    wallNow: (): number => Date.now(),
    /** `setTimeout`, resolved at call time. */
    setTimeout: <A extends unknown[]>(
      fn: (...args: A) => void,
      ms: number,
      ...args: A
    ): ReturnType<typeof setTimeout> => setTimeout(fn, ms, ...args),
    /** `clearTimeout`, resolved at call time. */
    clearTimeout: (handle: ReturnType<typeof setTimeout> | undefined): void => clearTimeout(handle),
    /** `setInterval`, resolved at call time. */
    setInterval: (fn: () => void, ms: number): ReturnType<typeof setInterval> => setInterval(fn, ms),
    /** `clearInterval`, resolved at call time. */
    clearInterval: (handle: ReturnType<typeof setInterval> | undefined): void => clearInterval(handle),
    /** `setImmediate`, resolved at call time. */
    setImmediate: (fn: () => void): ReturnType<typeof setImmediate> => setImmediate(fn),
    /** `clearImmediate`, resolved at call time. */
    clearImmediate: (handle: ReturnType<typeof setImmediate> | undefined): void => clearImmediate(handle),
  };
}
