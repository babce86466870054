/**
 * `requestDuration` through `registerPoolMetrics()`, in process: events of the three transports fed to a real SDK
 * MeterProvider beside the real instrumentation-undici (it needs no require hook), and what the bridge tells OpenTelemetry's
 * `diag` logger. The instrumentations with real requests: test/instrumentation-coexistence.integ.spec.ts.
 */
import { DiagLogLevel, diag } from "@opentelemetry/api";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { type Histogram, MeterProvider } from "@opentelemetry/sdk-metrics";
import { type PoolEvent, PoolMonitor, type RequestFinishedEvent } from "@sockeye/pool-monitor";
import { afterEach, expect, test as it } from "vitest";
import { registerPoolMetrics } from "./register-pool-metrics";
import { PullReader } from "./pull-reader.mock";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** One finished request per transport: undici (`protocolVersion` null), node:http2, node:https. */
const EVENTS: RequestFinishedEvent[] = (["undici", "h2", "h1", "undici"] as const).map((kind, i) => ({
  type: "request:finished",
  origin: `https://${kind}.example:443`,
  scheme: "https",
  method: "GET",
  statusCode: 200,
  outcome: "completed",
  errorType: null,
  durationMs: 10 + i,
  protocolVersion: kind === "undici" ? null : kind === "h2" ? "2" : "1.1",
  requestBodySize: null,
  responseBodySize: null,
  queuedMs: null,
}));

/** Feeds `EVENTS` to a bridge on a provider where instrumentation-undici records; returns counts by host and diag. */
async function run(requestDuration: boolean | "auto" | undefined) {
  const messages: string[] = [];
  const keep = (level: string) => (message: string) => messages.push(`${level}: ${message}`);
  const ignore = () => {};
  diag.setLogger(
    { error: keep("error"), warn: keep("warn"), info: keep("info"), debug: ignore, verbose: ignore },
    DiagLogLevel.INFO
  );
  cleanups.push(() => diag.disable());
  const reader = new PullReader();
  const provider = new MeterProvider({ readers: [reader] });
  cleanups.push(() => provider.shutdown());
  const undici = new UndiciInstrumentation();
  cleanups.push(() => undici.disable());
  undici.setMeterProvider(provider);

  const listeners: ((e: PoolEvent) => void)[] = [];
  const stats = new PoolMonitor().getStats();
  const source = {
    getStats: () => stats,
    subscribe(l: (e: PoolEvent) => void) {
      listeners.push(l);
      return () => {};
    },
  };
  const registration = registerPoolMetrics(source, { meterProvider: provider, requestDuration });
  cleanups.push(() => registration.unregister());
  for (const e of EVENTS) for (const l of listeners) l(e);

  const { resourceMetrics } = await reader.collect();
  const counts: Record<string, number> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    if (scope.scope.name !== "@sockeye/opentelemetry") continue;
    for (const m of scope.metrics) {
      if (m.descriptor.name !== "http.client.request.duration") continue;
      for (const p of m.dataPoints) counts[String(p.attributes["server.address"])] = (p.value as Histogram).count;
    }
  }
  return { counts, messages };
}

it.each([undefined, "auto"] as const)(
  "requestDuration %s: leaves undici requests to instrumentation-undici, records the others, says so once",
  async (option) => {
    const { counts, messages } = await run(option);
    expect(counts).toEqual({ "h2.example": 1, "h1.example": 1 });
    expect(messages).toEqual([
      'info: @sockeye/opentelemetry - http.client.request.duration of undici requests is left to @opentelemetry/instrumentation-undici, which records them on the same MeterProvider (requestDuration: "auto"; true would record a second copy).',
      "warn: @sockeye/opentelemetry - http.client.request.duration of node:http2 requests is recorded here (no OpenTelemetry instrumentation records them) while @opentelemetry/instrumentation-undici records it for other requests on the same MeterProvider: @opentelemetry/exporter-prometheus writes the two scopes as two families of one name, which Prometheus rejects. For a Prometheus page, rename this meter's instrument with a View or set requestDuration: false.",
    ]);
  }
);

it("requestDuration true records every request, without consulting the instrumentations", async () => {
  expect(await run(true)).toEqual({ counts: { "undici.example": 2, "h2.example": 1, "h1.example": 1 }, messages: [] });
});

it("requestDuration false records none", async () => {
  expect(await run(false)).toEqual({ counts: {}, messages: [] });
});
