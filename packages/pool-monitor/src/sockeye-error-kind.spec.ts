import { describe, expect, test as it } from "vitest";
import {
  buildAbortError,
  closedBeforeResponseError,
  connectionTimeoutError,
  handlerDestroyedError,
  http2DestroyedError,
  requestTimeoutError,
  socketIdleTimeoutError,
  acquisitionTimeoutError,
  streamIdleTimeoutError,
  sessionConnectTimeoutError,
  queueFullError,
  unreadBodyTimeoutError,
} from "./request-errors";
import {
  isConnectionResetError,
  isHandlerDestroyedError,
  isQueueFullError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  sockeyeErrorKind,
} from "./sockeye-error-kind";

const P = "@sockeye/x";

/** Errors with exactly the name, code and message of Sockeye's, but not built by it: no guard may accept them. */
const LOOK_ALIKES: unknown[] = [
  Object.assign(new Error(requestTimeoutError(P, 5).message), { name: "TimeoutError", code: "ETIMEDOUT" }),
  Object.assign(new Error("Request aborted"), { name: "AbortError" }),
  Object.assign(new Error("the handler was destroyed"), {
    name: "HandlerDestroyedError",
    code: "ERR_HANDLER_DESTROYED",
  }),
  Object.assign(new Error("read ECONNRESET"), { name: "TimeoutError", code: "ECONNRESET" }),
  new DOMException("This operation was aborted", "AbortError"),
  undefined,
  null,
  "TimeoutError",
  { name: "TimeoutError", deadline: "request" },
];

describe("isSockeyeTimeoutError", () => {
  it("accepts every timeout the handlers raise, and its deadline says which", () => {
    const cases: Array<[Error, string]> = [
      [connectionTimeoutError(P, 1), "connection"],
      [sessionConnectTimeoutError(P, "https://a:443", 1), "connection"],
      [requestTimeoutError(P, 1), "request"],
      [socketIdleTimeoutError(P, 1, false), "idle"],
      [streamIdleTimeoutError(1), "idle"],
      [acquisitionTimeoutError(P, 1, 2, "socket", "q"), "acquisition"],
      [unreadBodyTimeoutError(P, 1), "unread_body"],
    ];
    for (const [error, deadline] of cases) {
      expect(isSockeyeTimeoutError(error), error.message).toBe(true);
      if (isSockeyeTimeoutError(error)) expect(error.deadline).toBe(deadline);
      expect(Object.keys(error)).not.toContain("deadline");
    }
  });

  it("rejects the other kinds and look-alikes", () => {
    for (const e of [buildAbortError(), handlerDestroyedError(P, "x"), closedBeforeResponseError(P), ...LOOK_ALIKES]) {
      expect(isSockeyeTimeoutError(e)).toBe(false);
    }
  });
});

describe("isSockeyeAbortError", () => {
  it("accepts an abort, whatever the signal's reason", () => {
    for (const signal of [{ reason: new Error("r") }, { reason: "r" }, {}, undefined]) {
      expect(isSockeyeAbortError(buildAbortError(signal))).toBe(true);
    }
  });

  it("rejects the other kinds and look-alikes (a DOMException AbortError included)", () => {
    for (const e of [requestTimeoutError(P, 1), handlerDestroyedError(P, "x"), ...LOOK_ALIKES]) {
      expect(isSockeyeAbortError(e)).toBe(false);
    }
  });
});

describe("isHandlerDestroyedError", () => {
  it("accepts destroy()'s errors, HTTP/2's plain Error included", () => {
    expect(isHandlerDestroyedError(handlerDestroyedError(P, "while the request was in flight"))).toBe(true);
    expect(isHandlerDestroyedError(http2DestroyedError(P))).toBe(true);
  });

  it("rejects the other kinds and look-alikes", () => {
    for (const e of [buildAbortError(), requestTimeoutError(P, 1), ...LOOK_ALIKES]) {
      expect(isHandlerDestroyedError(e)).toBe(false);
    }
  });
});

describe("isConnectionResetError", () => {
  it("accepts a request closed before its response; rejects the other kinds and look-alikes", () => {
    expect(isConnectionResetError(closedBeforeResponseError(P))).toBe(true);
    for (const e of [buildAbortError(), requestTimeoutError(P, 1), handlerDestroyedError(P, "x"), ...LOOK_ALIKES]) {
      expect(isConnectionResetError(e)).toBe(false);
    }
  });
});

describe("isQueueFullError", () => {
  it("accepts maxQueuedRequests' rejection: one line naming the option and the queue length; rejects the others", () => {
    const error = queueFullError(P, 10, 10, "socket");
    expect(isQueueFullError(error)).toBe(true);
    expect(error).toMatchObject({ name: "QueueFullError", code: "ERR_SOCKEYE_QUEUE_FULL" });
    expect(error.message).toBe(
      "@sockeye/x - the request was rejected at once: 10 requests already wait for a free socket of this origin (maxQueuedRequests=10). Raise maxQueuedRequests or maxSockets, or lower concurrency."
    );
    expect(isSockeyeTimeoutError(error)).toBe(false);
    const lookAlike = Object.assign(new Error(error.message), {
      name: "QueueFullError",
      code: "ERR_SOCKEYE_QUEUE_FULL",
    });
    for (const e of [buildAbortError(), requestTimeoutError(P, 1), lookAlike, ...LOOK_ALIKES]) {
      expect(isQueueFullError(e)).toBe(false);
    }
  });
});

describe("sockeyeErrorKind", () => {
  it("reads the registered brand, so an error branded by another copy of this package is recognised", () => {
    const fromOtherCopy = new Error("x");
    Object.defineProperty(fromOtherCopy, Symbol.for("@sockeye/error-kind"), { value: "abort", enumerable: false });
    expect(sockeyeErrorKind(fromOtherCopy)).toBe("abort");
    expect(isSockeyeAbortError(fromOtherCopy)).toBe(true);
  });

  it("ignores a brand with an unknown value", () => {
    const odd = new Error("x");
    Object.defineProperty(odd, Symbol.for("@sockeye/error-kind"), { value: "later", enumerable: false });
    expect(sockeyeErrorKind(odd)).toBeUndefined();
  });
});
