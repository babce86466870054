/**
 * Which finished requests an OpenTelemetry HTTP instrumentation (http, undici) already records on the bridge's
 * `MeterProvider`: its meter exists there and it hooks the transport now. A few property reads per request.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import http from "node:http";
import https from "node:https";
import type { MeterProvider } from "@opentelemetry/api";
import type { RequestFinishedEvent } from "@sockeye/pool-monitor";

/** The instrumentation scopes that record `http.client.request.duration` for client requests. @internal */
export const HTTP_INSTRUMENTATION = "@opentelemetry/instrumentation-http";
/** @internal */
export const UNDICI_INSTRUMENTATION = "@opentelemetry/instrumentation-undici";

/** How a finished request reached the network. @internal */
export type Transport = "node:http" | "node:https" | "node:http2" | "undici";

/** The transport of a `request:finished` event: undici reports no `protocolVersion`. @internal */
export function transportOf(e: RequestFinishedEvent): Transport {
  if (e.protocolVersion === "2") return "node:http2";
  if (e.protocolVersion === null) return "undici";
  return e.scheme === "https" ? "node:https" : "node:http";
}

const undiciCreate = diagnosticsChannel.channel("undici:request:create");

/** Deepest `__original` chain walked; real chains are one or two long. */
const MAX_WRAPPERS = 8;

function isWrapped(fn: unknown): boolean {
  for (let i = 0; i < MAX_WRAPPERS && typeof fn === "function"; i++) {
    const f = fn as { __wrapped?: unknown; __original?: unknown };
    if (f.__wrapped === true) return true;
    fn = f.__original;
  }
  return false;
}

/** The `request` export of one module, with the verdict on the function seen last. */
class WrapWatch {
  private seen: unknown;
  private wrapped = false;

  constructor(private readonly mod: { request: unknown }) {}

  /** Looks `request` up now, as the handler does. */
  get(): boolean {
    const fn = this.mod.request;
    if (fn !== this.seen) {
      this.seen = fn;
      this.wrapped = isWrapped(fn);
    }
    return this.wrapped;
  }
}

/** The instrumentation scopes present on one `MeterProvider`, and which transports they hook now. @internal */
export class InstrumentedTransports {
  /** The SDK provider's meters by `name:version:schemaUrl`; `undefined` when not readable. */
  private readonly meters: Map<string, unknown> | undefined;
  private scannedSize = -1;
  private hasHttp = false;
  private hasUndici = false;
  private readonly httpRequest = new WrapWatch(http);
  private readonly httpsRequest = new WrapWatch(https);

  constructor(provider: MeterProvider) {
    const states = (provider as { _sharedState?: { meterSharedStates?: unknown } })._sharedState?.meterSharedStates;
    this.meters = states instanceof Map ? states : undefined;
  }

  /** Not an SDK `MeterProvider` whose meters can be listed: `recorder()` is always `null`. */
  get unreadable(): boolean {
    return this.meters === undefined;
  }

  /** The instrumentation that records `transport`'s requests on this provider now, else `null`. */
  recorder(transport: Transport): string | null {
    if (this.meters === undefined) return null;
    if (this.meters.size !== this.scannedSize) this.scan(this.meters);
    switch (transport) {
      case "node:http":
        return this.hasHttp && this.httpRequest.get() ? HTTP_INSTRUMENTATION : null;
      case "node:https":
        return this.hasHttp && this.httpsRequest.get() ? HTTP_INSTRUMENTATION : null;
      case "undici":
        return this.hasUndici && undiciCreate.hasSubscribers ? UNDICI_INSTRUMENTATION : null;
      case "node:http2":
        return null;
    }
  }

  /** An instrumentation that records some transport on this provider now, else `null`. */
  anyRecorder(): string | null {
    return this.recorder("node:https") ?? this.recorder("node:http") ?? this.recorder("undici");
  }

  private scan(meters: Map<string, unknown>): void {
    this.scannedSize = meters.size;
    this.hasHttp = this.hasUndici = false;
    for (const id of meters.keys()) {
      if (id.startsWith(`${HTTP_INSTRUMENTATION}:`)) this.hasHttp = true;
      else if (id.startsWith(`${UNDICI_INSTRUMENTATION}:`)) this.hasUndici = true;
    }
  }
}
