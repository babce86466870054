import { describe, expect, test as it } from "vitest";
import { PoolMonitor } from "./pool-monitor";
import {
  DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
  resolveDefaultSocketTimeout,
  resolveSharedOption,
  resolveSharedOptions,
} from "./resolve-shared-options";
import { SOCKET_MONITOR_ENV } from "./socket-monitor-mode";

const P = "@sockeye/test";
const NO_ENV: NodeJS.ProcessEnv = {};

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
    const { shared } = resolveSharedOptions(undefined, P, NO_ENV);
    expect(shared).toEqual({
      connectionTimeout: undefined,
      requestTimeout: undefined,
      socketTimeout: undefined,
      socketAcquisitionWarningTimeout: undefined,
      socketAcquisitionTimeout: undefined,
      idleSocketTimeout: DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
      connectionLifetime: undefined,
      lifecycleExplicit: false,
      throwOnRequestTimeout: undefined,
      logger: undefined,
      socketMonitor: "interval",
      saturation: undefined,
      telemetry: true,
      onSaturation: undefined,
      onRecovery: undefined,
      defaultSocketTimeout: undefined,
    });
    expect(resolveSharedOptions(null, P, NO_ENV).shared.idleSocketTimeout).toBe(4000);
  });

  it("normalises values (null = unset, numeric strings converted) and keeps 0 / Infinity for the handler to read", () => {
    const onSaturation = () => {};
    const logger = { warn() {} };
    const { options, shared } = resolveSharedOptions(
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
      lifecycleExplicit: true,
      throwOnRequestTimeout: true,
      telemetry: false,
      logger,
      onSaturation,
      saturation: { windowSamples: 5 },
    });
    // The handler's own options come back normalised but unchecked.
    expect(options).toMatchObject({ own: "kept", requestTimeout: 5000 });
  });

  it("socketMonitor: the option, else the environment variable, else interval; a bad one names its source", () => {
    expect(
      resolveSharedOptions({ socketMonitor: "off" }, P, { [SOCKET_MONITOR_ENV]: "per-request" }).shared.socketMonitor
    ).toBe("off");
    expect(resolveSharedOptions({}, P, { [SOCKET_MONITOR_ENV]: "per-request" }).shared.socketMonitor).toBe(
      "per-request"
    );
    expect(message(() => resolveSharedOptions({}, P, { [SOCKET_MONITOR_ENV]: "fast" }))).toBe(
      `${P} - invalid environment variable ${SOCKET_MONITOR_ENV}: "fast"; expected one of "interval", "per-request", "off".`
    );
  });

  it("checks saturation.* with the monitor's own rules and messages", () => {
    const bad = { windowSamples: 1 };
    const ours = message(() => resolveSharedOptions({ saturation: bad }, P, NO_ENV));
    expect(ours).not.toBe("accepted");
    expect(ours).toBe(message(() => new PoolMonitor({ ...bad }).destroy()));
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
    ).toMatch(/^@sockeye\/test - invalid option socketMonitor: "fast"/);
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

describe("resolveSharedOption (updateHttpClientConfig)", () => {
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
