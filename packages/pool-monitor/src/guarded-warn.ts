/**
 * The one door through which a handler calls a logger it does not own. A throwing logger must never break the
 * handler's own bookkeeping, e.g. stop the other deadlines that expired in the same tick from firing (they are fired
 * in one loop). Its exception is swallowed: there is nowhere safe to report it (the logger may be the thing that
 * threw).
 */

/**
 * `logger.warn(message)`, with the logger as `this`: nothing happens when the logger or its `warn` is missing or
 * throws.
 * @internal
 */
export function guardedWarn(logger: { warn?: (message: string) => unknown } | null | undefined, message: string): void {
  try {
    logger?.warn?.(message);
  } catch {
    // Isolated on purpose: see the header comment.
  }
}
