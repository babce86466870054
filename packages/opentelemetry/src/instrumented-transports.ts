/**
 * Which finished requests an OpenTelemetry HTTP instrumentation already records `http.client.request.duration` for, on
 * the `MeterProvider` the bridge writes to. `requestDuration: "auto"` leaves those requests to it: the same request
 * recorded twice is counted twice, and two instruments of one name under two scopes make
 * `@opentelemetry/exporter-prometheus` write two families of that name, a page Prometheus rejects ("second HELP line
 * for metric name").
 *
 * What each instrumentation records, as tried with the real ones (`test/instrumentation-coexistence.integ.spec.ts`):
 * - `@opentelemetry/instrumentation-http`: requests made through the `request` function of `node:http` /
 *   `node:https`, which it wraps while enabled (unless `disableOutgoingRequestInstrumentation`). That is every
 *   `NodeHttpHandler` request (the handler looks `http.request` / `https.request` up at call time) and a
 *   `PoolMonitor`'s own `node:http` requests. It does not instrument `node:http2`.
 * - `@opentelemetry/instrumentation-undici`: every request of any copy of undici, through the `undici:request:*`
 *   diagnostics channels it subscribes to while enabled: every `UndiciHttpHandler` request.
 * - No OpenTelemetry instrumentation records `NodeHttp2Handler`'s requests (`node:http2`).
 *
 * A transport counts as recorded when both hold:
 * 1. the instrumentation's meter (scope named after its package) exists on the provider, i.e. the instrumentation was
 *    registered with this provider (`registerInstrumentations({ meterProvider })`, or both use the global one). Read
 *    from the SDK `MeterProvider`'s shared state (`_sharedState.meterSharedStates`, keyed `name:version:schemaUrl`
 *    since `@opentelemetry/sdk-metrics` 1.0). A provider without it cannot be read: nothing counts as recorded there
 *    (Sockeye records, as before), which `unreadable` reports.
 * 2. it hooks the transport now: `node:http(s)`'s `request` is a shimmer wrapper (`__wrapped`, as OpenTelemetry's
 *    `InstrumentationBase._wrap` marks it) or wraps one down its `__original` chain; `undici:request:create` has
 *    subscribers. `disable()` undoes both, and the next request is recorded by Sockeye again.
 *
 * Cost per finished request: a few property reads. The meter keys are scanned again only when their number changes,
 * and a `request` function is walked only when it is not the one seen last.
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

/**
 * The transport of a `request:finished` event, from its `protocolVersion` as each handler sets it: `"1.1"` from
 * `node:http` / `node:https` (`NodeHttpHandler`, `PoolMonitor`; the scheme picks the module), `"2"` from
 * `NodeHttp2Handler`, `null` from `UndiciHttpHandler` (undici does not say which version it negotiated).
 * @internal
 */
export function transportOf(e: RequestFinishedEvent): Transport {
  if (e.protocolVersion === "2") return "node:http2";
  if (e.protocolVersion === null) return "undici";
  return e.scheme === "https" ? "node:https" : "node:http";
}

/** The channel instrumentation-undici starts every request on. */
const undiciCreate = diagnosticsChannel.channel("undici:request:create");

/** Deepest `__original` chain walked (wrappers of wrappers); real chains are one or two long. */
const MAX_WRAPPERS = 8;

/** `fn` is a shimmer wrapper, or wraps one (`__original` chain). */
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

  /** Whether the module's `request` (looked up now, as the handler does) is wrapped. */
  get(): boolean {
    const fn = this.mod.request;
    if (fn !== this.seen) {
      this.seen = fn;
      this.wrapped = isWrapped(fn);
    }
    return this.wrapped;
  }
}

/**
 * The instrumentation scopes present on one `MeterProvider`, and which transports they hook now. One per
 * `registerPoolMetrics()` call.
 * @internal
 */
export class InstrumentedTransports {
  /** The SDK provider's meters by `name:version:schemaUrl`; `undefined` when the provider is not readable. */
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

  /** The provider is not an SDK `MeterProvider` whose meters can be listed: `recorder()` is always `null`. */
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

  /**
   * An instrumentation that records some transport on this provider now (the first found), else `null`: its
   * `http.client.request.duration` then shares the name of the bridge's own.
   */
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
