const TIMING_KEY = Symbol.for("@sockeye/timing");

/** The clock and timer functions (see `timing`). @public */
export type Timing = ReturnType<typeof createTiming>;

/**
 * The clock and timer seam every handler and monitor goes through: globals are resolved at call time, so fake timers
 * drive them. One instance per process under `Symbol.for("@sockeye/timing")`, shared by every copy of the package.
 * The `startedAt` given to `trackRequest()` must come from `timing.now()`. @public
 */
export const timing: Timing = registered();

/** The registered `timing`; members missing from an older copy's (registered first) are added to it. */
function registered(): Timing {
  const registry = globalThis as { [TIMING_KEY]?: Timing };
  const mine = createTiming();
  const first = registry[TIMING_KEY];
  if (first === undefined) return (registry[TIMING_KEY] = mine);
  for (const [key, value] of Object.entries(mine)) if (!(key in first)) Object.assign(first, { [key]: value });
  return first;
}

type Fn = (...args: any[]) => any;

/** `@sinonjs/fake-timers` (behind vitest's and Jest's fake timers) puts its clock on the functions it installs. */
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
 * Clears `handle` with the implementation that made it (Node's handles carry `own`): a fake immediate given to Node's
 * `clearImmediate` corrupts its queue, and a real handle given to a fake stays armed.
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
    setTimeout: <A extends unknown[]>(
      fn: (...args: A) => void,
      ms: number,
      ...args: A
    ): ReturnType<typeof setTimeout> => setTimeout(fn, ms, ...args),
    clearTimeout: (handle: ReturnType<typeof setTimeout> | undefined): void =>
      clearWith(handle, "_onTimeout", nativeClearTimeout, clearTimeout),
    setInterval: (fn: () => void, ms: number): ReturnType<typeof setInterval> => setInterval(fn, ms),
    clearInterval: (handle: ReturnType<typeof setInterval> | undefined): void =>
      clearWith(handle, "_onTimeout", nativeClearInterval, clearInterval),
    setImmediate: (fn: () => void): ReturnType<typeof setImmediate> => setImmediate(fn),
    clearImmediate: (handle: ReturnType<typeof setImmediate> | undefined): void =>
      clearWith(handle, "_onImmediate", nativeClearImmediate, clearImmediate),
    /** Node's own `setImmediate` even under fake timers: work after the poll phase must not wait for a test's clock. */
    afterPoll: (fn: () => void): ReturnType<typeof setImmediate> =>
      (nativeSetImmediate !== undefined && isFake(setImmediate) ? nativeSetImmediate : setImmediate)(fn),
  };
}
