/**
 * `socketTimeout` on the handler's deadline scheduler (fake timers, explicit `toFake`): armed, restarted and
 * cancelled by each phase (request-body progress, the request sent, headers, body chunks, a paused body, the end),
 * fired at exactly `socketTimeout` ms of inactivity with undici's timeout error of the phase; the restart is lazy (an
 * event records its time, the deadline re-arms itself from it when due: one scheduler touch per period). Both namings of the
 * request: undici's controller API (`UndiciRequest`, undici 8) and undici 7's native callbacks (`LegacyUndiciRequest`).
 * The dispatcher only records (stub-dispatcher.mock.ts); the real undici paths are in socket-timeout.integ.spec.ts.
 */
import { DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import type { HttpResponse } from "@smithy/protocol-http";
import type { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { STALL_CONFIRM_MS } from "../../pool-monitor/src/deadline-scheduler";
import { afterPollPhase, blockableClock } from "../../pool-monitor/src/fake-timers.mock";
import type { DispatcherLike, DispatchOptionsLike } from "./dispatcher-like";
import { type RecordedDispatch, stubDispatcher } from "./stub-dispatcher.mock";
import { RequestPlan } from "./request-plan";
import type { ResolvedUndiciConfig } from "./resolve-undici-config";
import { LegacyUndiciRequest, UndiciRequest } from "./undici-request";

const TIMEOUT = 100;
const MESSAGE = `@sockeye/undici-http-handler - the request socket timed out after ${TIMEOUT} ms of inactivity (configured by client requestHandler).`;

let scheduler: DeadlineScheduler;

function plan(socketTimeout = TIMEOUT): RequestPlan {
  return new RequestPlan({ socketTimeout } as ResolvedUndiciConfig, scheduler, undefined, false);
}

type Settled = { ok: true; response: HttpResponse } | { ok: false; error: any } | undefined;

/** Starts a controller-API request on a recording dispatcher; `settled()` is its outcome so far. */
function start(observed: boolean, socketTimeout = TIMEOUT) {
  const stub = stubDispatcher();
  const request = new UndiciRequest(plan(socketTimeout), undefined, undefined, undefined, observed);
  let outcome: Settled;
  request.start(
    (value) => {
      outcome = { ok: true, response: value.response };
    },
    (error) => {
      outcome = { ok: false, error };
    },
    stub as unknown as DispatcherLike,
    { origin: "http://127.0.0.1:1", path: "/", method: "PUT" } as DispatchOptionsLike
  );
  const call = stub.calls[0] as RecordedDispatch & { handler: UndiciRequest };
  return { call, handler: call.handler as UndiciRequest, settled: () => outcome };
}

function advance(ms: number): void {
  vi.advanceTimersByTime(ms);
}

/** The body's error once something reads it. */
async function bodyError(body: Readable): Promise<any> {
  return new Promise((resolve) => {
    body.on("error", resolve);
    body.resume();
  });
}

describe("socketTimeout on the deadline scheduler (fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setImmediate", "clearImmediate", "Date", "performance"],
    });
    scheduler = new DeadlineScheduler();
  });
  afterEach(() => {
    scheduler.stop();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("upload observed: armed at the connection, fires at exactly socketTimeout with undici's headers timeout as cause", () => {
    const { call, handler, settled } = start(true);
    expect(scheduler.size).toBe(0);
    handler.onRequestStart(call.controller, null);
    expect(scheduler.size).toBe(1);
    advance(TIMEOUT - 1);
    expect(settled()).toBeUndefined();
    advance(1);
    const outcome = settled();
    expect(outcome?.ok).toBe(false);
    const error = (outcome as { error: any }).error;
    expect(error.name).toBe("TimeoutError");
    expect(error.message).toBe(MESSAGE);
    expect(error.cause.code).toBe("UND_ERR_HEADERS_TIMEOUT");
    expect(call.aborts).toEqual([error.cause]);
    expect(scheduler.size).toBe(0);
  });

  it("each request-body chunk written restarts it: a slow but progressing upload never times out", () => {
    const { call, handler, settled } = start(true);
    handler.onRequestStart(call.controller, null);
    for (let i = 0; i < 20; i++) {
      advance(TIMEOUT - 10);
      handler.onBodySent(Buffer.from("x"));
    }
    expect(settled()).toBeUndefined();
    advance(TIMEOUT - 10);
    handler.onRequestSent();
    advance(TIMEOUT - 1);
    expect(settled()).toBeUndefined();
    advance(1);
    expect((settled() as { error: any }).error.message).toBe(MESSAGE);
  });

  it("upload not observed (a caller's dispatcher): nothing armed until undici reports progress, then armed from it", () => {
    const { call, handler, settled } = start(false);
    handler.onRequestStart(call.controller, null);
    advance(TIMEOUT * 10);
    expect(scheduler.size).toBe(0);
    expect(settled()).toBeUndefined();
    handler.onRequestSent();
    expect(scheduler.size).toBe(1);
    advance(TIMEOUT - 1);
    expect(settled()).toBeUndefined();
    advance(1);
    expect((settled() as { error: any }).error.cause.code).toBe("UND_ERR_HEADERS_TIMEOUT");
  });

  it("headers restart it for the body; chunks faster than the timeout keep it alive; a stall fails the body with undici's body timeout", async () => {
    const { call, handler, settled } = start(true);
    handler.onRequestStart(call.controller, null);
    handler.onRequestSent();
    advance(TIMEOUT - 10);
    handler.onResponseStart(call.controller, 200, {}, "OK");
    const outcome = settled();
    expect(outcome?.ok).toBe(true);
    expect(scheduler.size).toBe(1);
    const body = (outcome as { response: HttpResponse }).response.body as Readable;
    for (let i = 0; i < 10; i++) {
      advance(TIMEOUT - 10);
      handler.onResponseData(call.controller, Buffer.from("chunk"));
    }
    expect(call.aborts).toEqual([]);
    advance(TIMEOUT - 1);
    expect(call.aborts).toEqual([]);
    advance(1);
    expect(call.aborts).toHaveLength(1);
    const error = await bodyError(body);
    expect(error.name).toBe("TimeoutError");
    expect(error.message).toBe(MESSAGE);
    expect(error.cause.code).toBe("UND_ERR_BODY_TIMEOUT");
    expect(scheduler.size).toBe(0);
  });

  it("a body paused for its reader is not timed out; reading re-arms it", () => {
    const { call, handler, settled } = start(true);
    handler.onRequestStart(call.controller, null);
    handler.onResponseStart(call.controller, 200, {}, "OK");
    const body = (settled() as { response: HttpResponse }).response.body as Readable;
    const pause = vi.spyOn(call.controller, "pause");
    handler.onResponseData(call.controller, Buffer.alloc(128 * 1024));
    expect(pause).toHaveBeenCalledTimes(1);
    expect(scheduler.size).toBe(0);
    advance(TIMEOUT * 10);
    expect(call.aborts).toEqual([]);
    body.read();
    expect(scheduler.size).toBe(1);
    advance(TIMEOUT - 1);
    expect(call.aborts).toEqual([]);
    advance(1);
    expect(call.aborts).toHaveLength(1);
    body.on("error", () => {});
  });

  it("the end of the response, an error and socketTimeout: 0 leave nothing armed, and nothing fires later", () => {
    const done = start(true);
    done.handler.onRequestStart(done.call.controller, null);
    done.handler.onResponseStart(done.call.controller, 200, {}, "OK");
    done.handler.onResponseEnd(done.call.controller, {});
    const failed = start(true);
    failed.handler.onRequestStart(failed.call.controller, null);
    failed.handler.onResponseError(failed.call.controller, new Error("reset"));
    const off = start(true, 0);
    off.handler.onRequestStart(off.call.controller, null);
    off.handler.onRequestSent();
    expect(scheduler.size).toBe(0);
    advance(TIMEOUT * 10);
    expect(done.call.aborts).toEqual([]);
    expect(failed.call.aborts).toEqual([]);
    expect(off.call.aborts).toEqual([]);
    expect(off.settled()).toBeUndefined();
    expect(scheduler.size).toBe(0);
  });

  it("progress only records the time: the scheduler is touched once per socketTimeout period, not per event", () => {
    const { call, handler, settled } = start(true);
    const arm = vi.spyOn(scheduler, "arm");
    const cancel = vi.spyOn(scheduler, "disarm");
    handler.onRequestStart(call.controller, null);
    expect([arm.mock.calls.length, cancel.mock.calls.length]).toEqual([1, 0]);
    for (let i = 0; i < 3 * TIMEOUT; i++) {
      handler.onBodySent(Buffer.from("x"));
      handler.onBodySent(Buffer.from("y"));
      advance(1);
    }
    // 600 events over three periods: the first arm, then one re-arm from the last event each time the deadline came
    // due (at 100, 199 and 298), no cancel.
    expect([arm.mock.calls.length, cancel.mock.calls.length]).toEqual([4, 0]);
    expect(scheduler.size).toBe(1);
    expect(settled()).toBeUndefined();
  });

  it("fires at exactly the last activity + socketTimeout across re-arms: never later, never earlier", () => {
    const { call, handler, settled } = start(true);
    handler.onRequestStart(call.controller, null);
    // Activity at irregular times over several periods, one of them in the very millisecond the deadline was due.
    for (const gap of [30, 69, 1, 50, TIMEOUT - 1, 7]) {
      advance(gap);
      handler.onRequestSent();
    }
    advance(TIMEOUT - 1);
    expect(settled()).toBeUndefined();
    advance(1);
    expect((settled() as { error: any }).error.message).toBe(MESSAGE);
    expect(call.aborts).toHaveLength(1);
  });

  it("activity read after an event-loop block longer than STALL_CONFIRM_MS, before the late deadline fired, wins: re-armed from that activity", async () => {
    const clock = blockableClock();
    const { call, handler, settled } = start(true);
    handler.onRequestStart(call.controller, null);
    handler.onResponseStart(call.controller, 200, {}, "OK");
    const body = (settled() as { response: HttpResponse }).response.body as Readable;
    advance(TIMEOUT - 1);
    clock.block(STALL_CONFIRM_MS + 1); // blocked over the due time
    // The late wake-up collects the deadline; it fires after the poll phase (Node's own setImmediate).
    advance(1);
    expect(scheduler.size).toBe(1);
    expect(call.aborts).toEqual([]);
    handler.onResponseData(call.controller, Buffer.from("late but in time")); // read in that poll phase
    await afterPollPhase();
    expect(call.aborts).toEqual([]);
    expect(scheduler.size).toBe(1);
    advance(TIMEOUT - 1);
    expect(call.aborts).toEqual([]);
    advance(1);
    expect(call.aborts).toHaveLength(1);
    expect((await bodyError(body)).cause.code).toBe("UND_ERR_BODY_TIMEOUT");
  });

  it("a wake-up late by no more than STALL_CONFIRM_MS fires at once: activity seen after it is too late", async () => {
    const clock = blockableClock();
    const { call, handler, settled } = start(true);
    handler.onRequestStart(call.controller, null);
    handler.onResponseStart(call.controller, 200, {}, "OK");
    const body = (settled() as { response: HttpResponse }).response.body as Readable;
    advance(TIMEOUT - 1);
    clock.block(STALL_CONFIRM_MS);
    advance(1);
    expect(call.aborts).toHaveLength(1);
    expect(scheduler.size).toBe(0);
    expect((await bodyError(body)).cause.code).toBe("UND_ERR_BODY_TIMEOUT");
  });

  it("undici 7's native callbacks (LegacyUndiciRequest) arm, restart and fire the same way", () => {
    const request = new LegacyUndiciRequest(plan(), undefined, undefined, undefined, true);
    let error: any;
    const aborts: unknown[] = [];
    const dispatcher = {
      dispatch() {
        return true;
      },
    } as unknown as DispatcherLike;
    request.start(
      () => {},
      (e) => {
        error = e;
      },
      dispatcher,
      {} as DispatchOptionsLike
    );
    request.onConnect((reason) => {
      aborts.push(reason);
      request.onError(reason as Error);
    });
    expect(scheduler.size).toBe(1);
    advance(TIMEOUT - 10);
    request.onBodySent(Buffer.from("x"));
    advance(TIMEOUT - 10);
    request.onRequestSent();
    advance(TIMEOUT - 1);
    expect(error).toBeUndefined();
    advance(1);
    expect(error.message).toBe(MESSAGE);
    expect(aborts).toEqual([error.cause]);
    expect(scheduler.size).toBe(0);
  });
});
