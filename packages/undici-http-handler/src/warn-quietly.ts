import type { Logger } from "@smithy/types";

/**
 * Logs `message` with the logger's `warn` (the console's when there is no logger); a missing or throwing `warn` is
 * ignored: a warning never affects a request or the handler.
 * @internal
 */
export function warnQuietly(logger: Logger | undefined, message: string): void {
  try {
    (logger ?? console)?.warn?.(message);
  } catch {
    // A throwing logger affects nothing.
  }
}
