import http from "node:http";
import { describe, expect, test as it } from "vitest";
import { describeValue, invalidOption, MAX_SHOWN_CHARS } from "./invalid-option";

describe("describeValue", () => {
  it.each([
    ["abc", '"abc"'],
    ["", '""'],
    [5, "5"],
    [Number.NaN, "NaN"],
    [-0, "0"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [true, "true"],
    [undefined, "undefined"],
    [null, "null"],
    [10n, "10"],
    [[1, 2], "an array"],
    [{ a: 1 }, "an object"],
    [() => 1, "a function"],
  ])("shows %o as %s", (value, shown) => {
    expect(describeValue(value)).toBe(shown);
  });

  it("shows a symbol by its description", () => {
    expect(describeValue(Symbol("x"))).toBe("Symbol(x)");
  });

  it("names a class passed for an instance instead of pasting its source", () => {
    expect(describeValue(http.Agent)).toBe("a function");
  });

  it("cuts a long string at MAX_SHOWN_CHARS and keeps it on one line", () => {
    const long = `${"a".repeat(MAX_SHOWN_CHARS - 2)}\n\r${"b".repeat(5000)}`;
    const shown = describeValue(long);
    expect(shown).toBe(`"${"a".repeat(MAX_SHOWN_CHARS - 2)}\\n\\r…"`);
    expect(shown).not.toMatch(/[\n\r]/);
    expect(describeValue("x".repeat(MAX_SHOWN_CHARS))).toBe(`"${"x".repeat(MAX_SHOWN_CHARS)}"`);
  });
});

describe("invalidOption", () => {
  it("builds the one-line message naming the package, the option path, the value and what was expected", () => {
    const error = invalidOption("@sockeye/x", "saturation.windowSamples", 1, "an integer from 3 to 60 (samples)");
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(
      "@sockeye/x - invalid option saturation.windowSamples: 1; expected an integer from 3 to 60 (samples)."
    );
  });

  it("builds a RangeError when asked (a number of the right type out of its range)", () => {
    expect(invalidOption("@sockeye/x", "maxOrigins", 0, "an integer", RangeError)).toBeInstanceOf(RangeError);
  });
});
