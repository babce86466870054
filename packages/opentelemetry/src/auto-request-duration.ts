/**
 * `requestDuration: "auto"`: record a request's duration unless an OpenTelemetry HTTP instrumentation records it on
 * the same `MeterProvider`, decided per request. Each decision is said once per registration through `diag`.
 */
import { diag, type MeterProvider } from "@opentelemetry/api";
import type { RequestFinishedEvent } from "@sockeye/pool-monitor";
import { InstrumentedTransports, type Transport, transportOf } from "./instrumented-transports";

const PKG = "@sockeye/opentelemetry";

/** A per-request decision for `requestDuration: "auto"` on `provider`: true to record it here. @internal */
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
