/**
 * UndiciRequest: the whole per-request state of one `handle()` call, and undici's dispatch handler for it.
 *
 * One object per request holds the promise's settle functions, undici's abort function, the response body, the
 * deadline slots (created only for configured concerns) and the telemetry list links. It is undici's handler
 * (`onConnect`/`onHeaders`/`onData`/`onComplete`/`onError`, undici's native callback set, so no adapter object is
 * created), the abort signal's `EventListener` (`handleEvent`), the body's `BodySource` and the scheduler's
 * `DeadlineOwner`: no closure and no native timer per request.
 *
 * Lifecycle: start → (queued) → onConnect (has a connection: connection / acquisition deadline cancelled) →
 * onHeaders (resolve with the response; request deadline cancelled) → onData* → onComplete | onError. A deadline or
 * abort before `onConnect` rejects at once and aborts the request the moment undici hands it a connection, before
 * a byte is written. Every path ends in `finish()`, exactly once.
 */
import { timing } from "@sockeye/pool-monitor";
import {
  buildAbortError,
  Deadline,
  type DeadlineOwner,
  type DeadlineScheduler,
} from "@sockeye/node-http-handler/internal";
import { HttpResponse } from "@smithy/protocol-http";
import type { Logger } from "@smithy/types";
import type { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import { PACKAGE_PREFIX } from "./constants";
import { DESTROYED_BY_HANDLER, handlerDestroyedError } from "./handler-destroyed-error";
import type { OriginPoolState, PoolRequestNode } from "./origin-pool-state";
import { parseResponseHeaders } from "./parse-response-headers";
import { type BodySource, createResponseBody } from "./response-body";
import type { RequestOutcome, UndiciPoolMonitor } from "./undici-pool-monitor";

/** Deadline kinds. @internal */
export enum Kind {
  Connection = 1,
  Acquisition = 2,
  Request = 3,
}

/**
 * Per-config request settings, built once per resolved config and shared by every request.
 * @internal
 */
export interface RequestPlan {
  /** `min(connectionTimeout, socketAcquisitionTimeout)` (both end when the request gets a connection), or 0. */
  firstMs: number;
  firstKind: Kind;
  connectionTimeout: number | undefined;
  socketAcquisitionTimeout: number | undefined;
  requestTimeout: number | undefined;
  throwOnRequestTimeout: boolean;
  /** Inactivity timeout given to undici as headersTimeout / bodyTimeout (0 = none). */
  socketTimeout: number;
  socketTimeoutIsServiceDefault: boolean;
  logger: Logger | undefined;
  scheduler: DeadlineScheduler;
  monitor: UndiciPoolMonitor | undefined;
  /** Whether the monitor samples on the scheduler (socketMonitor "interval"). */
  sampling: boolean;
}

type Resolve = (value: { response: HttpResponse }) => void;
type Reject = (reason: unknown) => void;
type AbortFn = (reason?: Error) => void;

const SOCKET_CLOSED_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "ETIMEDOUT", "UND_ERR_CLOSED"]);

/** @internal */
export class UndiciRequest implements DeadlineOwner, BodySource, PoolRequestNode {
  startedAt: number;
  acquiredAt = 0;
  pausedAt = 0;
  listed = 0;
  listPrev: PoolRequestNode | undefined = undefined;
  listNext: PoolRequestNode | undefined = undefined;

  private resolve: Resolve | undefined = undefined;
  private reject: Reject | undefined = undefined;
  private settled = false;
  private finished = false;
  private abortFn: AbortFn | undefined = undefined;
  /** Set when the request failed before undici gave it a connection: abort it as soon as it does. */
  private pendingAbort: Error | undefined = undefined;
  private outcome: RequestOutcome | undefined = undefined;
  private resumeFn: (() => void) | undefined = undefined;
  private paused = false;
  private body: Readable | undefined = undefined;
  private first: Deadline | undefined = undefined;
  private requestSlot: Deadline | undefined = undefined;

  constructor(
    private readonly plan: RequestPlan,
    private readonly o: OriginPoolState | undefined,
    private readonly abortSignal: AbortSignalLike | undefined,
    private readonly requestTimeout: number | undefined
  ) {
    this.startedAt = timing.now();
  }

  /** Registers with telemetry, arms deadlines and the abort listener, and dispatches. */
  start(resolve: Resolve, reject: Reject, dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): void {
    this.resolve = resolve;
    this.reject = reject;
    const plan = this.plan;
    const o = this.o;
    if (o !== undefined) {
      plan.monitor?.requestStarted(o, this);
      if (plan.sampling) plan.scheduler.ensureTicking();
    }
    if (plan.firstMs > 0) {
      this.first = new Deadline(this, plan.firstKind);
      plan.scheduler.arm(this.first, this.startedAt, plan.firstMs);
    }
    const requestTimeout = this.requestTimeout;
    if (requestTimeout !== undefined && requestTimeout > 0) {
      this.requestSlot = new Deadline(this, Kind.Request);
      plan.scheduler.arm(this.requestSlot, this.startedAt, requestTimeout);
    }
    const signal = this.abortSignal;
    if (signal !== undefined) {
      if (typeof signal.addEventListener === "function") signal.addEventListener("abort", this, { once: true });
      else signal.onabort = () => this.handleEvent();
    }
    try {
      dispatcher.dispatch(options, this as unknown as Dispatcher.DispatchHandler);
    } catch (error) {
      this.onError(error as Error);
    }
  }

