import { describe, expect, it } from "vitest";
import { parseResponseHeaders } from "./parse-response-headers";

const raw = (...pairs: string[]) => pairs.map((s) => Buffer.from(s, "latin1"));

describe("parseResponseHeaders", () => {
  it("lower-cases names and keeps latin1 values", () => {
    expect(parseResponseHeaders(raw("Content-Type", "text/plain", "X-Amz-Id", "caf\u00e9"))).toEqual({
      "content-type": "text/plain",
      "x-amz-id": "caf\u00e9",
    });
  });

  it("joins duplicates as node:http shows them (set-cookie with ',', others with ', '), first wins for single-valued", () => {
    expect(
      parseResponseHeaders(
        raw(
          "set-cookie",
          "a=1",
          "Set-Cookie",
          "b=2",
          "x-dup",
          "1",
          "x-dup",
          "2",
          "content-length",
          "5",
          "content-length",
          "6"
        )
      )
    ).toEqual({ "set-cookie": "a=1,b=2", "x-dup": "1, 2", "content-length": "5" });
  });

  it("does not carry names over from a previous response", () => {
    parseResponseHeaders(raw("x-a", "1", "x-b", "2"));
    expect(parseResponseHeaders(raw("x-b", "3"))).toEqual({ "x-b": "3" });
    expect(parseResponseHeaders(null)).toEqual({});
  });
});
