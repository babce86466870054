/**
 * `InstrumentedTransports` in process, with the real instrumentations on a real SDK MeterProvider (the child-process
 * suite, test/instrumentation-coexistence.integ.spec.ts, runs them as an application does, with requests).
 */
import diagnosticsChannel from "node:diagnostics_channel";
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import { createNoopMeter, type MeterProvider as ApiMeterProvider } from "@opentelemetry/api";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import type { RequestFinishedEvent } from "@sockeye/pool-monitor";
import { afterEach, describe, expect, test as it } from "vitest";
import {
  HTTP_INSTRUMENTATION,
  InstrumentedTransports,
  transportOf,
  UNDICI_INSTRUMENTATION,
} from "./instrumented-transports";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function finished(protocolVersion: "1.1" | "2" | null, scheme: "http" | "https" | null): RequestFinishedEvent {
  return {
    type: "request:finished",
    origin: `${scheme}://h:1`,
    scheme,
    method: "GET",
    statusCode: 200,
    outcome: "completed",
    errorType: null,
    durationMs: 1,
    protocolVersion,
    requestBodySize: null,
    responseBodySize: null,
    queuedMs: null,
  };
}

describe("transportOf", () => {
  it("maps each handler's protocolVersion (and scheme) to the transport it used", () => {
    expect(transportOf(finished("1.1", "https"))).toBe("node:https");
    expect(transportOf(finished("1.1", "http"))).toBe("node:http");
    expect(transportOf(finished("1.1", null))).toBe("node:http");
    expect(transportOf(finished("2", "https"))).toBe("node:http2");
    expect(transportOf(finished(null, "https"))).toBe("undici");
  });
});

describe("InstrumentedTransports", () => {
  it("is unreadable, and records nothing as covered, for a provider that is not the SDK's", () => {
    const noop: ApiMeterProvider = { getMeter: () => createNoopMeter() };
    const t = new InstrumentedTransports(noop);
    expect(t.unreadable).toBe(true);
    expect(t.recorder("node:https")).toBeNull();
    expect(t.recorder("undici")).toBeNull();
  });

  it("undici: covered while instrumentation-undici is registered with this provider and enabled", () => {
    const provider = new MeterProvider();
    const other = new MeterProvider();
    cleanups.push(
      () => provider.shutdown(),
      () => other.shutdown()
    );
    const t = new InstrumentedTransports(provider);
    expect(t.unreadable).toBe(false);
    // Someone else's subscriber alone is no instrumentation of this provider.
    const listener = () => {};
    diagnosticsChannel.subscribe("undici:request:create", listener);
    cleanups.push(() => diagnosticsChannel.unsubscribe("undici:request:create", listener));
    expect(t.recorder("undici")).toBeNull();

    const undici = new UndiciInstrumentation(); // enabled: subscribed to undici's channels
    cleanups.push(() => undici.disable());
    undici.setMeterProvider(other);
    expect(t.recorder("undici")).toBeNull();
    undici.setMeterProvider(provider);
    expect(t.recorder("undici")).toBe(UNDICI_INSTRUMENTATION);
    expect(t.anyRecorder()).toBe(UNDICI_INSTRUMENTATION);
    expect(t.recorder("node:http2")).toBeNull();
    expect(t.recorder("node:https")).toBeNull();
    diagnosticsChannel.unsubscribe("undici:request:create", listener);
    undici.disable();
    expect(t.recorder("undici")).toBeNull();
    undici.enable();
    expect(t.recorder("undici")).toBe(UNDICI_INSTRUMENTATION);
  });

  it("node:http / node:https: covered while instrumentation-http is registered with this provider and wraps request", () => {
    const provider = new MeterProvider();
    cleanups.push(() => provider.shutdown());
    const t = new InstrumentedTransports(provider);
    const original = { http: http.request, https: https.request };
    const instrumentation = new HttpInstrumentation(); // enabled: hooks require("http"), require("https")
    cleanups.push(() => instrumentation.disable());
    instrumentation.setMeterProvider(provider);
    // Registered, but node:http not required since: nothing wrapped, nothing covered.
    expect(http.request).toBe(original.http);
    expect(t.recorder("node:http")).toBeNull();
    // The next require() of each module, as any CommonJS code of the application makes, wraps its request.
    const require = createRequire(__filename);
    require("node:http");
    require("node:https");
    expect(http.request).not.toBe(original.http);
    expect(t.recorder("node:http")).toBe(HTTP_INSTRUMENTATION);
    expect(t.recorder("node:https")).toBe(HTTP_INSTRUMENTATION);
    expect(t.recorder("node:http2")).toBeNull();
    expect(t.recorder("undici")).toBeNull();
    instrumentation.disable();
    expect(http.request).toBe(original.http);
    expect(t.recorder("node:http")).toBeNull();
    expect(t.recorder("node:https")).toBeNull();
  });
});
