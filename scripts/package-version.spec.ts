/**
 * The version a published package reports at runtime is its package.json version, compiled in at build time (tsup
 * `define`), so a release cannot leave a stale hard-coded one behind: the OpenTelemetry meter of
 * `@sockeye/opentelemetry` (instrumentation scope `@sockeye/opentelemetry`, version = package version), in the built
 * CJS and ESM output, read back from a real SDK `MeterProvider`.
 * Reads the package's `dist/` (built by `npm test` before vitest runs).
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { PoolMonitor } from "@sockeye/pool-monitor";
import { describe, expect, it } from "vitest";
import { publishedPackages } from "./lib/published-packages.mjs";

const require = createRequire(import.meta.url);

class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const otel = publishedPackages().find((p) => p.name === "@sockeye/opentelemetry")!;
const version: string = JSON.parse(readFileSync(join(otel.dir, "package.json"), "utf8")).version;

/** The instrumentation scopes (name@version) of the meters `registerPoolMetrics` of `mod` creates. */
async function meterScopes(mod: { registerPoolMetrics: typeof import("@sockeye/opentelemetry").registerPoolMetrics }) {
  const reader = new PullReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const monitor = new PoolMonitor();
  const registration = mod.registerPoolMetrics(monitor, { meterProvider });
  // One real request on loopback, so the pool has an origin and the observers report data points.
  const server = http.createServer((_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ host: "127.0.0.1", port, agent }, (res) => res.resume().on("end", resolve));
      monitor.trackRequest(req, agent, `http://127.0.0.1:${port}`, performance.now());
      req.on("error", reject);
    });
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics.map((s) => `${s.scope.name}@${s.scope.version}`);
  } finally {
    registration.unregister();
    monitor.destroy();
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
    await meterProvider.shutdown();
  }
}

describe("@sockeye/opentelemetry's meter version is its package.json version", () => {
  it("has a real version to compare with", () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("CJS build", async () => {
    expect(await meterScopes(require(join(otel.dir, otel.manifest.main)))).toEqual([
      `@sockeye/opentelemetry@${version}`,
    ]);
  });

  it("ESM build", async () => {
    const esm = await import(pathToFileURL(join(otel.dir, otel.manifest.module)).href);
    expect(await meterScopes(esm)).toEqual([`@sockeye/opentelemetry@${version}`]);
  });
});