  // ---- undici handler -----------------------------------------------------------------------------------------

  onConnect(abort: AbortFn): void {
    const pending = this.pendingAbort;
    if (pending !== undefined) {
      abort(pending);
      return;
    }
    this.abortFn = abort;
    const first = this.first;
    if (first !== undefined) this.plan.scheduler.cancel(first);
    const o = this.o;
    if (o !== undefined) this.plan.monitor?.requestAcquired(o, this, timing.now());
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText?: string): boolean {
    if (statusCode < 200 || this.settled) return true;
    this.resumeFn = resume;
    const slot = this.requestSlot;
    if (slot !== undefined) this.plan.scheduler.cancel(slot);
    const body = createResponseBody(this);
    this.body = body;
    this.settled = true;
    const resolve = this.resolve as Resolve;
    this.resolve = this.reject = undefined;
    resolve({
      response: new HttpResponse({ statusCode, reason: statusText, headers: parseResponseHeaders(rawHeaders), body }),
    });
    return true;
  }

  onData(chunk: Buffer): boolean {
    const body = this.body;
    if (body === undefined || body.destroyed) return true;
    if (body.push(chunk)) return true;
    this.paused = true;
    const o = this.o;
    if (o !== undefined) this.plan.monitor?.bodyPaused(o, this, timing.now());
    return false;
  }

  onComplete(): void {
    this.release();
    this.body?.push(null);
    this.finish(this.outcome ?? "completed");
  }

  onError(error: Error): void {
    this.release();
    const mapped = this.mapError(error as Error & { code?: string });
    const outcome = this.outcome ?? "failed";
    if (!this.settled) {
      this.settled = true;
      const reject = this.reject as Reject;
      this.resolve = this.reject = undefined;
      reject(mapped);
    } else {
      const body = this.body;
      if (body !== undefined && !body.destroyed) body.destroy(mapped);
    }
    this.finish(outcome);
  }

  // ---- abort signal, deadlines, body ---------------------------------------------------------------------------

  /** The abort signal fired (EventListener interface). */
  handleEvent(): void {
    if (this.finished) return;
    const error = buildAbortError(this.abortSignal);
    this.fail(error, "aborted");
  }

  onDeadline(kind: number, now: number): void {
    if (this.settled || this.finished) return;
    const plan = this.plan;
    if (kind === Kind.Request) {
      const throwIt = plan.throwOnRequestTimeout;
      const message = `${PACKAGE_PREFIX} - [${throwIt ? "ERROR" : "WARN"}] a request has exceeded the configured ${this.requestTimeout} ms requestTimeout.`;
      if (throwIt) {
        this.fail(Object.assign(new Error(message), { name: "TimeoutError", code: "ETIMEDOUT" }), "timed_out");
      } else {
        try {
          (plan.logger ?? console)?.warn?.(
            `${message} Init client requestHandler with throwOnRequestTimeout=true to turn this into an error.`
          );
        } catch {
          // A throwing logger affects nothing.
        }
      }
      return;
    }
    if (kind === Kind.Connection) {
      let message = `${PACKAGE_PREFIX} - the request did not get a connection to the server within the configured connectionTimeout of ${plan.connectionTimeout} ms.`;
      if (this.listed === 1) message += ` It was still waiting for a free connection (${this.describeQueue()}).`;
      this.fail(Object.assign(new Error(message), { name: "TimeoutError" }), "timed_out");
      return;
    }
    const waited = Math.round(now - this.startedAt);
    this.fail(
      Object.assign(
        new Error(
          `${PACKAGE_PREFIX} - the request waited ${waited} ms for a free connection (${this.describeQueue()}) and exceeded the configured socketAcquisitionTimeout of ${plan.socketAcquisitionTimeout} ms. Raise maxSockets, lower concurrency, or make sure response bodies are consumed.`
        ),
        { name: "TimeoutError", code: "ETIMEDOUT" }
      ),
      "timed_out"
    );
  }

  readMore(): void {
    if (!this.paused) return;
    this.paused = false;
    const o = this.o;
    if (o !== undefined) this.plan.monitor?.bodyResumed(o, this);
    this.resumeFn?.();
  }

