/**
 * The error a request rejects with (or its response body fails with) when `UndiciHttpHandler.destroy()` ends it:
 * the same `name` (`HandlerDestroyedError`) and `code` (`ERR_HANDLER_DESTROYED`) as `NodeHttpHandler`'s, so one
 * `catch` serves both handlers; never undici's `ClientDestroyedError` (`UND_ERR_DESTROYED`).
 *
 * `destroy()` hands undici one marker error (`DESTROYED_BY_HANDLER`) to destroy its pools with; each request maps
 * it to its own error object (the SDK decorates errors with `$metadata`, so rejections must not share one).
 */
import { HANDLER_DESTROYED_ERROR_CODE, HANDLER_DESTROYED_ERROR_NAME } from "@sockeye/node-http-handler/internal";
import { PACKAGE_PREFIX } from "./constants";

/**
 * A `HandlerDestroyedError` saying where the request was (`where`, e.g. "while the request was in flight").
 * @internal
 */
export function handlerDestroyedError(where: string): Error {
  const error = new Error(
    `${PACKAGE_PREFIX} - the handler was destroyed (destroy() was called) ${where}; no new connection is opened for it.`
  ) as Error & { code?: string };
  error.name = HANDLER_DESTROYED_ERROR_NAME;
  error.code = HANDLER_DESTROYED_ERROR_CODE;
  return error;
}

/** The marker error `destroy()` passes to undici's `Dispatcher.destroy(error)`. @internal */
export const DESTROYED_BY_HANDLER: Error = handlerDestroyedError("while the request was in flight");
