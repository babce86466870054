import { describe, expect, it } from "vitest";
import {
  contentLengthOf,
  errorTypeOf,
  knownMethod,
  knownMethodsFrom,
  requestFinishedEvent,
  schemeOf,
} from "./request-finished";

describe("knownMethod", () => {
  it.each([
    ["GET", "GET"],
    ["PATCH", "PATCH"],
    ["QUERY", "QUERY"],
    ["get", "_OTHER"], // case-sensitive, as the semantic conventions require
    ["PURGE", "_OTHER"],
    ["", "_OTHER"],
    [undefined, "_OTHER"],
  ])("%s -> %s", (method, expected) => {
    expect(knownMethod(method)).toBe(expected);
  });
});

describe("knownMethodsFrom (OTEL_INSTRUMENTATION_HTTP_KNOWN_METHODS)", () => {
  it("defaults to the semantic conventions' list when unset", () => {
    expect([...knownMethodsFrom(undefined)]).toEqual([
      "CONNECT",
      "DELETE",
      "GET",
      "HEAD",
      "OPTIONS",
      "PATCH",
      "POST",
      "PUT",
      "QUERY",
      "TRACE",
    ]);
  });

  it("replaces the defaults entirely, case-sensitive, ignoring entries that are not method tokens", () => {
    expect([...knownMethodsFrom(" GET, PURGE ,get,bad method,,")]).toEqual(["GET", "PURGE", "get"]);
    expect([...knownMethodsFrom("")]).toEqual([]);
  });
});

describe("errorTypeOf", () => {
  const err = (props: Record<string, unknown>) => Object.assign(new Error("secret message /path?q=1"), props);
  it.each<[string, Parameters<typeof errorTypeOf>, string | null]>([
    ["completed 200", ["completed", undefined, 200], null],
    ["completed 304", ["completed", undefined, 304], null],
    ["completed 404", ["completed", undefined, 404], "404"],
    ["completed 500", ["completed", undefined, 500], "500"],
    ["code first", ["failed", err({ code: "ECONNRESET", name: "TimeoutError" }), null], "ECONNRESET"],
    ["class name without code", ["timed_out", err({ name: "TimeoutError" }), null], "TimeoutError"],
    ["plain Error: _OTHER", ["failed", new Error("boom"), null], "_OTHER"],
    ["a code that is no identifier", ["failed", err({ code: "not a code" }), null], "_OTHER"],
    ["a numeric code", ["failed", err({ code: 42 }), null], "_OTHER"],
    ["a name with spaces", ["failed", err({ name: "Something went wrong" }), null], "_OTHER"],
    ["a failed body after 200", ["failed", err({ code: "ECONNRESET" }), 200], "ECONNRESET"],
    ["timed out, no error object", ["timed_out", undefined, null], "TimeoutError"],
    ["aborted, no error object", ["aborted", undefined, null], "AbortError"],
    ["a string thrown", ["failed", "ECONNRESET", null], "_OTHER"],
  ])("%s", (_name, args, expected) => {
    expect(errorTypeOf(...args)).toBe(expected);
  });

  it("never returns a message and bounds its length", () => {
    const long = "E".repeat(200);
    expect(errorTypeOf("failed", err({ code: long }), null)).toBe("_OTHER");
    expect(errorTypeOf("failed", err({ name: `X${"y".repeat(100)}` }), null)).toBe("_OTHER");
  });
});

describe("contentLengthOf", () => {
  it.each<[unknown, number | null]>([
    ["42", 42],
    [0, 0],
    ["0", 0],
    [["7"], 7],
    [["7", "8"], null],
    ["", null],
    ["-1", null],
    ["1.5", null],
    ["abc", null],
    [undefined, null],
  ])("%j -> %j", (value, expected) => {
    expect(contentLengthOf(value)).toBe(expected);
  });
});

describe("schemeOf", () => {
  it.each<[string | undefined, "http" | "https" | null]>([
    ["https:", "https"],
    ["http:", "http"],
    ["https://s3.amazonaws.com:443", "https"],
    ["http://127.0.0.1:8080", "http"],
    ["_OTHER", null],
    [undefined, null],
  ])("%s -> %s", (value, expected) => {
    expect(schemeOf(value)).toBe(expected);
  });
});

describe("requestFinishedEvent", () => {
  it("reduces raw facts to bounded fields", () => {
    expect(
      requestFinishedEvent({
        origin: "https://h:443",
        scheme: "https",
        method: "PUT",
        statusCode: 503,
        outcome: "completed",
        error: undefined,
        durationMs: 12.5,
        protocolVersion: "2",
        requestBodySize: "10",
        responseBodySize: ["3"],
        queuedMs: null,
      })
    ).toEqual({
      type: "request:finished",
      origin: "https://h:443",
      scheme: "https",
      method: "PUT",
      statusCode: 503,
      outcome: "completed",
      errorType: "503",
      durationMs: 12.5,
      protocolVersion: "2",
      requestBodySize: 10,
      responseBodySize: 3,
      queuedMs: null,
    });
  });

  it("drops an invalid status and the response size without a response; a HEAD response has no body", () => {
    const failed = requestFinishedEvent({
      origin: "_OTHER",
      scheme: null,
      method: "GET",
      statusCode: -1,
      outcome: "failed",
      error: { code: "ECONNREFUSED" },
      durationMs: -3,
      protocolVersion: "1.1",
      requestBodySize: undefined,
      responseBodySize: "5",
      queuedMs: 7,
    });
    expect(failed).toMatchObject({
      statusCode: null,
      responseBodySize: null,
      errorType: "ECONNREFUSED",
      durationMs: 0,
      queuedMs: 7,
    });
    const head = requestFinishedEvent({
      origin: "http://h:80",
      scheme: "http",
      method: "HEAD",
      statusCode: 200,
      outcome: "completed",
      error: undefined,
      durationMs: 1,
      protocolVersion: "1.1",
      requestBodySize: undefined,
      responseBodySize: "1000",
      queuedMs: null,
    });
    expect(head.responseBodySize).toBe(0);
  });
});
