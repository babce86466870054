/**
 * The timer and clock seam of the package. Every timer and clock read goes through this object so that tests can
 * spy on it and so that vitest fake timers (installed after module load) are honoured: each function resolves the
 * global at call time, never at import time.
 * @internal
 */
export const timing = {
  setTimeout: <A extends unknown[]>(cb: (...args: A) => void, ms: number, ...args: A): NodeJS.Timeout =>
    setTimeout(cb, ms, ...args),
  clearTimeout: (id: NodeJS.Timeout | undefined): void => clearTimeout(id),
  setInterval: (cb: () => void, ms: number): NodeJS.Timeout => setInterval(cb, ms),
  clearInterval: (id: NodeJS.Timeout | undefined): void => clearInterval(id),
  setImmediate: (cb: () => void): NodeJS.Immediate => setImmediate(cb),
  /** Monotonic milliseconds (`performance.now()`). */
  now: (): number => performance.now(),
  /** Wall-clock milliseconds; used only for upstream's `checkSocketUsage` timestamp contract. */
  wallNow: (): number => Date.now(),
};
