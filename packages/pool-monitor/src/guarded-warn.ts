/**
 * The one door through which a handler calls a logger it does not own: a throwing logger must not break the
 * handler's bookkeeping (e.g. the other deadlines fired in the same loop).
 */
/** `logger.warn(message)`; nothing happens when the logger or its `warn` is missing or throws. @internal */
export function guardedWarn(logger: { warn?: (message: string) => unknown } | null | undefined, message: string): void {
  try {
    logger?.warn?.(message);
  } catch {
    // Nowhere safe to report it: the logger may be what threw.
  }
}
