import { describe, expect, test as it, vi } from "vitest";
import { PoolMonitor } from "./pool-monitor";
import { checkHandlerUpdate, resolveDefaultSocketTimeout, withUpdate } from "./resolve-shared-options";
import { resolveOptions } from "./option-rules";
import { DEFAULT_IDLE_SOCKET_TIMEOUT_MS, type ResolvedSharedOptions, SHARED_OPTIONS } from "./shared-handler-options";
import { SOCKET_MONITOR_ENV } from "./socket-monitor-mode";

const P = "@sockeye/test";
const NO_ENV: NodeJS.ProcessEnv = {};

/** The shared options resolved by their schema, as `NodeHttpHandler` resolves its options. */
const resolveSharedOptions = (options: object | null | undefined, prefix: string, env: NodeJS.ProcessEnv) =>
  resolveOptions(SHARED_OPTIONS, options, prefix, env) as unknown as ResolvedSharedOptions;

function message(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return "accepted";
}

describe("resolveSharedOptions", () => {
  it("resolves every default: nothing set is undefined, idleSocketTimeout 4000, interval, telemetry on", () => {
    const shared = resolveSharedOptions(undefined, P, NO_ENV);
    expect(shared).toEqual({
      connectionTimeout: undefined,
      requestTimeout: undefined,
      socketTimeout: undefined,
      socketAcquisitionWarningTimeout: undefined,
      socketAcquisitionTimeout: undefined,
      idleSocketTimeout: DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      connectionLifetime: undefined,
      throwOnRequestTimeout: undefined,
      logger: undefined,
      socketMonitor: "interval",
      saturation: undefined,
      telemetry: true,
      onSaturation: undefined,
      onRecovery: undefined,
    });
    expect(resolveSharedOptions(null, P, NO_ENV).idleSocketTimeout).toBe(4000);
  });

  it("normalises values (null = unset, numeric strings converted) and keeps 0 / Infinity for the handler to read", () => {
    const onSaturation = () => {};
    const logger = { warn() {} };
    const shared = resolveSharedOptions(
      {
        requestTimeout: "5000",
        connectionTimeout: 0,
        socketTimeout: Number.POSITIVE_INFINITY,
        idleSocketTimeout: null,
        connectionLifetime: 60_000,
        throwOnRequestTimeout: true,
        telemetry: false,
        logger,
        onSaturation,
        saturation: { windowSamples: 5 },
        own: "kept",
      },
      P,
      NO_ENV
    );
    expect(shared).toMatchObject({
      requestTimeout: 5000,
      connectionTimeout: 0,
      socketTimeout: Number.POSITIVE_INFINITY,
      idleSocketTimeout: DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      connectionLifetime: 60_000,
      throwOnRequestTimeout: true,
      telemetry: false,
      logger,
      onSaturation,
      saturation: { windowSamples: 5 },
    });
    // The handler's own options come back unchecked.
    expect(shared).toMatchObject({ own: "kept" });
  });

  it("socketMonitor: the option, else the environment variable, else interval; a bad one names its source", () => {
    expect(
      resolveSharedOptions({ socketMonitor: "off" }, P, { [SOCKET_MONITOR_ENV]: "per-request" }).socketMonitor
    ).toBe("off");
    expect(resolveSharedOptions({}, P, { [SOCKET_MONITOR_ENV]: "per-request" }).socketMonitor).toBe("per-request");
    expect(message(() => resolveSharedOptions({}, P, { [SOCKET_MONITOR_ENV]: "fast" }))).toBe(
      `${P} - invalid environment variable ${SOCKET_MONITOR_ENV}: "fast"; expected one of "interval", "per-request", "off".`
    );
  });

  it("checks saturation.* with the monitor's own rules, naming the handler and saturation.<key>", () => {
    const bad = { windowSamples: 1 };
    const ours = message(() => resolveSharedOptions({ saturation: bad }, P, NO_ENV));
    expect(ours).toBe(`${P} - invalid option saturation.windowSamples: 1; expected an integer from 3 to 60 (samples).`);
    expect(message(() => new PoolMonitor({ ...bad }).destroy())).toBe(
      "@sockeye/pool-monitor - invalid option windowSamples: 1; expected an integer from 3 to 60 (samples)."
    );
  });

  it("rejects a key saturation does not take (a misspelt option is not ignored in silence)", () => {
    expect(message(() => resolveSharedOptions({ saturation: { sampleIntervallMs: 500 } }, P, NO_ENV))).toBe(
      `${P} - unknown option saturation.sampleIntervallMs; saturation takes sampleIntervalMs, windowSamples, warningLockoutMs, unconsumedBodyMs, stallAfterMs, maxOrigins.`
    );
    expect(
      message(() => resolveSharedOptions({ saturation: { [`x${"y".repeat(500)}`]: 1 } }, P, NO_ENV)).length
    ).toBeLessThan(200);
    // Every key it does take passes.
    const all = {
      sampleIntervalMs: 500,
      windowSamples: 4,
      warningLockoutMs: 0,
      unconsumedBodyMs: 5,
      stallAfterMs: 2000,
      maxOrigins: 9,
    };
    expect(resolveSharedOptions({ saturation: all }, P, NO_ENV).saturation).toEqual(all);
  });

  it("shows a long string value cut at 40 characters, on one line", () => {
    const value = `${"a".repeat(300)}\n${"b".repeat(300)}`;
    const text = message(() => resolveSharedOptions({ requestTimeout: value }, P, NO_ENV));
    expect(text).toBe(
      `${P} - invalid option requestTimeout: "${"a".repeat(40)}…"; expected a number of milliseconds >= 0 (0 or undefined disables it).`
    );
    expect(message(() => resolveSharedOptions({ saturation: { stallAfterMs: value } }, P, NO_ENV))).toContain(
      `saturation.stallAfterMs: "${"a".repeat(40)}…"; expected a number from 1000 to 86400000 (milliseconds).`
    );
  });

  it("checks in a fixed order: the first bad value is the one reported, one line, prefixed", () => {
    const both = { requestTimeout: -1, socketMonitor: "fast", saturation: { windowSamples: 1 } };
    expect(message(() => resolveSharedOptions(both, P, NO_ENV))).toBe(
      `${P} - invalid option requestTimeout: -1; expected a number of milliseconds >= 0 (0 or undefined disables it).`
    );
    expect(message(() => resolveSharedOptions({ socketMonitor: "fast", saturation: 5 }, P, NO_ENV))).toBe(
      `${P} - invalid option saturation: 5; expected an object of saturation-detector options.`
    );
    expect(
      message(() => resolveSharedOptions({ socketMonitor: "fast", saturation: { windowSamples: 1 } }, P, NO_ENV))
    ).toMatch(/^@sockeye\/test - invalid option saturation\.windowSamples: 1;/);
    expect(message(() => resolveSharedOptions({ socketMonitor: "fast", logger: 5 }, P, NO_ENV))).toMatch(
      /^@sockeye\/test - invalid option logger: 5;/
    );
    expect(message(() => resolveSharedOptions({ socketMonitor: "fast" }, P, NO_ENV))).toMatch(
      /^@sockeye\/test - invalid option socketMonitor: "fast"/
    );
  });
});

