import { HttpRequest } from "@smithy/protocol-http";
import { describe, expect, test as it } from "vitest";
import { validateRequest } from "./validate-request";

const P = "@sockeye/test";

const req = (fields: Record<string, unknown>) =>
  new HttpRequest({ protocol: "https:", hostname: "example.com", path: "/", ...fields } as never);

describe("validateRequest", () => {
  it("accepts a hostname with no port, a valid numeric port, or a numeric string port", () => {
    expect(() => validateRequest(req({}), P)).not.toThrow();
    expect(() => validateRequest(req({ port: 443 }), P)).not.toThrow();
    expect(() => validateRequest(req({ port: "8080" }), P)).not.toThrow();
    expect(() => validateRequest(req({ hostname: "[::1]", port: 65535 }), P)).not.toThrow();
  });

  it.each([[-1], [0], [70000], [1.5], ["abc"], [Number.NaN]])("rejects port %s, naming it", (port) => {
    expect(() => validateRequest(req({ port }), P)).toThrow(TypeError);
    expect(() => validateRequest(req({ port }), P)).toThrow(
      `invalid request port: ${typeof port === "string" ? JSON.stringify(port) : String(port)}; expected an integer from 1 to 65535`
    );
  });

  it("rejects a missing or empty hostname instead of silently using localhost", () => {
    // (HttpRequest's constructor defaults a missing hostname to "localhost"; plain objects and later edits do not.)
    const missing = req({});
    (missing as { hostname?: string }).hostname = undefined;
    expect(() => validateRequest(missing, P)).toThrow("invalid request hostname: undefined");
    const empty = req({});
    empty.hostname = "";
    expect(() => validateRequest(empty, P)).toThrow('invalid request hostname: ""');
  });

  it("returns the scheme, lower-cased: http: and https: in any letter case mean themselves", () => {
    expect(validateRequest(req({}), P)).toBe("https:");
    for (const protocol of ["HTTPS:", "Https:"]) {
      const r = req({});
      r.protocol = protocol;
      expect(validateRequest(r, P)).toBe("https:");
    }
    const plain = req({});
    plain.protocol = "HTTP:";
    expect(validateRequest(plain, P)).toBe("http:");
  });

  it.each([["https"], [""], ["ftp:"], ["https:/"], [undefined], [443]])(
    "refuses protocol %j with a TypeError naming it (code ERR_INVALID_PROTOCOL)",
    (protocol) => {
      const r = req({});
      (r as { protocol: unknown }).protocol = protocol;
      expect(() => validateRequest(r, P)).toThrow(
        expect.objectContaining({
          name: "TypeError",
          code: "ERR_INVALID_PROTOCOL",
          message: `${P} - invalid request protocol: ${typeof protocol === "string" ? JSON.stringify(protocol) : String(protocol)}; expected "http:" or "https:" (in any letter case). Nothing was sent.`,
        })
      );
    }
  );

  it.each([
    ["a.example@b.example"],
    ["b.example/x"],
    ["b.example?x"],
    ["b.example#x"],
    ["b example"],
    ["b\\x"],
    ["b\r\nx"],
  ])("refuses hostname %j, which would change where the request goes", (hostname) => {
    expect(() => validateRequest(req({ hostname }), P)).toThrow(
      `invalid request hostname: ${JSON.stringify(hostname)}`
    );
  });

  it("refuses a path with a control character, a space or a character above U+00FF, without showing it", () => {
    for (const path of ["/a b", "/a\r\nx", "/\u20ac", "/a\u0000"]) {
      expect(() => validateRequest(req({ path }), P)).toThrow(
        expect.objectContaining({
          code: "ERR_UNESCAPED_CHARACTERS",
          message: expect.not.stringContaining(path.slice(1)),
        })
      );
    }
    expect(validateRequest(req({ path: "/caf\u00e9/%20?x" }), P)).toBe("https:");
  });

  it("rejects a request that is not an object", () => {
    expect(() => validateRequest(null as never, P)).toThrow("handle(request) expects an HttpRequest; received null");
  });

  it("checks the headers (all of them on HTTP/2, the content-length otherwise) and the body against that length", () => {
    const bad = req({ headers: { "x-meta": "a\r\nb" } });
    expect(() => validateRequest(bad, P, true)).toThrow(expect.objectContaining({ code: "ERR_INVALID_CHAR" }));
    // node:http and undici refuse it themselves when they create the request (see explainRefusal).
    expect(validateRequest(bad, P)).toBe("https:");
    const mismatch = req({ headers: { "content-length": "10" }, body: "abc" });
    for (const http2 of [false, true]) {
      expect(() => validateRequest(mismatch, P, http2)).toThrow(
        expect.objectContaining({ code: "ERR_HTTP_CONTENT_LENGTH_MISMATCH" })
      );
    }
  });

  it("a host name that passed once is not checked again, and no invalid one can match that memo", () => {
    expect(validateRequest(req({ hostname: "a.example" }), P)).toBe("https:");
    expect(validateRequest(req({ hostname: "a.example" }), P)).toBe("https:");
    expect(() => validateRequest(req({ hostname: "a.example@b" }), P)).toThrow("invalid request hostname");
    const empty = req({});
    empty.hostname = "";
    expect(() => validateRequest(empty, P)).toThrow("invalid request hostname");
  });
});
