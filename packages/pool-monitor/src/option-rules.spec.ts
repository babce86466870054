import { describe, expect, test as it } from "vitest";
import { checkHandlerUpdate } from "./resolve-shared-options";
import {
  applyOptionRules,
  BOOLEAN,
  countRule,
  LOGGER,
  MS,
  type OptionRules,
  type OptionSchema,
  type ResolvedOptions,
  resolveOptions,
} from "./option-rules";

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

interface TestOptions {
  timeout?: number;
  enabled?: boolean;
  mode?: "a" | "b";
}

const MODE = [(value: unknown) => value === "a" || value === "b", '"a" or "b"'] as const;

const SCHEMA = {
  timeout: [MS, "request", undefined],
  enabled: [BOOLEAN, "monitor", true],
  mode: [MODE, "pool", "a", "TEST_MODE"],
} as const satisfies OptionSchema<TestOptions>;

describe("OptionSchema (compile-time)", () => {
  it("rejects a schema that misses an option, a default or an update kind, or has an option the type has not", () => {
    // @ts-expect-error: `mode` has no row.
    const missing = { timeout: SCHEMA.timeout, enabled: SCHEMA.enabled } satisfies OptionSchema<TestOptions>;
    // @ts-expect-error: a row without its default.
    const noDefault = { ...SCHEMA, timeout: [MS, "request"] } satisfies OptionSchema<TestOptions>;
    const later = [MS, "later", undefined] as const;
    // @ts-expect-error: an update kind that does not exist.
    const badUpdate = { ...SCHEMA, timeout: later } satisfies OptionSchema<TestOptions>;
    // @ts-expect-error: a row for an option the type does not declare.
    const extra = { ...SCHEMA, other: SCHEMA.timeout } satisfies OptionSchema<TestOptions>;
    expect([missing, noDefault, badUpdate, extra]).toHaveLength(4);
    // An option with a default resolves to a value, one without may be undefined.
    const resolved: ResolvedOptions<TestOptions, typeof SCHEMA> = { timeout: undefined, enabled: true, mode: "b" };
    // @ts-expect-error: `enabled` has a default, so it is never undefined.
    const unset: ResolvedOptions<TestOptions, typeof SCHEMA>["enabled"] = undefined;
    expect([resolved, unset]).toHaveLength(2);
  });
});

describe("resolveOptions", () => {
  it("checks in schema order, normalises, fills the defaults and keeps options it has no row for", () => {
    expect(resolveOptions(SCHEMA, { timeout: "5", enabled: null, own: 1 }, "@sockeye/test", {})).toEqual({
      timeout: 5,
      enabled: true,
      mode: "a",
      own: 1,
    });
    expect(() => resolveOptions(SCHEMA, { mode: "c", timeout: -1 }, "@sockeye/test", {})).toThrow(
      "@sockeye/test - invalid option timeout: -1;"
    );
    expect(() => resolveOptions(SCHEMA, 5 as never, "@sockeye/test", {})).toThrow(
      "@sockeye/test - invalid options: 5; expected an options object or a provider function."
    );
  });

  it("an option with `env` reads the variable when unset (empty = unset), checked by the same rule; null is a bad value", () => {
    expect(resolveOptions(SCHEMA, {}, "@sockeye/test", { TEST_MODE: "b" }).mode).toBe("b");
    expect(resolveOptions(SCHEMA, { mode: "a" }, "@sockeye/test", { TEST_MODE: "b" }).mode).toBe("a");
    expect(resolveOptions(SCHEMA, {}, "@sockeye/test", { TEST_MODE: "" }).mode).toBe("a");
    expect(() => resolveOptions(SCHEMA, {}, "@sockeye/test", { TEST_MODE: "c" })).toThrow(
      '@sockeye/test - invalid environment variable TEST_MODE: "c"; expected "a" or "b".'
    );
    expect(() => resolveOptions(SCHEMA, { mode: null }, "@sockeye/test", {})).toThrow(
      '@sockeye/test - invalid option mode: null; expected "a" or "b".'
    );
  });
});

describe("checkHandlerUpdate over a schema", () => {
  it("checks one option by its row (no default filled in) and returns its update kind; another name passes unchanged", () => {
    expect(checkHandlerUpdate(SCHEMA, "timeout", "7", "@sockeye/test", undefined)).toEqual({
      value: 7,
      update: "request",
    });
    expect(checkHandlerUpdate(SCHEMA, "enabled", null, "@sockeye/test", undefined).value).toBeUndefined();
    expect(checkHandlerUpdate(SCHEMA, "toString", "x", "@sockeye/test", undefined)).toEqual({
      value: "x",
      update: undefined,
    });
    expect(() => checkHandlerUpdate(SCHEMA, "enabled", "yes", "@sockeye/test", undefined)).toThrow(
      '@sockeye/test - invalid option enabled: "yes"; expected a boolean (true or false).'
    );
  });
});
