import { describe, expect, test as it } from "vitest";
import { applyOptionRules, BOOLEAN, countRule, LOGGER, MS, type OptionRules } from "./option-rules";

const RULES: OptionRules = {
  connectionTimeout: MS,
  requestTimeout: MS,
  socketTimeout: MS,
  throwOnRequestTimeout: BOOLEAN,
  maxSockets: countRule(1),
  logger: LOGGER,
  range: [(value) => value <= 10, "a number <= 10", true],
};

const normalizeOptions = <T extends object>(options: T): T & Record<string, unknown> =>
  applyOptionRules(RULES, options, "@sockeye/test");

describe("applyOptionRules", () => {
  it("treats null as unset, as upstream does", () => {
    expect(normalizeOptions({ requestTimeout: null as any, logger: null as any })).toEqual({
      requestTimeout: undefined,
      logger: undefined,
    });
    // An option without a rule is not normalised.
    expect(normalizeOptions({ httpAgent: null as any }).httpAgent).toBeNull();
  });

  it("converts numeric strings (e.g. from environment variables)", () => {
    expect(normalizeOptions({ requestTimeout: "5000" as any, connectionTimeout: " 100 " as any })).toMatchObject({
      requestTimeout: 5000,
      connectionTimeout: 100,
    });
  });

  it("rejects values that are not milliseconds, naming the option and the value", () => {
    expect(() => normalizeOptions({ socketTimeout: "5s" as any })).toThrow(
      '@sockeye/test - invalid option socketTimeout: "5s"; expected a number of milliseconds >= 0 (0 or undefined disables it).'
    );
    expect(() => normalizeOptions({ connectionTimeout: -1 })).toThrow(/invalid option connectionTimeout: -1/);
    expect(() => normalizeOptions({ requestTimeout: Number.NaN })).toThrow(/invalid option requestTimeout: NaN/);
    // Only an MS option converts a numeric string.
    expect(() => normalizeOptions({ maxSockets: "5" as any })).toThrow(
      '@sockeye/test - invalid option maxSockets: "5"; expected an integer >= 1 or Infinity.'
    );
  });

  it("a TypeError, or a RangeError for a number failing a range rule; the first bad option in table order", () => {
    expect(() => normalizeOptions({ range: 11 })).toThrow(RangeError);
    expect(() => normalizeOptions({ range: "x" })).toThrow(TypeError);
    expect(() => normalizeOptions({ maxSockets: 0 })).toThrow(TypeError);
    expect(() => normalizeOptions({ range: 11, socketTimeout: -1 })).toThrow(
      "@sockeye/test - invalid option socketTimeout: -1;"
    );
  });

  it("checks an object's own options by its nested rules, naming <option>.<key>; leaves other keys alone", () => {
    expect(() => normalizeOptions({ logger: { warn: 1 } })).toThrow(
      "@sockeye/test - invalid option logger.warn: 1; expected a function."
    );
    expect(() => normalizeOptions({ logger: [] })).toThrow(
      "@sockeye/test - invalid option logger: an array; expected an object with a warn(message) method."
    );
    const logger = { warn: null, info: 5 };
    expect(normalizeOptions({ logger, other: "x" })).toMatchObject({ logger, other: "x" });
    expect(logger).toEqual({ warn: null, info: 5 });
  });

  it("accepts only a boolean throwOnRequestTimeout (null = unset), naming the option and the value otherwise", () => {
    expect(normalizeOptions({ throwOnRequestTimeout: true }).throwOnRequestTimeout).toBe(true);
    expect(normalizeOptions({ throwOnRequestTimeout: false }).throwOnRequestTimeout).toBe(false);
    expect(normalizeOptions({ throwOnRequestTimeout: null as any }).throwOnRequestTimeout).toBeUndefined();
    expect(() => normalizeOptions({ throwOnRequestTimeout: "true" as any })).toThrow(
      'invalid option throwOnRequestTimeout: "true"; expected a boolean (true or false).'
    );
    expect(() => normalizeOptions({ throwOnRequestTimeout: 1 as any })).toThrow(
      "invalid option throwOnRequestTimeout: 1; expected a boolean"
    );
  });

  it("keeps Infinity (never), returns a copy, and checks nothing it has no rule for", () => {
    const options = { requestTimeout: Number.POSITIVE_INFINITY, maxSockets: Number.POSITIVE_INFINITY, x: -1 };
    const out = normalizeOptions(options);
    expect(out).toEqual(options);
    expect(out).not.toBe(options);
    expect(normalizeOptions(undefined as never)).toEqual({});
  });
});
