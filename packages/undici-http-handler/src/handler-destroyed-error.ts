/**
 * The error a request rejects with (or its response body fails with) when `UndiciHttpHandler.destroy()` ends it:
 * the same `name` (`HandlerDestroyedError`) and `code` (`ERR_HANDLER_DESTROYED`) as `NodeHttpHandler`'s, so one
 * `catch` serves both handlers; never undici's `ClientDestroyedError` (`UND_ERR_DESTROYED`).
 *
 * `destroy()` hands undici one marker error (`DESTROYED_BY_HANDLER`) to destroy its pools with; each request maps
 * it to its own error object (the SDK decorates errors with `$metadata`, so rejections must not share one).
 */
import { handlerDestroyedError as buildHandlerDestroyedError } from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";

/**
 * A `HandlerDestroyedError` saying where the request was (`where`, e.g. "while the request was in flight"): the one
 * every Sockeye handler builds (`@sockeye/pool-monitor`'s error vocabulary), prefixed with this package's name.
 * @internal
 */
export function handlerDestroyedError(where: string): Error {
  return buildHandlerDestroyedError(PACKAGE_PREFIX, where);
}

/** The marker error `destroy()` passes to undici's `Dispatcher.destroy(error)`. @internal */
export const DESTROYED_BY_HANDLER: Error = handlerDestroyedError("while the request was in flight");
