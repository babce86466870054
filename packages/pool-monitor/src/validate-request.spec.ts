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

  it("rejects a request that is not an object", () => {
    expect(() => validateRequest(null as never, P)).toThrow("handle(request) expects an HttpRequest; received null");
  });
});
