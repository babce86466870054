/**
 * OpenTelemetry's own HTTP instrumentations beside the bridge (issue 34). With `@opentelemetry/instrumentation-http`
 * or `-undici` registered on the bridge's MeterProvider, a copy of `http.client.request.duration` from both made
 * `@opentelemetry/exporter-prometheus` write two `http_client_request_duration` families, a page Prometheus rejects.
 * `requestDuration: "auto"` (the default) leaves to an instrumentation the requests it records.
 *
 * Each case runs like a user's application, in a child process: `node --require otel-preload.cjs` (a MeterProvider
 * read by a PrometheusExporter, the REAL instrumentations registered with `registerInstrumentations`), then
 * `coexistence-app.mjs`, which drives the BUILT handlers against loopback TLS servers on 127.0.0.1 and prints the
 * Prometheus page. Every page goes through Prometheus's own text parser (`scripts/prom-check`, Go `expfmt`).
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, test as it } from "vitest";
import { type PromFamily, promCheck } from "./prom-check";

const REPO_ROOT = join(__dirname, "..", "..", "..");
const PRELOAD = join(__dirname, "fixtures", "otel-preload.cjs");
const APP = join(__dirname, "fixtures", "coexistence-app.mjs");
/** Requests per server in the app; NodeHttpHandler's go to an https and an http server. */
const REQUESTS = 3;

type Handler = "NodeHttpHandler" | "NodeHttp2Handler" | "UndiciHttpHandler";
const HANDLERS: Handler[] = ["NodeHttpHandler", "NodeHttp2Handler", "UndiciHttpHandler"];
const HTTP = "@opentelemetry/instrumentation-http";
const UNDICI = "@opentelemetry/instrumentation-undici";
const SOCKEYE = "@sockeye/opentelemetry";

/** Who records a handler's requests when both instrumentations are registered, as tried. */
const RECORDED_BY: Record<Handler, string> = {
  NodeHttpHandler: HTTP, // node:http and node:https, which instrumentation-http wraps
  NodeHttp2Handler: SOCKEYE, // node:http2: no OpenTelemetry instrumentation
  UndiciHttpHandler: UNDICI, // undici's diagnostics channels
};

interface AppRun {
  page: string;
  ports: Partial<Record<Handler, number[]>>;
  diag: string[];
}

/** Runs the app with `handlers` and `env` (see the fixtures' headers), OpenTelemetry preloaded by `preload`. */
async function runApp(handlers: Handler[], env: Record<string, string> = {}, preload = "--require"): Promise<AppRun> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [preload, PRELOAD, APP, handlers.join(",")], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    timeout: 20_000,
  });
  expect(stderr).toBe("");
  return JSON.parse(stdout);
}

/** `[scope, port, count]` of every series of `family` for the app's servers' ports, sorted. */
function durations(family: PromFamily | undefined, run: AppRun): Array<[string, number, number | undefined]> {
  const ports = new Set(Object.values(run.ports).flat());
  return (family?.series ?? [])
    .map((s): [string, number, number | undefined] => [s.labels.otel_scope_name, Number(s.labels.server_port), s.count])
    .filter(([, port]) => ports.has(port))
    .sort((a, b) => a[1] - b[1]);
}

/** What `durations()` is when `recordedBy` records each request of `run` once. */
function once(run: AppRun, recordedBy: (handler: Handler) => string) {
  return Object.entries(run.ports)
    .flatMap(([handler, ports]) =>
      ports.map((port): [string, number, number] => [recordedBy(handler as Handler), port, REQUESTS])
    )
    .sort((a, b) => a[1] - b[1]);
}

async function validPage(run: AppRun): Promise<Record<string, PromFamily>> {
  const result = await promCheck(run.page);
  if (!result.ok) throw new Error(`Prometheus rejects the page: ${result.error}`);
  return result.families;
}

