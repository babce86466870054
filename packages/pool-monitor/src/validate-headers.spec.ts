import { describe, expect, test as it } from "vitest";
import { declaredLength, explainRefusal, validateHeaders } from "./validate-headers";

const P = "@sockeye/test";

describe("validateHeaders", () => {
  it("accepts an SDK's headers and returns the declared content-length (-1 without one)", () => {
    const headers = { host: "example.com", "x-amz-date": "20261207T000000Z", authorization: "AWS4-HMAC-SHA256 x" };
    expect(validateHeaders(headers, P, false)).toBe(-1);
    expect(validateHeaders({ ...headers, "content-length": "42" }, P, false)).toBe(42);
    expect(validateHeaders({ "Content-Length": 7 }, P, true)).toBe(7);
    expect(validateHeaders(undefined, P, false)).toBe(-1);
  });

  it.each([["x:a"], ["x-a\r\ninjected"], ["x a"], [""], ["x(a)"], ["é"]])("refuses name %j, naming it", (name) => {
    expect(() => validateHeaders({ [name]: "1" }, P, false)).toThrow(
      expect.objectContaining({
        name: "TypeError",
        code: "ERR_INVALID_HTTP_TOKEN",
        message: expect.stringContaining(`invalid request header name ${JSON.stringify(name)}`),
      })
    );
  });

  it.each([["a\r\nb"], ["a\nb"], ["a\u0000b"], ["a\u007f"], ["\u20ac"]])(
    "refuses value %j, naming the header, not the value",
    (value) => {
      let error: Error | undefined;
      try {
        validateHeaders({ "x-meta": value }, P, false);
      } catch (e) {
        error = e as Error;
      }
      expect(error).toMatchObject({ name: "TypeError", code: "ERR_INVALID_CHAR" });
      expect(error?.message).toContain('"x-meta"');
      expect(error?.message).not.toContain(value);
      expect(error?.message).not.toMatch(/\n/);
      expect(() => validateHeaders({ "x-meta": ["ok", value] }, P, false)).toThrow('"x-meta"');
    }
  );

  it("accepts tab, Latin-1 and non-string values (left to the transport)", () => {
    expect(validateHeaders({ a: "x\ty", b: "caf\u00e9", c: 5 as never }, P, false)).toBe(-1);
  });

  it("HTTP/2: refuses connection-specific fields in any letter case and te other than trailers; allows pseudo-header names", () => {
    for (const name of ["connection", "Keep-Alive", "PROXY-CONNECTION", "transfer-encoding", "upgrade"]) {
      expect(() => validateHeaders({ [name]: "x" }, P, true)).toThrow(
        expect.objectContaining({ code: "ERR_HTTP2_INVALID_CONNECTION_HEADERS" })
      );
      expect(validateHeaders({ [name]: "x" }, P, false)).toBe(-1);
    }
    expect(() => validateHeaders({ te: "gzip" }, P, true)).toThrow('"te"');
    expect(validateHeaders({ te: "trailers", ":authority": "example.com" }, P, true)).toBe(-1);
    expect(() => validateHeaders({ ":authority": "x" }, P, false)).toThrow("invalid request header name");
  });

  it("refuses content-length values that are not a byte count, and spellings that disagree", () => {
    for (const value of ["abc", "-1", "1.5", " 3", "1e3", "", "9007199254740993", -1, 1.5]) {
      expect(() => validateHeaders({ "content-length": value as never }, P, false)).toThrow(
        expect.objectContaining({
          code: "ERR_HTTP_INVALID_HEADER_VALUE",
          message: expect.stringContaining('"content-length"'),
        })
      );
    }
    expect(() => validateHeaders({ "content-length": "3", "Content-Length": "4" }, P, false)).toThrow(
      "content-length headers that disagree (3 and 4)"
    );
    expect(validateHeaders({ "content-length": "3", "Content-Length": 3 }, P, false)).toBe(3);
  });

  it("declaredLength reads content-length only, by the same rules", () => {
    expect(declaredLength({ "x:a": "1", "Content-Length": "5" }, P)).toBe(5);
    expect(declaredLength({ host: "a" }, P)).toBe(-1);
    expect(() => declaredLength({ "content-length": "x" }, P)).toThrow(
      expect.objectContaining({ code: "ERR_HTTP_INVALID_HEADER_VALUE" })
    );
    expect(() => declaredLength({ "content-length": "1", "CONTENT-LENGTH": "2" }, P)).toThrow("disagree (1 and 2)");
  });

  it("explainRefusal words a transport's header refusal as validateHeaders does; other errors pass unchanged", () => {
    const node = Object.assign(new TypeError('Invalid character in header content ["x-a"]'), {
      code: "ERR_INVALID_CHAR",
    });
    expect(explainRefusal(node, { "x-a": "a\r\nb" }, P)).toMatchObject({
      code: "ERR_INVALID_CHAR",
      message: expect.stringContaining(`${P} - invalid value of request header "x-a"`),
    });
    const undici = Object.assign(new Error("invalid header key"), { code: "UND_ERR_INVALID_ARG" });
    expect(explainRefusal(undici, { "x:a": "1" }, P)).toMatchObject({ code: "ERR_INVALID_HTTP_TOKEN" });
    // Nothing wrong by the rule (the transport refused something else): its own error stands.
    expect(explainRefusal(undici, { "x-a": "1" }, P)).toBe(undici);
    const other = Object.assign(new Error("boom"), { code: "ECONNRESET" });
    expect(explainRefusal(other, { "x:a": "1" }, P)).toBe(other);
  });
});