  bodyDestroyed(error: Error | null): void {
    if (this.finished) return;
    // Destroyed by the caller before the end: free the connection (undici then calls onError).
    if (this.outcome === undefined) this.outcome = error ? "failed" : "completed";
    this.abortFn?.(
      error ?? Object.assign(new Error(`${PACKAGE_PREFIX} - the response body was destroyed.`), { name: "AbortError" })
    );
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  /** Rejects (before headers) or errors the body (after), aborts the exchange, and records the outcome. */
  private fail(error: Error, outcome: RequestOutcome): void {
    if (this.finished) return;
    if (this.outcome === undefined) this.outcome = outcome;
    const abort = this.abortFn;
    if (!this.settled) {
      this.settled = true;
      const reject = this.reject as Reject;
      this.resolve = this.reject = undefined;
      this.cancelDeadlines();
      reject(error);
      if (abort === undefined) {
        // Not on a connection yet: leave telemetry now; undici drops it unsent when its turn comes.
        this.pendingAbort = error;
        this.finish(this.outcome);
        return;
      }
    }
    if (abort !== undefined) abort(error);
    else this.finish(this.outcome);
  }

  private release(): void {
    const first = this.first;
    if (first !== undefined) this.plan.scheduler.cancel(first);
    const o = this.o;
    if (o !== undefined && this.acquiredAt !== 0) this.plan.monitor?.requestReleased(o, this, timing.now());
  }

  private cancelDeadlines(): void {
    const scheduler = this.plan.scheduler;
    if (this.first !== undefined) scheduler.cancel(this.first);
    if (this.requestSlot !== undefined) scheduler.cancel(this.requestSlot);
  }

  private finish(outcome: RequestOutcome): void {
    if (this.finished) return;
    this.finished = true;
    this.cancelDeadlines();
    const signal = this.abortSignal;
    if (signal !== undefined) {
      if (typeof signal.removeEventListener === "function") signal.removeEventListener("abort", this);
      else signal.onabort = null;
    }
    const o = this.o;
    if (o !== undefined) this.plan.monitor?.requestClosed(o, this, outcome);
    if (!this.settled) {
      // Unreachable by undici's contract (every request ends in onHeaders or onError); never leave a promise hanging.
      this.settled = true;
      const reject = this.reject;
      this.resolve = this.reject = undefined;
      reject?.(
        Object.assign(new Error(`${PACKAGE_PREFIX} - the request ended without a response.`), { name: "Error" })
      );
    }
  }

  /** undici error → the shape `NodeHttpHandler` users catch. */
  private mapError(error: Error & { code?: string }): Error {
    if (error === DESTROYED_BY_HANDLER) {
      // One error object per request: the SDK decorates the rejection ($metadata).
      return handlerDestroyedError(
        this.abortFn === undefined
          ? `while the request was waiting for a free connection (${this.describeQueue()})`
          : "while the request was in flight"
      );
    }
    const code = error?.code;
    if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
      if (this.outcome === undefined) this.outcome = "timed_out";
      return Object.assign(
        new Error(
          `${PACKAGE_PREFIX} - the request socket timed out after ${this.plan.socketTimeout} ms of inactivity (${this.plan.socketTimeoutIsServiceDefault ? "service default socket timeout" : "configured by client requestHandler"}).`,
          { cause: error }
        ),
        { name: "TimeoutError" }
      );
    }
    if (code === "UND_ERR_CONNECT_TIMEOUT") {
      if (this.outcome === undefined) this.outcome = "timed_out";
      return Object.assign(
        new Error(
          `${PACKAGE_PREFIX} - the request socket did not establish a connection with the server within the configured timeout of ${this.plan.connectionTimeout} ms.`,
          { cause: error }
        ),
        { name: "TimeoutError" }
      );
    }
    if (code !== undefined && SOCKET_CLOSED_CODES.has(code)) {
      if (code.startsWith("UND_ERR")) {
        // undici's "other side closed": Node reports this as "socket hang up" with code ECONNRESET.
        return Object.assign(new Error(`socket hang up (${error.message})`, { cause: error }), {
          name: "TimeoutError",
          code: "ECONNRESET",
        });
      }
      return Object.assign(error, { name: "TimeoutError" });
    }
    return error;
  }

  private describeQueue(): string {
    const o = this.o;
    if (o === undefined) return "pool statistics unavailable with telemetry: false";
    return `maxSockets=${o.maxSockets ?? "unlimited"}, ${o.queued} queued`;
  }
}

/** The abort-signal shapes the SDK passes (DOM `AbortSignal` or Smithy's legacy one). @internal */
export interface AbortSignalLike {
  aborted: boolean;
  reason?: unknown;
  addEventListener?: (type: "abort", listener: { handleEvent(): void }, options?: { once?: boolean }) => void;
  removeEventListener?: (type: "abort", listener: { handleEvent(): void }) => void;
  onabort?: ((this: unknown, ...args: any[]) => any) | null;
}
