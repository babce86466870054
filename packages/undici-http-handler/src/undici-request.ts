/**
 * UndiciRequest: one `handle()` call as undici's dispatch handler, on `RequestCore` (promise, abort, counting,
 * deadlines, phases). It is also the body's `BodySource` and its gate's `GatedRequest` (the FIFO's node while queued).
 *
 * Beside the core's phases it keeps what only undici needs: `controller` (set once undici gave it a connection) and
 * `holdsGateSlot` (counted in its gate's `inUse`, from dispatch until undici lets go of it). A request that fails
 * while undici holds it without a connection rejects at once and keeps its slot: `onRequestStart` then refuses the
 * connection with `REQUEST_GONE` (undici drops the request unsent and keeps the connection), or undici's error for
 * it frees the slot.
 *
 * `socketTimeout` is the core's `socket_idle` deadline: activity only records `lastActive`; it is suspended while the
 * body is paused for its reader, and fires through `controller.abort` with undici's error for the phase.
 */
import {
  type AbortSignalLike,
  type BodySource,
  bodyAbortedError,
  bodyClosedEarlyError,
  bodyDestroyedError,
  bodyOpen as importedBodyOpen,
  closedEarly,
  connectionTimeoutError,
  contentLengthMismatchError,
  DeadlineKind as importedDeadlineKind,
  endResponseBody as importedEndResponseBody,
  explainRefusal,
  failSourceBody as importedFailSourceBody,
  guardedWarn,
  openResponseBody as importedOpenResponseBody,
  pushBody as importedPushBody,
  isUnreadBodyError,
  queueFullError,
  REQUEST_TIMEOUT_HINT,
  RequestCore,
  RequestPhase as importedRequestPhase,
  relabelSocketError,
  requestTimeoutMessage,
  schemeOf as importedSchemeOf,
  socketHangUpError,
  socketIdleTimeoutError,
  timing as importedTiming,
  unusableBody as importedUnusableBody,
  unusableBodyError,
  watchBodyRead as importedWatchBodyRead,
  type WireFacts,
} from "@sockeye/pool-monitor/internal";
import { HttpResponse } from "@smithy/protocol-http";
import { Readable } from "node:stream";
import { PACKAGE_PREFIX } from "./constants";
import type { DispatchControllerLike, DispatcherLike, DispatchOptionsLike } from "./dispatcher-like";
import { DESTROYED_BY_HANDLER, handlerDestroyedError } from "./handler-destroyed-error";
import type { GatedRequest, OriginGate } from "./origin-gate";
import type { OriginPoolState, PoolRequestNode } from "./origin-pool-state";
import { parseResponseHeaders } from "./parse-response-headers";
import type { RequestOutcome } from "./undici-pool-monitor";
import type { RequestPlan } from "./request-plan";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const bodyOpen = importedBodyOpen;
const DeadlineKind = importedDeadlineKind;
const endResponseBody = importedEndResponseBody;
const failSourceBody = importedFailSourceBody;
const openResponseBody = importedOpenResponseBody;
const pushBody = importedPushBody;
const RequestPhase = importedRequestPhase;
const timing = importedTiming;
const unusableBody = importedUnusableBody;
const watchBodyRead = importedWatchBodyRead;
const schemeOf = importedSchemeOf;
type DeadlineKind = importedDeadlineKind;

export type { AbortSignalLike };

// Bound once: in the CommonJS build each read of another package's export is a getter call.
const clock = timing;
const SmithyResponse = HttpResponse;
const Connected = RequestPhase.Connected;
const SocketIdle = DeadlineKind.SocketIdle;

type Resolve = (value: { response: HttpResponse }) => void;
type Reject = (reason: unknown) => void;

/** undici codes of a connection that closed under the request (before or during the response). */
const SOCKET_CLOSED_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "ETIMEDOUT", "UND_ERR_CLOSED"]);

/** Thrown to refuse a connection (see the header); one shared object that never surfaces to a caller. @internal */
export const REQUEST_GONE: Error = Object.assign(new Error(`${PACKAGE_PREFIX} - request already settled`), {
  code: "ERR_SOCKEYE_REQUEST_GONE",
});

