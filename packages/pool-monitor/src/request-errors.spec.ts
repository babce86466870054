import { describe, expect, test as it } from "vitest";
import {
  acquisitionTimeoutError,
  bodyAbortedError,
  buildAbortError,
  closedBeforeResponseError,
  connectionTimeoutError,
  handlerDestroyedError,
  http2DestroyedError,
  http2NoResponseError,
  relabelSocketError,
  requestTimeoutError,
  requestTimeoutMessage,
  sessionConnectTimeoutError,
  socketHangUpError,
  socketIdleTimeoutError,
  streamIdleTimeoutError,
} from "./request-errors";
import { sockeyeErrorKind } from "./sockeye-error-kind";

const P = "@sockeye/node-http-handler";

/** The observable shape the SDK's retry classification and users' log alerts read. */
function shape(e: Error & { code?: string }) {
  return { name: e.name, message: e.message, code: e.code, cause: e.cause };
}

describe("request errors: upstream's shapes, one builder each", () => {
  it("connectionTimeout: TimeoutError, no code, upstream's text plus where the request waited", () => {
    expect(shape(connectionTimeoutError(P, 1000))).toEqual({
      name: "TimeoutError",
      message: `${P} - the request socket did not establish a connection with the server within the configured timeout of 1000 ms.`,
      code: undefined,
      cause: undefined,
    });
    const cause = new Error("undici");
    const queued = connectionTimeoutError(
      P,
      1000,
      "The request was still waiting for a free socket (maxSockets=3).",
      cause
    );
    expect(queued.message).toMatch(
      /timeout of 1000 ms\. The request was still waiting for a free socket \(maxSockets=3\)\.$/
    );
    expect(queued.cause).toBe(cause);
    expect(sessionConnectTimeoutError(P, "https://a:443", 50)).toMatchObject({
      name: "TimeoutError",
      code: "ETIMEDOUT",
      message: `${P} - HTTP/2 session to https://a:443 was not established (TCP, TLS and the server's SETTINGS) within connectionTimeout=50 ms.`,
    });
  });

  it("requestTimeout: [ERROR] TimeoutError ETIMEDOUT when it throws, [WARN] text when it warns", () => {
    expect(shape(requestTimeoutError(P, 2000))).toEqual({
      name: "TimeoutError",
      message: `${P} - [ERROR] a request has exceeded the configured 2000 ms requestTimeout.`,
      code: "ETIMEDOUT",
      cause: undefined,
    });
    expect(requestTimeoutMessage(P, 2000, false)).toBe(
      `${P} - [WARN] a request has exceeded the configured 2000 ms requestTimeout.`
    );
  });

  it("socketAcquisitionTimeout: ETIMEDOUT, the wait rounded, the queue and the advice", () => {
    expect(shape(acquisitionTimeoutError(P, 500, 512.4, "socket", "maxSockets=3, 0 requests queued"))).toEqual({
      name: "TimeoutError",
      message: `${P} - the request waited 512 ms for a free socket (maxSockets=3, 0 requests queued) and exceeded the configured socketAcquisitionTimeout of 500 ms. Raise maxSockets, lower concurrency, or make sure response bodies are consumed.`,
      code: "ETIMEDOUT",
      cause: undefined,
    });
    expect(acquisitionTimeoutError(P, 500, 500, "connection", "x").message).toContain("for a free connection (x)");
  });

  it("socketTimeout / HTTP/2 stream inactivity: TimeoutError without a code", () => {
    expect(socketIdleTimeoutError(P, 3000, false).message).toBe(
      `${P} - the request socket timed out after 3000 ms of inactivity (configured by client requestHandler).`
    );
    expect(socketIdleTimeoutError(P, 3000, true).message).toContain("(service default socket timeout)");
    expect(shape(streamIdleTimeoutError(100))).toEqual({
      name: "TimeoutError",
      message: "Stream timed out because of no activity for 100 ms",
      code: undefined,
      cause: undefined,
    });
  });

  it("aborts: a new AbortError each time; an Error reason is the cause, another reason the message", () => {
    const reason = new Error("user cancelled");
    const a = buildAbortError({ reason });
    expect(shape(a)).toEqual({ name: "AbortError", message: "Request aborted", code: undefined, cause: reason });
    expect(buildAbortError({ reason })).not.toBe(a);
    expect(buildAbortError({ reason: "stop" }).message).toBe("stop");
    expect(buildAbortError(undefined).message).toBe("Request aborted");
  });

  it("aborts: name and cause are own enumerable properties, in upstream's order, so JSON.stringify shows the cause", () => {
    const reason = Object.assign(new Error("user cancelled"), { code: "E_USER" });
    const a = buildAbortError({ reason });
    expect(Object.keys(a)).toEqual(["name", "cause"]);
    expect(Object.getOwnPropertyDescriptor(a, "cause")).toMatchObject({ value: reason, enumerable: true });
    expect(JSON.stringify(a)).toBe('{"name":"AbortError","cause":{"code":"E_USER"}}');
    // No Error reason: no cause at all (not even an undefined one).
    expect(Object.keys(buildAbortError({ reason: "stop" }))).toEqual(["name"]);
    expect("cause" in buildAbortError({})).toBe(false);
  });

  it("destroy(): HandlerDestroyedError ERR_HANDLER_DESTROYED saying where; HTTP/2 keeps upstream's plain Error", () => {
    expect(shape(handlerDestroyedError(P, "while the request was in flight"))).toEqual({
      name: "HandlerDestroyedError",
      message: `${P} - the handler was destroyed (destroy() was called) while the request was in flight; no new connection is opened for it.`,
      code: "ERR_HANDLER_DESTROYED",
      cause: undefined,
    });
    expect(shape(http2DestroyedError(P))).toEqual({
      name: "Error",
      message: `${P} - the handler was destroyed before a stream slot was free.`,
      code: undefined,
      cause: undefined,
    });
  });

  it("resets: upstream relabels ECONNRESET/EPIPE/ETIMEDOUT TimeoutError in place, nothing else", () => {
    for (const code of ["ECONNRESET", "EPIPE", "ETIMEDOUT"]) {
      const e = Object.assign(new Error("read ECONNRESET"), { code });
      expect(relabelSocketError(e)).toBe(e);
      expect([e.name, e.code, sockeyeErrorKind(e)]).toEqual(["TimeoutError", code, "connection_reset"]);
    }
    const ours = requestTimeoutError(P, 5);
    expect(relabelSocketError(ours)).toBe(ours);
    expect(sockeyeErrorKind(ours)).toBe("timeout");
    const other = Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    expect(relabelSocketError(other).name).toBe("Error");
    expect(sockeyeErrorKind(other)).toBeUndefined();
    expect(shape(closedBeforeResponseError(P))).toEqual({
      name: "TimeoutError",
      message: `${P} - the request closed before a response was received.`,
      code: "ECONNRESET",
      cause: undefined,
    });
    const closed = new Error("other side closed");
    expect(shape(socketHangUpError(closed))).toEqual({
      name: "TimeoutError",
      message: "socket hang up (other side closed)",
      code: "ECONNRESET",
      cause: closed,
    });
    expect(shape(bodyAbortedError(closed))).toEqual({
      name: "Error",
      message: "aborted",
      code: "ECONNRESET",
      cause: closed,
    });
    expect(http2NoResponseError(false).name).toBe("Error");
    expect(http2NoResponseError(true).name).toBe("TimeoutError");
  });

  it("the brand changes nothing observable: same enumerable keys, JSON and inspection as an unbranded twin", () => {
    const branded = requestTimeoutError(P, 5);
    const twin = Object.assign(new Error(branded.message), { name: "TimeoutError", code: "ETIMEDOUT" });
    expect(Object.keys(branded)).toEqual(Object.keys(twin));
    expect(JSON.stringify(branded)).toBe(JSON.stringify(twin));
    expect(branded).toEqual(twin);
  });
});
