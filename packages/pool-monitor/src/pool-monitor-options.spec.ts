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
      'option "sampleIntervalMs" must be a number between 100 and 60000 (milliseconds); received 50.',
    ],
    [
      { sampleIntervalMs: Number.NaN },
      RangeError,
      'option "sampleIntervalMs" must be a number between 100 and 60000 (milliseconds); received NaN.',
    ],
    [
      { sampleIntervalMs: "1000" },
      TypeError,
      'option "sampleIntervalMs" must be a number between 100 and 60000 (milliseconds); received "1000".',
    ],
    [
      { windowSamples: 2 },
      RangeError,
      'option "windowSamples" must be an integer between 3 and 60 (samples); received 2.',
    ],
    [
      { windowSamples: 4.5 },
      RangeError,
      'option "windowSamples" must be an integer between 3 and 60 (samples); received 4.5.',
    ],
    [
      { warningLockoutMs: -1 },
      RangeError,
      'option "warningLockoutMs" must be a number between 0 and 86400000 (milliseconds); received -1.',
    ],
    [
      { unconsumedBodyMs: 0 },
      RangeError,
      'option "unconsumedBodyMs" must be a number between 1 and 86400000 (milliseconds); received 0.',
    ],
    [
      { maxOrigins: Number.POSITIVE_INFINITY },
      RangeError,
      'option "maxOrigins" must be an integer between 1 and 100000 (origins); received Infinity.',
    ],
    [
      { logger: "console" },
      TypeError,
      'option "logger" must be an object with a warn(message) method; received "console".',
    ],
    [{ logger: { warn: 1 } }, TypeError, 'option "logger.warn" must be a function; received 1.'],
    [{ messagePrefix: 5 }, TypeError, 'option "messagePrefix" must be a string; received 5.'],
    [{ onSaturation: {} }, TypeError, 'option "onSaturation" must be a function; received an object.'],
    [{ onRecovery: true }, TypeError, 'option "onRecovery" must be a function; received true.'],
  ])("rejects %o", (options, ErrorType, message) => {
    expect(() => new PoolMonitor(options as never)).toThrow(ErrorType);
    expect(() => new PoolMonitor(options as never)).toThrow(`@sockeye/pool-monitor: ${message}`);
  });

  it("rejects a non-object options argument", () => {
    expect(() => new PoolMonitor(7 as never)).toThrow("@sockeye/pool-monitor: options must be an object; received 7.");
  });
});
