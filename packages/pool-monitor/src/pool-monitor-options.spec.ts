import { describe, expect, test as it } from "vitest";
import { POOL_MONITOR_DEFAULTS, resolvePoolMonitorOptions } from "./pool-monitor-options";
import { PoolMonitor } from "./pool-monitor";

describe("resolvePoolMonitorOptions", () => {
  it("applies the documented defaults", () => {
    expect(resolvePoolMonitorOptions(undefined)).toEqual({
      logger: undefined,
      messagePrefix: "@sockeye/pool-monitor:WARN - ",
      onSaturation: undefined,
      onRecovery: undefined,
      sampleIntervalMs: 1000,
      windowSamples: 5,
      warningLockoutMs: 15_000,
      unconsumedBodyMs: 10_000,
      stallAfterMs: 30_000,
      maxOrigins: 256,
    });
    expect(POOL_MONITOR_DEFAULTS.sampleIntervalMs).toBe(1000);
  });

  it("accepts the range limits", () => {
    const o = resolvePoolMonitorOptions({
      sampleIntervalMs: 100,
      windowSamples: 60,
      warningLockoutMs: 0,
      unconsumedBodyMs: 1,
      maxOrigins: 1,
    });
    expect(o).toMatchObject({
      sampleIntervalMs: 100,
      windowSamples: 60,
      warningLockoutMs: 0,
      unconsumedBodyMs: 1,
      maxOrigins: 1,
    });
  });

  it.each([
    [
      { sampleIntervalMs: 50 },
      RangeError,
      "invalid option sampleIntervalMs: 50; expected a number from 100 to 60000 (milliseconds).",
    ],
    [
      { sampleIntervalMs: Number.NaN },
      RangeError,
      "invalid option sampleIntervalMs: NaN; expected a number from 100 to 60000 (milliseconds).",
    ],
    [
      { sampleIntervalMs: "1000" },
      TypeError,
      'invalid option sampleIntervalMs: "1000"; expected a number from 100 to 60000 (milliseconds).',
    ],
    [{ windowSamples: 2 }, RangeError, "invalid option windowSamples: 2; expected an integer from 3 to 60 (samples)."],
    [
      { windowSamples: 4.5 },
      RangeError,
      "invalid option windowSamples: 4.5; expected an integer from 3 to 60 (samples).",
    ],
    [
      { warningLockoutMs: -1 },
      RangeError,
      "invalid option warningLockoutMs: -1; expected a number from 0 to 86400000 (milliseconds).",
    ],
    [
      { unconsumedBodyMs: 0 },
      RangeError,
      "invalid option unconsumedBodyMs: 0; expected a number from 1 to 86400000 (milliseconds).",
    ],
    [
      { maxOrigins: Number.POSITIVE_INFINITY },
      RangeError,
      "invalid option maxOrigins: Infinity; expected an integer from 1 to 100000 (origins).",
    ],
    [
      { logger: "console" },
      TypeError,
      'invalid option logger: "console"; expected an object with a warn(message) method.',
    ],
    [{ logger: { warn: 1 } }, TypeError, "invalid option logger.warn: 1; expected a function."],
    [{ messagePrefix: 5 }, TypeError, "invalid option messagePrefix: 5; expected a string."],
    [{ onSaturation: {} }, TypeError, "invalid option onSaturation: an object; expected a function."],
    [{ onRecovery: true }, TypeError, "invalid option onRecovery: true; expected a function."],
  ])("rejects %o", (options, ErrorType, message) => {
    expect(() => new PoolMonitor(options as never)).toThrow(ErrorType);
    expect(() => new PoolMonitor(options as never)).toThrow(`@sockeye/pool-monitor - ${message}`);
  });

  it("counts null as unset: the default applies, as for every handler option", () => {
    expect(
      resolvePoolMonitorOptions({ windowSamples: null, messagePrefix: null, logger: null } as never)
    ).toMatchObject({
      windowSamples: 5,
      messagePrefix: "@sockeye/pool-monitor:WARN - ",
      logger: undefined,
    });
  });

  it("rejects a non-object options argument", () => {
    expect(() => new PoolMonitor(7 as never)).toThrow(
      "@sockeye/pool-monitor - invalid options: 7; expected an object."
    );
  });
});
