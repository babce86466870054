import { describe, expect, test as it } from "vitest";
import { normalizeOrigin } from "./normalize-origin";

describe("normalizeOrigin", () => {
  it.each([
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["https://bucket.s3.amazonaws.com", "https://bucket.s3.amazonaws.com:443"],
    ["http://Example.COM/path?q=1#h", "http://example.com:80"],
    ["https://user:pw@host:8443/key?X-Amz-Signature=abc", "https://host:8443"],
    ["http://[::1]:9000", "http://[::1]:9000"],
    ["http://::1:9000", "http://[::1]:9000"],
    ["HTTPS://[FE80::1]/x", "https://[fe80::1]:443"],
  ])("%s -> %s", (input, expected) => {
    expect(normalizeOrigin(input)).toBe(expected);
  });

  it("rejects what is not an absolute URL with a host and a port, without repeating the string", () => {
    for (const bad of [
      "not a url?token=secret",
      "/relative/path?token=secret",
      "mailto:me@secret",
      "foo://host/x?secret",
    ]) {
      expect(() => normalizeOrigin(bad)).toThrow(TypeError);
      expect(() => normalizeOrigin(bad)).toThrow(`received a string of ${bad.length} characters that is not`);
      try {
        normalizeOrigin(bad);
      } catch (e) {
        expect((e as Error).message).not.toContain("secret");
      }
    }
    expect(() => normalizeOrigin(undefined as never)).toThrow("origin must be a string");
  });
});
