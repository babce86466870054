/**
 * `UndiciHttpHandler.destroy()` ends requests with `NodeHttpHandler`'s `HandlerDestroyedError`, never undici's
 * `ClientDestroyedError`. undici's pools are destroyed with one marker (`DESTROYED_BY_HANDLER`); each request maps it
 * to an error of its own, since the SDK decorates errors with `$metadata`.
 */
import { handlerDestroyedError as buildHandlerDestroyedError } from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";

/** A `HandlerDestroyedError` saying `where` the request was, prefixed with this package's name. @internal */
export function handlerDestroyedError(where: string): Error {
  return buildHandlerDestroyedError(PACKAGE_PREFIX, where);
}

/** The marker error `destroy()` passes to undici's `Dispatcher.destroy(error)`. @internal */
export const DESTROYED_BY_HANDLER: Error = handlerDestroyedError("while the request was in flight");