describe("resolveDefaultSocketTimeout", () => {
  it("counts only a finite number > 0 (upstream's rule)", () => {
    expect(resolveDefaultSocketTimeout({ defaultSocketTimeout: 30_000 })).toBe(30_000);
    for (const value of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "5000", null, undefined]) {
      expect(resolveDefaultSocketTimeout({ defaultSocketTimeout: value })).toBeUndefined();
    }
    expect(resolveDefaultSocketTimeout(undefined)).toBeUndefined();
  });
});

/** What every handler's `updateHttpClientConfig()` makes of one shared option before it stores it. */
const resolveSharedOption = (name: string, value: unknown, prefix: string): unknown =>
  checkHandlerUpdate(SHARED_OPTIONS, name, value, prefix, undefined).value;

describe("one shared option checked at update time (checkHandlerUpdate)", () => {
  it("checks and normalises one option as the constructor does; other names pass unchanged", () => {
    expect(resolveSharedOption("requestTimeout", "250", P)).toBe(250);
    expect(resolveSharedOption("telemetry", null, P)).toBeUndefined();
    expect(resolveSharedOption("maxConcurrentStreams", "x", P)).toBe("x");
    for (const [name, value] of [
      ["requestTimeout", "abc"],
      ["socketMonitor", null],
      ["telemetry", "yes"],
      ["onSaturation", 5],
      ["saturation", 5],
    ] as const) {
      const update = message(() => resolveSharedOption(name, value, P));
      expect(update).not.toBe("accepted");
      expect(update).toBe(message(() => resolveSharedOptions({ [name]: value }, P, NO_ENV)));
    }
  });
});

