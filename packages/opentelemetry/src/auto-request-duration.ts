/**
 * `requestDuration: "auto"` (the default): record `http.client.request.duration` for a finished request unless an
 * OpenTelemetry HTTP instrumentation records it on the same `MeterProvider` (see `instrumented-transports.ts` for
 * which requests each records, and how that is seen). Decided per request, so an instrumentation registered, enabled
 * or disabled after `registerPoolMetrics()` is followed from the next request on.
 *
 * It says what it decided through OpenTelemetry's `diag` logger (silent unless the application sets one), once per
 * registration each:
 * - info, per transport, when it leaves that transport's requests to an instrumentation;
 * - warning, when it records requests while an instrumentation records the same metric for others on the provider:
 *   that is no second copy of any request, but `@opentelemetry/exporter-prometheus` writes the two scopes as two
 *   families of one name (as it does for instrumentation-http and instrumentation-undici together), which Prometheus
 *   rejects;
 * - warning, when the provider cannot be read (not an `@opentelemetry/sdk-metrics` `MeterProvider`): it records.
 */
import { diag, type MeterProvider } from "@opentelemetry/api";
import type { RequestFinishedEvent } from "@sockeye/pool-monitor";
import { InstrumentedTransports, type Transport, transportOf } from "./instrumented-transports";

const PKG = "@sockeye/opentelemetry";

/**
 * A per-request decision for `requestDuration: "auto"` on `provider`.
 * @returns `true` when the request's duration is to be recorded by the bridge.
 * @internal
 */
export function autoRequestDuration(provider: MeterProvider): (e: RequestFinishedEvent) => boolean {
  const transports = new InstrumentedTransports(provider);
  const leftTo = new Set<Transport>();
  let warned = false;
  return (e) => {
    const transport = transportOf(e);
    const recorder = transports.recorder(transport);
    if (recorder !== null) {
      if (!leftTo.has(transport)) {
        leftTo.add(transport);
        diag.info(
          `${PKG} - http.client.request.duration of ${transport} requests is left to ${recorder}, which records them on the same MeterProvider (requestDuration: "auto"; true would record a second copy).`
        );
      }
      return false;
    }
    if (!warned) {
      if (transports.unreadable) {
        warned = true;
        diag.warn(
          `${PKG} - cannot tell whether an OpenTelemetry HTTP instrumentation records http.client.request.duration on this MeterProvider (not an @opentelemetry/sdk-metrics MeterProvider): recording it. Set requestDuration: false if one does.`
        );
      } else {
        const other = transports.anyRecorder();
        if (other !== null) {
          warned = true;
          diag.warn(
            `${PKG} - http.client.request.duration of ${transport} requests is recorded here (no OpenTelemetry instrumentation records them) while ${other} records it for other requests on the same MeterProvider: @opentelemetry/exporter-prometheus writes the two scopes as two families of one name, which Prometheus rejects. For a Prometheus page, rename this meter's instrument with a View or set requestDuration: false.`
          );
        }
      }
    }
    return true;
  };
}
