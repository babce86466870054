import { describe, expect, it } from "vitest";
import { getTransformedHeaders } from "./get-transformed-headers";

describe("getTransformedHeaders", () => {
  it("copies own headers, joins repeated values with a bare comma and skips undefined values", () => {
    const headers = { "content-type": "text/plain", "set-cookie": ["a=1", "b=2"], "x-none": undefined };
    expect(getTransformedHeaders(headers)).toEqual({ "content-type": "text/plain", "set-cookie": "a=1,b=2" });
  });

  it("ignores enumerable properties inherited by the headers object", () => {
    const inherited = Object.create({ "x-polluted": "1" }) as Record<string, string>;
    inherited["x-own"] = "2";
    const bag = getTransformedHeaders(inherited);
    expect(bag).toEqual({ "x-own": "2" });
    expect(Object.hasOwn(bag, "x-polluted")).toBe(false);
  });
});
