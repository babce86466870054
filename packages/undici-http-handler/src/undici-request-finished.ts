/**
 * The `request:finished` event of one `UndiciHttpHandler` request (see `@sockeye/pool-monitor`'s
 * `RequestFinishedEvent`), built where the request finishes, only when someone listens. `protocolVersion` is `null`:
 * undici may negotiate HTTP/2 (`allowH2`, or a caller's dispatcher) and does not say which version it used.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import type { HttpResponse } from "@smithy/protocol-http";
import { CHANNEL_NAMES, type RequestFinishedEvent, type RequestOutcome } from "@sockeye/pool-monitor";
import { requestFinishedEvent, schemeOf, timing } from "@sockeye/pool-monitor/internal";
import type { DispatchOptionsLike } from "./dispatcher-like";
import type { OriginPoolState } from "./origin-pool-state";

/** `sockeye:request:finished`. @internal */
export const requestFinishedChannel = diagnosticsChannel.channel(CHANNEL_NAMES.requestFinished);

/**
 * @param o - the request's origin state (its key is `_OTHER` past `maxOrigins`).
 * @param options - what was (or would have been) dispatched: the origin's scheme, method and headers.
 * @param response - the response handed to the caller, if any.
 * @param outcome - how the request is counted.
 * @param error - the error the caller saw (the rejection, or the body's error), if any.
 * @param startedAt - `timing.now()` ms at `handle()`.
 * @param leftQueue - it left its origin's queue without a connection: its whole wait is its time in queue.
 * @internal
 */
export function undiciRequestFinishedEvent(
  o: OriginPoolState,
  options: DispatchOptionsLike | undefined,
  response: HttpResponse | undefined,
  outcome: RequestOutcome,
  error: unknown,
  startedAt: number,
  leftQueue: boolean
): RequestFinishedEvent {
  const headers = options?.headers;
  const durationMs = timing.now() - startedAt;
  return requestFinishedEvent({
    origin: o.origin,
    scheme: schemeOf(options?.origin ?? o.origin),
    method: options?.method,
    statusCode: response?.statusCode,
    outcome,
    error,
    durationMs,
    protocolVersion: null,
    requestBodySize: headers === undefined ? undefined : (headers["content-length"] ?? headers["Content-Length"]),
    responseBodySize: response?.headers["content-length"],
    queuedMs: leftQueue ? durationMs : null,
  });
}