/** Everything of a request but the names undici calls it by (see the two subclasses). @internal */
export abstract class UndiciRequestCore
  extends RequestCore<OriginPoolState>
  implements BodySource, PoolRequestNode, GatedRequest
{
  pausedAt = 0;
  listTag = 0;
  listPrev: PoolRequestNode | undefined;
  listNext: PoolRequestNode | undefined;
  /** See the header. */
  private holdsGateSlot = false;
  private controller: DispatchControllerLike | undefined;
  private targetDispatcher: DispatcherLike | undefined;
  private dispatchOptions: DispatchOptionsLike | undefined;
  /** The response's status (0: none yet) and `content-length` header, for `request:finished`. */
  private responseStatus = 0;
  private responseLength: string | undefined = undefined;

  constructor(
    override readonly plan: RequestPlan,
    o: OriginPoolState | undefined,
    private readonly originGate: OriginGate | undefined,
    callerSignal: AbortSignalLike | undefined,
    /**
     * undici reports request-body progress (handler-owned `Agent`): `socketTimeout` starts with the connection.
     * Otherwise it starts at the first progress event, and undici's `headersTimeout` is the backstop before.
     */
    private readonly uploadObserved: boolean
  ) {
    super(plan, plan.poolTelemetry, o, callerSignal);
  }

  get errorPrefix(): string {
    return PACKAGE_PREFIX;
  }

  get waitsFor(): "connection" {
    return "connection";
  }

  /** Registers with telemetry, arms deadlines and the abort listener, and dispatches (or queues in the gate). */
  start(resolve: Resolve, reject: Reject, dispatcher: DispatcherLike, options: DispatchOptionsLike): void {
    this.begin(resolve, reject);
    const plan = this.plan;
    const o = this.telemetry;
    const gate = this.originGate;
    if (o !== undefined && plan.poolTelemetry !== undefined) {
      if (plan.poolTelemetry.requestStarted(o, this, gate !== undefined)) this.enterQueue(this.begunAt);
      if (plan.samplesOnTick) plan.scheduler.ensureTicking();
    }
    this.targetDispatcher = dispatcher;
    this.dispatchOptions = options;
    const admission = gate === undefined ? "dispatch" : gate.fifoQueue.admit(this, plan.maxQueued);
    if (admission === "dispatch") {
      this.dispatchFromGate();
    } else if (admission === "full") {
      // `maxQueuedRequests`: rejected now, never queued (counted as a failed request, and as queue-full).
      if (o !== undefined) plan.poolTelemetry?.queueFullRejected(o);
      const queued = (gate as OriginGate).fifoQueue.nodeCount;
      this.fail(queueFullError(PACKAGE_PREFIX, plan.maxQueued, queued, "connection"), "failed");
    } else {
      this.enterQueue(clock.now());
    }
  }

  /** Hands the request to undici (counted in its gate's `inUse`, when it has a gate). */
  dispatchFromGate(): void {
    const gate = this.originGate;
    if (gate !== undefined) {
      this.holdsGateSlot = true;
      gate.awaitingConn++;
      const o = this.telemetry;
      if (o !== undefined) o.queueShrank(gate.fifoQueue.nodeCount);
    }
    const body = this.dispatchOptions?.body;
    if (this.wasQueued && body instanceof Readable && unusableBody(body, -1) !== undefined) {
      // Destroyed while the request waited in the gate (checked at handle() too): undici would only call it aborted.
      this.requestFailed(unusableBodyError(PACKAGE_PREFIX, "destroyed"));
      return;
    }
    try {
      ((gate?.dispatchTarget() ?? this.targetDispatcher) as DispatcherLike).dispatch(this.dispatchOptions, this);
    } catch (error) {
      this.requestFailed(error as Error);
    }
  }

  /** undici gave the request a connection (`onRequestStart` / `onConnect`); throws `REQUEST_GONE` to refuse it. */
  protected connectionGiven(controller: DispatchControllerLike): void {
    if (this.isFinished) {
      // The gate gives the kept connection to the next queued request after undici's current call returns.
      if (this.holdsGateSlot) {
        this.holdsGateSlot = false;
        process.nextTick(releaseGateSlot, this.originGate);
      }
      throw REQUEST_GONE;
    }
    this.controller = controller;
    if (this.holdsGateSlot) (this.originGate as OriginGate).awaitingConn--;
    const now = clock.now();
    this.enterPhase(Connected, now);
    if (this.uploadObserved && this.plan.idleMs > 0) this.armDeadline(SocketIdle, now);
    const o = this.telemetry;
    const monitor = this.plan.poolTelemetry;
    if (o !== undefined && monitor !== undefined) this.countAcquired(now, monitor.markAcquired(o, this, now));
  }

  /** Socket activity at `now`: restarts `socketTimeout` (armed at the first one when upload progress is unobserved). */
  protected socketActive(now: number): void {
    if (this.controller === undefined) return;
    this.lastActive = now;
    if (!this.uploadObserved && !this.deadlineArmed(SocketIdle)) this.armDeadline(SocketIdle, now);
  }

  /** undici wrote a request-body chunk (`onBodySent`) or the whole request (`onRequestSent`). */
  protected requestProgress(): void {
    if (this.plan.idleMs > 0) this.socketActive(clock.now());
  }

  /** Response headers: `raw` is undici's raw list when it has one, else its parsed object is flattened. */
  protected responseStarted(
    statusCode: number,
    raw: Buffer[] | string[] | null | undefined,
    headers: Record<string, string | string[] | undefined> | null | undefined,
    statusText: string | undefined
  ): void {
    // One clock read for the activity and the resolution (each read is a global `performance` lookup).
    const now = clock.now();
    if (this.plan.idleMs > 0) this.socketActive(now);
    if (statusCode < 200 || this.settled) return;
    const parsed = parseResponseHeaders(Array.isArray(raw) ? raw : flattenHeaders(headers));
    this.responseStatus = statusCode;
    this.responseLength = parsed["content-length"];
    const body = openResponseBody(this);
    if (this.plan.unreadBodyIndex >= 0) watchBodyRead(body, this);
    const response = new SmithyResponse({
      statusCode,
      reason: statusText,
      headers: parsed,
      body,
    });
    this.resolveWith({ response }, now);
  }

  /** A body chunk; pauses `controller` when the body's buffer is full. */
  protected dataReceived(controller: DispatchControllerLike, chunk: Buffer): void {
    if (!bodyOpen(this)) return;
    if (this.plan.idleMs > 0) this.lastActive = clock.now();
    if (pushBody(this, chunk)) return;
    // Paused for the reader: no inactivity timeout while undici reads nothing (as undici's bodyTimeout).
    this.pauseIdle();
    controller.pause();
    const o = this.telemetry;
    if (o !== undefined) this.plan.poolTelemetry?.bodyPaused(o, this, clock.now());
  }

  protected responseEnded(): void {
    this.releaseSlot();
    endResponseBody(this);
    this.end("completed");
  }

  /** The request failed in undici (or undici let go of an abandoned one). */
  protected requestFailed(error: Error): void {
    if (error === REQUEST_GONE) return;
    if (this.isFinished) {
      if (this.holdsGateSlot) {
        this.holdsGateSlot = false;
        (this.originGate as OriginGate).freeSlot();
      }
      return;
    }
    this.releaseSlot();
    const outcome = this.outcome;
    const mapped = this.mapError(error as Error & { code?: string });
    if (!this.settled) this.rejectWith(mapped, "failed");
    else {
      this.failure ??= mapped;
      if (bodyOpen(this)) failSourceBody(this, this.bodyError(error, mapped, outcome));
    }
    this.end("failed");
  }

  protected override deadlineExpired(kind: DeadlineKind, ms: number, now: number): void {
    if (kind === DeadlineKind.UnreadBody) {
      // The body keeps the error for its first reader.
      if (this.controller !== undefined) this.fail(this.deadlineError(kind, ms, now)!, "timed_out");
      return;
    }
    if (kind === SocketIdle) {
      // Not after a rejection before the headers (the exchange is being aborted already).
      if (this.controller !== undefined && (this.responseStatus !== 0 || !this.settled)) {
        this.socketTimedOut();
      }
      return;
    }
    if (this.settled || this.isFinished) return;
    if (kind === DeadlineKind.Request && !this.plan.throwsOnTimeout) {
      guardedWarn(
        this.plan.warnLogger ?? console,
        `${requestTimeoutMessage(PACKAGE_PREFIX, ms, false)} ${REQUEST_TIMEOUT_HINT}`
      );
      return;
    }
    super.deadlineExpired(kind, ms, now);
  }

  override connectionDetail(): string | undefined {
    if (this.originGate?.fifoQueue.has(this)) {
      return `The request was still waiting for a free connection (${this.describeQueue()}).`;
    }
    const o = this.telemetry;
    if (this.originGate === undefined && this.listTag === 1 && o !== undefined && o.queuedNow > 0) {
      // A caller's dispatcher: undici's queue and its connection attempts cannot be told apart from here.
      return `The request may still have been waiting in the dispatcher's queue (${o.queuedNow} queued there).`;
    }
    return undefined;
  }

  readMore(): void {
    if (!this.idlePaused) return;
    const o = this.telemetry;
    if (o !== undefined) this.plan.poolTelemetry?.bodyResumed(o, this);
    this.resumeIdle(clock.now());
    this.controller?.resume();
  }

  bodyDestroyed(error: Error | null): void {
    if (this.isFinished) return;
    // Destroyed by the caller before the end: free the connection (undici then calls onResponseError).
    if (this.outcome === undefined) this.outcome = error ? "failed" : "completed";
    this.controller?.abort(error ?? bodyDestroyedError(PACKAGE_PREFIX));
  }

  /** As a caller's `destroy()`: counted completed; undici calls onResponseError and closes the connection. */
  protected override releaseCollectedBody(): void {
    if (this.outcome === undefined) this.outcome = "completed";
    this.controller?.abort(bodyDestroyedError(PACKAGE_PREFIX));
  }

  /** `UndiciHttpHandler.destroy()` reached this request while it waited in its gate (undici never saw it). */
  failQueuedOnDestroy(): void {
    this.fail(
      handlerDestroyedError(`while the request was waiting for a free connection (${this.describeQueue()})`),
      "failed"
    );
  }

  /** Rejects (before headers) or errors the body (after), aborts the exchange, and records the outcome. */
  fail(error: Error, outcome: RequestOutcome): void {
    if (this.isFinished) return;
    if (this.outcome === undefined) this.outcome = outcome;
    this.rejectWith(error, outcome);
    const controller = this.controller;
    if (controller !== undefined) {
      // undici calls onResponseError (the body, if any, fails there); it closes the connection.
      controller.abort(error);
      return;
    }
    const gate = this.originGate;
    if (gate !== undefined && (this.holdsGateSlot || gate.fifoQueue.has(this))) {
      // Dispatched: the slot stays taken until undici lets go (see the header). Queued: it leaves the queue.
      if (this.holdsGateSlot) gate.awaitingConn--;
      else gate.unlinkWaiter(this);
      gate.abandonIfUnneeded();
    }
    this.end(this.outcome);
  }

  /** Done with its connection: counted released, its gate slot freed. */
  private releaseSlot(): void {
    const o = this.telemetry;
    if (o !== undefined && this.heldSince >= 0) {
      this.plan.poolTelemetry?.requestReleased(o, this);
      this.countReleased(clock.now());
    }
    if (!this.holdsGateSlot) return;
    this.holdsGateSlot = false;
    const gate = this.originGate as OriginGate;
    if (this.controller === undefined) gate.awaitingConn--;
    gate.freeSlot();
  }

  /**
   * `socketTimeout` fired: aborts with undici's own timeout error for the phase (`UND_ERR_HEADERS_TIMEOUT` /
   * `UND_ERR_BODY_TIMEOUT`), so it takes the path and message of undici's headersTimeout / bodyTimeout.
   */
  private socketTimedOut(): void {
    const headers = !this.settled;
    const cause = Object.assign(
      new Error(headers ? "Headers Timeout Error" : "Body Timeout Error"),
      headers
        ? { name: "HeadersTimeoutError", code: "UND_ERR_HEADERS_TIMEOUT" }
        : { name: "BodyTimeoutError", code: "UND_ERR_BODY_TIMEOUT" }
    );
    (this.controller as DispatchControllerLike).abort(cause);
  }

  /** Leaves the origin's lists, then the core's single way out. */
  private end(outcome: RequestOutcome): void {
    if (this.isFinished) return;
    const o = this.telemetry;
    if (o !== undefined) this.plan.poolTelemetry?.markClosed(o, this);
    this.finish(outcome);
    this.targetDispatcher = undefined;
    this.dispatchOptions = undefined;
  }

  protected wireFacts(): WireFacts {
    const options = this.dispatchOptions;
    const headers = options?.headers;
    return {
      scheme: schemeOf(options?.origin ?? this.telemetry?.origin),
      method: options?.method,
      statusCode: this.responseStatus === 0 ? undefined : this.responseStatus,
      protocolVersion: null,
      requestBodySize: headers === undefined ? undefined : (headers["content-length"] ?? headers["Content-Length"]),
      responseBodySize: this.responseLength,
    };
  }

  /**
   * The error a body fails with after the headers: a transport failure has `NodeHttpHandler`'s shape,
   * `Error("aborted")` with `code: "ECONNRESET"` and the cause; a body inactivity timeout stays a `TimeoutError`.
   */
  private bodyError(raw: Error & { code?: string }, mapped: Error, outcomeBefore: RequestOutcome | undefined): Error {
    if (isUnreadBodyError(raw)) return raw;
    if (outcomeBefore === "aborted" || outcomeBefore === "timed_out") return bodyAbortedError(raw);
    if (raw === DESTROYED_BY_HANDLER) return bodyAbortedError(mapped);
    const code = raw?.code;
    if (code === "UND_ERR_BODY_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT") return mapped;
    if (
      (code !== undefined && SOCKET_CLOSED_CODES.has(code)) ||
      code === "UND_ERR_RES_CONTENT_LENGTH_MISMATCH" ||
      // A chunked / close-delimited body cut short: undici's parser reports the early EOF.
      (raw?.name === "HTTPParserError" && /EOF/.test(String(raw.message)))
    ) {
      return bodyAbortedError(raw);
    }
    return mapped;
  }

  /** undici error → the shape `NodeHttpHandler` users catch (before the headers). */
  private mapError(error: Error & { code?: string }): Error {
    if (error === DESTROYED_BY_HANDLER) {
      return handlerDestroyedError(
        this.controller === undefined
          ? `while the request was waiting for a connection (${this.describeQueue()})`
          : "while the request was in flight"
      );
    }
    const code = error?.code;
    if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
      if (this.outcome === undefined) this.outcome = "timed_out";
      const plan = this.plan;
      return socketIdleTimeoutError(PACKAGE_PREFIX, plan.idleMs, plan.idleIsServiceDefault, error);
    }
    if (code === "UND_ERR_INVALID_ARG") {
      // undici refused a header ("invalid header key" names none): the error every Sockeye handler gives for it.
      return explainRefusal(error, this.dispatchOptions?.headers, PACKAGE_PREFIX) as Error;
    }
    if (code === "UND_ERR_ABORTED" && this.dispatchOptions?.body instanceof Readable) {
      // undici calls a body destroyed without an error before its end "Request aborted": the error of the others.
      if (closedEarly(this.dispatchOptions.body)) return bodyClosedEarlyError(PACKAGE_PREFIX, error);
    }
    if (code === "UND_ERR_REQ_CONTENT_LENGTH_MISMATCH") {
      // A stream body short of or past its content-length (undici checks it while sending): the shape of the others.
      return contentLengthMismatchError(PACKAGE_PREFIX, -1, -1, false, error);
    }
    if (code === "UND_ERR_CONNECT_TIMEOUT") {
      if (this.outcome === undefined) this.outcome = "timed_out";
      return connectionTimeoutError(PACKAGE_PREFIX, this.plan.connectLimitMs, undefined, error);
    }
    if (code !== undefined && SOCKET_CLOSED_CODES.has(code)) {
      // undici's "other side closed": Node reports this as "socket hang up" with code ECONNRESET.
      if (code.startsWith("UND_ERR")) return socketHangUpError(error);
      // ECONNRESET / EPIPE / ETIMEDOUT become TimeoutErrors, as upstream relabels them.
      return relabelSocketError(error);
    }
    return error;
  }

  override describeQueue(): string {
    const gate = this.originGate;
    if (gate !== undefined) return gate.describe();
    const o = this.telemetry;
    if (o === undefined) return "pool statistics unavailable with telemetry: false";
    return `maxSockets=${o.connLimit ?? "unlimited"}, ${o.queuedNow} queued`;
  }

  // Both handler APIs: a request-body chunk written (undici 8 calls it on a controller-API handler too, its
  // interceptors forward it), then the whole request written (the wait for the headers starts).
  onBodySent(_chunk: unknown): void {
    this.requestProgress();
  }

  onRequestSent(): void {
    this.requestProgress();
  }
}

