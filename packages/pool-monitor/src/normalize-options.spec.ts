import { describe, expect, test as it } from "vitest";
import { normalizeOptions as normalize } from "./normalize-options";

const normalizeOptions = <T extends object>(options: T): T => normalize(options, "@sockeye/test");

describe("normalizeOptions", () => {
  it("treats null as unset, as upstream does", () => {
    expect(normalizeOptions({ requestTimeout: null as any, httpAgent: null as any })).toEqual({
      requestTimeout: undefined,
      httpAgent: undefined,
    });
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
    expect(() => normalizeOptions({ httpsAgent: 5 as any })).toThrow(/invalid option httpsAgent: 5/);
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

  it("keeps Infinity (never) and leaves absent keys absent", () => {
    const out = normalizeOptions({ requestTimeout: Number.POSITIVE_INFINITY });
    expect(out).toEqual({ requestTimeout: Number.POSITIVE_INFINITY });
    expect("socketTimeout" in out).toBe(false);
  });
});
