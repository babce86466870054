/**
 * The one door through which the handler calls code it does not own: loggers (`warn`) and user callbacks. A
 * throwing logger or callback must never break the handler's own bookkeeping, e.g. stop the other deadlines that
 * expired in the same tick from firing (they are fired in one loop). Its exception is swallowed: there is nowhere
 * safe to report it (the logger may be the thing that threw).
 * @internal
 */
export function guardedCall<A>(fn: ((this: unknown, arg: A) => unknown) | undefined, thisArg: unknown, arg: A): void {
  if (typeof fn !== "function") return;
  try {
    fn.call(thisArg, arg);
  } catch {
    // Isolated on purpose: see the header comment.
  }
}

/**
 * `logger.warn(message)` through `guardedCall`: nothing happens when the logger or its `warn` is missing or throws.
 * @internal
 */
export function guardedWarn(logger: { warn?: (message: string) => unknown } | undefined, message: string): void {
  if (logger != null)
    guardedCall(logger.warn as ((this: unknown, arg: string) => unknown) | undefined, logger, message);
}