describe("checkHandlerUpdate (the first step of every updateHttpClientConfig)", () => {
  it("checks the option by its rule; a monitor option reaches the monitor at once, a bad one never", () => {
    const monitor = { applyHandlerOption: vi.fn() };
    expect(checkHandlerUpdate(SHARED_OPTIONS, "requestTimeout", "250", P, monitor)).toEqual({
      value: 250,
      update: "request",
    });
    expect(checkHandlerUpdate(SHARED_OPTIONS, "httpsAgent", {}, P, monitor).update).toBe("pool");
    expect(monitor.applyHandlerOption).not.toHaveBeenCalled();
    const onSaturation = () => {};
    expect(checkHandlerUpdate(SHARED_OPTIONS, "onSaturation", onSaturation, P, monitor).update).toBe("monitor");
    expect(monitor.applyHandlerOption).toHaveBeenCalledWith("onSaturation", onSaturation, P);
    expect(() => checkHandlerUpdate(SHARED_OPTIONS, "saturation", { windowSamples: 1 }, P, monitor)).toThrow(
      `${P} - invalid option saturation.windowSamples: 1;`
    );
    expect(() => checkHandlerUpdate(SHARED_OPTIONS, "logger", 5, P, monitor)).toThrow(
      `${P} - invalid option logger: 5;`
    );
    expect(monitor.applyHandlerOption).toHaveBeenCalledTimes(1);
    const key = Symbol.for("logger");
    expect(checkHandlerUpdate(SHARED_OPTIONS, key, 5, P, monitor)).toEqual({ value: 5, update: undefined });
  });
});

describe("withUpdate (the SDK's symbol keys)", () => {
  it("sets logger and defaultSocketTimeout only while the options have none; other keys set themselves", () => {
    const logger = { warn() {} };
    expect(withUpdate({}, Symbol.for("logger"), logger)).toEqual({ logger });
    expect(withUpdate({ logger: console }, Symbol.for("logger"), logger)).toEqual({ logger: console });
    expect(withUpdate({}, Symbol.for("logger"), { info() {} })).toEqual({ logger: undefined });
    const timeout = Symbol.for("@smithy/defaultSocketTimeout");
    expect(withUpdate({}, timeout, 5000)).toEqual({ defaultSocketTimeout: 5000 });
    expect(withUpdate({ defaultSocketTimeout: 3000 }, timeout, 5000)).toEqual({ defaultSocketTimeout: 3000 });
    expect(withUpdate({ defaultSocketTimeout: 0 }, timeout, 5000)).toEqual({ defaultSocketTimeout: 5000 });
    expect(withUpdate({}, "requestTimeout", 9)).toEqual({ requestTimeout: 9 });
  });

  it("returns a copy: the options it was given stay as they were", () => {
    const options: { requestTimeout: number; logger?: unknown } = { requestTimeout: 1 };
    expect(withUpdate(options, "requestTimeout", 9)).toEqual({ requestTimeout: 9 });
    expect(options).toEqual({ requestTimeout: 1 });
  });
});
