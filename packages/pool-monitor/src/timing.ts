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
export const timing: Timing = registered();

/**
 * The registered `timing`, created by the first copy loaded. A copy of another version registered first may lack
 * members added since (`afterPoll`): they are added to it, so every caller finds them.
 */
function registered(): Timing {
  const registry = globalThis as { [TIMING_KEY]?: Timing };
  const mine = createTiming();
  const first = registry[TIMING_KEY];
  if (first === undefined) return (registry[TIMING_KEY] = mine);
  for (const [key, value] of Object.entries(mine)) if (!(key in first)) Object.assign(first, { [key]: value });
  return first;
}

type Fn = (...args: any[]) => any;

/** A function installed by `@sinonjs/fake-timers` (the engine of vitest's and Jest's fake timers) carries its clock. */
function isFake(fn: unknown): boolean {
  return (fn as { clock?: unknown } | undefined)?.clock !== undefined;
}

/** `name`'s global as this module first saw it, if that was Node's own (not a test's fake). */
function native<F extends Fn>(
  name: "setImmediate" | "clearImmediate" | "clearTimeout" | "clearInterval"
): F | undefined {
  const fn = (globalThis as unknown as Record<string, F>)[name];
  return isFake(fn) ? undefined : fn;
}

/**
 * Clears `handle` with the implementation that made it. Node's own handles carry `own` (`_onTimeout` /
 * `_onImmediate`) and go to Node's own clear function, whatever is installed now; a test's fake handle goes to the
 * installed fake, or nowhere once real timers are back (its clock is gone: nothing of it can run). Handing a fake
 * immediate to Node's `clearImmediate` would corrupt the process's immediate queue (it decrements the loop's count
 * and unlinks a node it does not own: no `setImmediate` callback runs after that), and a real handle given to a
 * fake clear function stays armed.
 */
function clearWith(handle: unknown, own: string, nativeClear: Fn | undefined, current: Fn): void {
  if (handle === undefined || handle === null) return;
  if (typeof handle === "object" && own in handle) (nativeClear ?? current)(handle);
  else if (isFake(current)) current(handle);
}

function createTiming() {
  const nativeSetImmediate = native<typeof setImmediate>("setImmediate");
  const nativeClearImmediate = native<typeof clearImmediate>("clearImmediate");
  const nativeClearTimeout = native<typeof clearTimeout>("clearTimeout");
  const nativeClearInterval = native<typeof clearInterval>("clearInterval");
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
    /** `clearTimeout` of the implementation that made `handle` (see `clearWith`). */
    clearTimeout: (handle: ReturnType<typeof setTimeout> | undefined): void =>
      clearWith(handle, "_onTimeout", nativeClearTimeout, clearTimeout),
    /** `setInterval`, resolved at call time. */
    setInterval: (fn: () => void, ms: number): ReturnType<typeof setInterval> => setInterval(fn, ms),
    /** `clearInterval` of the implementation that made `handle` (see `clearWith`). */
    clearInterval: (handle: ReturnType<typeof setInterval> | undefined): void =>
      clearWith(handle, "_onTimeout", nativeClearInterval, clearInterval),
    /** `setImmediate`, resolved at call time. */
    setImmediate: (fn: () => void): ReturnType<typeof setImmediate> => setImmediate(fn),
    /** `clearImmediate` of the implementation that made `handle` (see `clearWith`). */
    clearImmediate: (handle: ReturnType<typeof setImmediate> | undefined): void =>
      clearWith(handle, "_onImmediate", nativeClearImmediate, clearImmediate),
    /**
     * Node's own `setImmediate` even while a test fakes the global one (the global when this module loaded under
     * fakes): for work that has no time in it and must run after the poll phase, such as handing a freed socket to
     * a queued request. Faked, it would wait for the test to advance its clock, which upstream's handler never
     * asks of a test. Clear its handle with `clearImmediate` above.
     */
    afterPoll: (fn: () => void): ReturnType<typeof setImmediate> =>
      (nativeSetImmediate !== undefined && isFake(setImmediate) ? nativeSetImmediate : setImmediate)(fn),
  };
}