/** undici's controller-API handler (undici 7 and 8): names undici's callbacks, nothing else. @internal */
export class UndiciRequest extends UndiciRequestCore {
  onRequestStart(controller: DispatchControllerLike, _context?: unknown): void {
    this.connectionGiven(controller);
  }

  onResponseStart(
    controller: DispatchControllerLike,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusText?: string
  ): void {
    this.responseStarted(statusCode, controller?.rawHeaders, headers, statusText);
  }

  onResponseData(controller: DispatchControllerLike, chunk: Buffer): void {
    this.dataReceived(controller, chunk);
  }

  onResponseEnd(_controller: DispatchControllerLike, _trailers?: unknown): void {
    this.responseEnded();
  }

  onResponseError(_controller: DispatchControllerLike | undefined, error: Error): void {
    this.requestFailed(error);
  }
}

type AbortFn = (reason?: Error) => void;

/**
 * The request as undici 7's native handler, for undici 7 dispatchers, which would otherwise wrap a controller-API
 * handler in an adapter allocated per request. The request is its own controller. @internal
 */
export class LegacyUndiciRequest extends UndiciRequestCore implements DispatchControllerLike {
  rawHeaders: Buffer[] | null = null;
  private abortFn: AbortFn | undefined;
  private resumeFn: (() => void) | undefined;
  private hold = false;