describe("requestDuration: true (every request, the behaviour before auto)", () => {
  it.each(["NodeHttpHandler", "UndiciHttpHandler"] as const)(
    "control: %s's requests recorded by the instrumentation and the bridge make a page Prometheus rejects",
    async (handler) => {
      const run = await runApp([handler], { REQUEST_DURATION: "true" });
      expect(await promCheck(run.page)).toEqual({
        ok: false,
        error: expect.stringContaining('second HELP line for metric name "http_client_request_duration"'),
      });
      expect(run.page.match(/^# HELP http_client_request_duration /gm)).toHaveLength(2);
    }
  );

  it("NodeHttp2Handler: no instrumentation records node:http2, the bridge's copy is the only one", async () => {
    const run = await runApp(["NodeHttp2Handler"], { REQUEST_DURATION: "true" });
    const families = await validPage(run);
    expect(durations(families.http_client_request_duration, run)).toEqual(once(run, () => SOCKEYE));
  });
});

describe('requestDuration: "auto" (the default)', () => {
  it.each(HANDLERS)("%s: each request is recorded once, by whoever records it; the page parses", async (handler) => {
    const run = await runApp([handler]);
    const families = await validPage(run);
    expect(durations(families.http_client_request_duration, run)).toEqual(once(run, () => RECORDED_BY[handler]));
    // Only http.client.request.duration is shared: the bridge's other instruments are there as without them.
    expect(families.http_client_open_connections.series.map((s) => s.labels.otel_scope_name)).toContain(SOCKEYE);
    const leftTo = run.diag.filter((line) => line.startsWith("info:"));
    if (handler === "NodeHttpHandler") {
      expect(leftTo).toEqual([
        expect.stringContaining(`of node:https requests is left to ${HTTP}`),
        expect.stringContaining(`of node:http requests is left to ${HTTP}`),
      ]);
    } else if (handler === "UndiciHttpHandler") {
      expect(leftTo).toEqual([expect.stringContaining(`of undici requests is left to ${UNDICI}`)]);
    } else {
      expect(leftTo).toEqual([]);
    }
  });

  it("NodeHttpHandler with OpenTelemetry preloaded by --import (an ESM application)", async () => {
    const run = await runApp(["NodeHttpHandler"], {}, "--import");
    const families = await validPage(run);
    expect(durations(families.http_client_request_duration, run)).toEqual(once(run, () => HTTP));
  });

  it("instrumentations registered with another MeterProvider: the bridge records every request", async () => {
    const run = await runApp(HANDLERS, { OTEL_TEST_INSTRUMENTED_PROVIDER: "other" });
    const families = await validPage(run);
    expect(durations(families.http_client_request_duration, run)).toEqual(once(run, () => SOCKEYE));
    expect(run.diag).toEqual([]);
  });

  it("instrumentations registered, then disabled: the bridge records every request", async () => {
    const run = await runApp(HANDLERS, { DISABLE_INSTRUMENTATIONS: "1" });
    const families = await validPage(run);
    expect(durations(families.http_client_request_duration, run)).toEqual(once(run, () => SOCKEYE));
    expect(run.diag).toEqual([]);
  });

  it("instrumentation-http's node:http requests beside the bridge's node:http2 ones: two scopes, one name", async () => {
    // No request is recorded twice, but the exporter writes each scope as a family of its own (as it does for
    // instrumentation-http and -undici together): the bridge warns, and a View renaming its instrument is the recipe.
    const run = await runApp(["NodeHttpHandler", "NodeHttp2Handler"], {
      OTEL_TEST_INSTRUMENTATIONS: "http",
      OTEL_TEST_RENAME_SOCKEYE_DURATION: "1",
    });
    const families = await validPage(run);
    const byPort = (a: [string, number, unknown], b: [string, number, unknown]) => a[1] - b[1];
    expect(
      [
        ...durations(families.http_client_request_duration, run),
        ...durations(families.sockeye_http_client_request_duration, run),
      ].sort(byPort)
    ).toEqual(once(run, (h) => (h === "NodeHttp2Handler" ? SOCKEYE : HTTP)));
    expect(run.diag.filter((line) => line.startsWith("warn:"))).toEqual([
      expect.stringContaining(
        `of node:http2 requests is recorded here (no OpenTelemetry instrumentation records them) while ${HTTP} records it`
      ),
    ]);
  });

  it("instrumentation-http and -undici alone make two families of one name: the exporter's, not the bridge's", async () => {
    const run = await runApp(["NodeHttpHandler", "UndiciHttpHandler"]);
    expect(run.page).not.toMatch(/^http_client_request_duration_count\{.*otel_scope_name="@sockeye\/opentelemetry"/m);
    expect(await promCheck(run.page)).toEqual({
      ok: false,
      error: expect.stringContaining('second HELP line for metric name "http_client_request_duration"'),
    });
  });
});
