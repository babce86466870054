/**
 * The `request:finished` event of one HTTP/2 stream request (see `@sockeye/pool-monitor`'s `RequestFinishedEvent`),
 * built where `Http2StreamRequest` counts its outcome, only when someone listens. A request that waited for a stream
 * slot and never got one (no session entry) reports its whole wait as `queuedMs`. Reads the request's own fields: no
 * extra state beyond the response headers and the rejection error it keeps for this.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import { CHANNEL_NAMES, type RequestFinishedEvent, type RequestOutcome } from "@sockeye/pool-monitor";
import { requestFinishedEvent, schemeOf } from "@sockeye/pool-monitor/internal";
import type { HttpRequest } from "@smithy/protocol-http";
import type { IncomingHttpHeaders } from "node:http2";

/** What the event reads of a finished stream request (`Http2StreamRequest`). @internal */
export interface FinishedHttp2Request {
  readonly request: HttpRequest;
  readonly responseHeaders: IncomingHttpHeaders | undefined;
  readonly startedAt: number;
  readonly wasQueued: boolean;
  /** The session it got (`undefined`: it never got one). */
  readonly entry: unknown;
  readonly origin: { readonly name: string };
}

/** `sockeye:request:finished`. @internal */
export const requestFinishedChannel = diagnosticsChannel.channel(CHANNEL_NAMES.requestFinished);

/**
 * @param r - the finished request.
 * @param origin - its telemetry origin key (`_OTHER` past `maxOrigins`).
 * @param outcome - how it was counted.
 * @param error - the error its caller saw (the rejection, or the body's error after the response), if any.
 * @param now - `timing.now()` ms.
 * @internal
 */
export function http2RequestFinishedEvent(
  r: FinishedHttp2Request,
  origin: string,
  outcome: RequestOutcome,
  error: unknown,
  now: number
): RequestFinishedEvent {
  const request = r.request;
  const headers = request.headers;
  const response = r.responseHeaders;
  const durationMs = now - r.startedAt;
  return requestFinishedEvent({
    origin,
    scheme: schemeOf(r.origin.name),
    method: request.method,
    statusCode: response?.[":status"],
    outcome,
    error,
    durationMs,
    protocolVersion: "2",
    requestBodySize: headers?.["content-length"] ?? headers?.["Content-Length"],
    responseBodySize: response?.["content-length"],
    queuedMs: r.wasQueued && r.entry === undefined ? durationMs : null,
  });
}