  onConnect(abort: AbortFn): void {
    this.abortFn = abort;
    this.connectionGiven(this);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText?: string): boolean {
    this.resumeFn = resume;
    this.responseStarted(statusCode, rawHeaders, undefined, statusText);
    return !this.hold;
  }

  onData(chunk: Buffer): boolean {
    this.dataReceived(this, chunk);
    return !this.hold;
  }

  onComplete(_trailers?: unknown): void {
    this.responseEnded();
  }

  onError(error: Error): void {
    this.requestFailed(error);
  }

  abort(reason: Error): void {
    this.abortFn?.(reason);
  }

  pause(): void {
    this.hold = true;
  }

  resume(): void {
    if (!this.hold) return;
    this.hold = false;
    this.resumeFn?.();
  }
}

/** Gives back the slot of a request undici dropped (`process.nextTick` callback: no closure). */
function releaseGateSlot(gate: OriginGate): void {
  gate.freeSlot();
}

/** undici's parsed headers → a flat `[name, value, …]` list (a dispatcher whose controller has no `rawHeaders`). */
function flattenHeaders(headers: Record<string, string | string[] | undefined> | null | undefined): string[] {
  const flat: string[] = [];
  if (headers === null || headers === undefined) return flat;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (Array.isArray(value)) for (const v of value) flat.push(name, v);
    else if (value !== undefined) flat.push(name, value);
  }
  return flat;
}
