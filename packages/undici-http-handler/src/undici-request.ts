/**
 * UndiciRequest: the whole per-request state of one `handle()` call, and undici's dispatch handler for it.
 *
 * One object per request holds the promise's settle functions, undici's controller, the response body, the
 * deadline slots (created only for configured concerns), the telemetry list links and, while it waits in its
 * origin's `OriginGate`, the FIFO links (the same `listPrev`/`listNext`: a request is in one list at a time). It is
 * undici's handler in the controller API (`onRequestStart` / `onResponseStart` / `onResponseData` /
 * `onResponseEnd` / `onResponseError`, which undici 7 and 8 both accept), the abort signal's `EventListener`
 * (`handleEvent`), the body's `BodySource`, the gate's `GatedRequest` and the scheduler's `DeadlineOwner`: no
 * closure and no native timer per request.
 *
 * Lifecycle (`requestPhase`): Created → Queued (in the gate's FIFO, handler-owned dispatcher only) → Dispatched (handed
 * to undici, no connection yet) → Connected (`onRequestStart`: connection / acquisition deadline cancelled) →
 * `onResponseStart` (resolve with the response; request deadline cancelled) → `onResponseData`* → `onResponseEnd`
 * | `onResponseError` → Done. A failure while Queued unlinks it (O(1)): undici never sees it. A failure while
 * Dispatched rejects at once and becomes Abandoned: it keeps its slot (the connection being opened for it will
 * serve the next queued request), and when no other request of the origin waits for a connection the origin's
 * connection attempts end now (see connecting-sockets.ts). When undici later hands it a connection,
 * `onRequestStart` throws `REQUEST_GONE`, which undici answers by dropping the request unsent and keeping the
 * connection (undici destroys the socket only when a handler aborts through the controller); the slot is given
 * back then, or when undici fails it (its connection attempt ended).
 * Every path ends in `finish()`, exactly once.
 *
 * `socketTimeout` is the request's idle deadline on the handler's scheduler (not undici's fast timers, about 1 s
 * resolution), restarted lazily: every activity undici reports (the connection, when request-body progress is known
 * to be reported; each request-body chunk written, `onBodySent`; the request sent, `onRequestSent`; the headers; each
 * body chunk) only records `lastActive` (one clock read, one field write, no scheduler touch); when the deadline
 * comes due, it is re-armed at `lastActive + socketTimeout` if there was activity since, else it fires, as undici's
 * timeout error of the phase would, through `controller.abort`. So it fires at the same time as a restart on every
 * event would (never later, never earlier), for one scheduler touch per `socketTimeout` period instead of one per
 * event. Cancelled while the body is paused for its reader and at the end. Its node is the connection / acquisition
 * deadline's (`first`, cancelled when the connection is given, so one node serves both: no second allocation).
 */
import {
  acquisitionTimeoutError,
  bodyAbortedError,
  bodyDestroyedError,
  buildAbortError,
  connectionTimeoutError,
  contentLengthMismatchError,
  Deadline,
  explainRefusal,
  DeadlineKind,
  type DeadlineOwner,
  guardedWarn,
  REQUEST_TIMEOUT_HINT,
  relabelSocketError,
  requestTimeoutError,
  requestTimeoutMessage,
  socketHangUpError,
  socketIdleTimeoutError,
  timing,
  unusableBody,
  unusableBodyError,
} from "@sockeye/pool-monitor/internal";
import { HttpResponse } from "@smithy/protocol-http";
import { Readable } from "node:stream";
import { PACKAGE_PREFIX } from "./constants";
import type { DispatchControllerLike, DispatcherLike, DispatchOptionsLike } from "./dispatcher-like";
import { DESTROYED_BY_HANDLER, handlerDestroyedError } from "./handler-destroyed-error";
import type { GatedRequest, OriginGate } from "./origin-gate";
import type { OriginPoolState, PoolRequestNode } from "./origin-pool-state";
import { parseResponseHeaders } from "./parse-response-headers";
import { type BodySource, createResponseBody, failResponseBody } from "./response-body";
import type { RequestOutcome } from "./undici-pool-monitor";
import { requestFinishedChannel, undiciRequestFinishedEvent } from "./undici-request-finished";
import type { RequestPlan } from "./request-plan";

// Imported values read on every request, bound once: in the CommonJS build (what Node loads) each read of another
// package's export is two getter calls (esbuild's live-binding shims of both packages); read per event they took ~1 %
// of the CPU per request at c = 50 (`--cpu-prof`). The `timing` object is the seam's singleton: spies on it still apply.
const clock = timing;
const DeadlineNode = Deadline;
const Kind = DeadlineKind;
const SmithyResponse = HttpResponse;

/** `socketTimeout`: inactivity while sending, waiting for the headers and between body chunks (this handler's own). */
const SOCKET_IDLE = "socket_idle";

/** The deadline kinds a request arms (`DeadlineKind` of `@sockeye/pool-monitor`, and its socket idle one). @internal */
export type UndiciDeadlineKind =
  | typeof DeadlineKind.Connection
  | typeof DeadlineKind.Acquire
  | typeof DeadlineKind.Request
  | typeof SOCKET_IDLE;

/** Where a request is (see the header). @internal */
export enum Phase {
  Created = 0,
  Queued = 1,
  Dispatched = 2,
  Connected = 3,
  Done = 4,
  /** Failed before a connection while undici still holds it: its gate slot is given back when undici lets go. */
  Abandoned = 5,
}

type Resolve = (value: { response: HttpResponse }) => void;
type Reject = (reason: unknown) => void;

/** undici codes of a connection that closed under the request (before or during the response). */
const SOCKET_CLOSED_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "ETIMEDOUT", "UND_ERR_CLOSED"]);

/**
 * Thrown from `onRequestStart` for a request that already failed: undici then drops it unsent and keeps the
 * connection for the next request (both undici 7 and 8). One shared object: never surfaces to a caller.
 * @internal
 */
export const REQUEST_GONE: Error = Object.assign(new Error(`${PACKAGE_PREFIX} - request already settled`), {
  code: "ERR_SOCKEYE_REQUEST_GONE",
});

/**
 * Everything of a request but the names undici calls it by: `UndiciRequest` (undici's controller API, undici 7 and
 * 8) and `LegacyUndiciRequest` (undici 7's native callbacks, see legacy-undici-request.ts) only map them.
 * @internal
 */
export abstract class UndiciRequestCore
  implements DeadlineOwner<UndiciDeadlineKind>, BodySource, PoolRequestNode, GatedRequest
{
  begunAt: number;
  /** `timing.now()` when undici gave it a connection; -1 while it holds none (0 is a valid clock reading). */
  heldSince = -1;
  pausedAt = 0;
  listTag = 0;
  wasQueued = false;
  listPrev: PoolRequestNode | undefined;
  listNext: PoolRequestNode | undefined;
  requestPhase: Phase = Phase.Created;

  private settleResolve: Resolve | undefined;
  private settleReject: Reject | undefined;
  private settled = false;
  private isFinished = false;
  private controller: DispatchControllerLike | undefined;
  private outcome: RequestOutcome | undefined;
  private pausedForReader = false;
  private responseBody: Readable | undefined;
  /**
   * The connection / acquisition deadline until a connection is given, then the `socketTimeout` one (see the header):
   * while `requestPhase` is `Connected`, whatever kind it was created with, it is the idle deadline.
   */
  private first: Deadline<UndiciDeadlineKind> | undefined;
  private requestSlot: Deadline<UndiciDeadlineKind> | undefined;
  /** `timing.now()` of the last socket activity (`socketTimeout`), read when the idle deadline comes due. */
  private lastActive = 0;
  private targetDispatcher: DispatcherLike | undefined;
  private dispatchOptions: DispatchOptionsLike | undefined;
  /** For `request:finished`: the response, the error the caller saw, whether it left the gate's queue unserved. */
  private httpResponse: HttpResponse | undefined;
  private failure: unknown;
  private leftQueue = false;

  constructor(
    private readonly plan: RequestPlan,
    private readonly o: OriginPoolState | undefined,
    private readonly originGate: OriginGate | undefined,
    private readonly callerSignal: AbortSignalLike | undefined,
    private readonly requestTimeoutMs: number | undefined,
    /**
     * Whether undici is known to report request-body progress to this handler (`onBodySent` / `onRequestSent`: the
     * handler-owned `Agent`): `socketTimeout` then starts with the connection. Otherwise it starts at the first
     * progress event undici reports, and undici's own `headersTimeout` stays the backstop of the phase before.
     */
    private readonly uploadObserved: boolean
  ) {
    this.begunAt = clock.now();
  }

  /** Registers with telemetry, arms deadlines and the abort listener, and dispatches (or queues in the gate). */
  start(resolve: Resolve, reject: Reject, dispatcher: DispatcherLike, options: DispatchOptionsLike): void {
    this.settleResolve = resolve;
    this.settleReject = reject;
    const plan = this.plan;
    const o = this.o;
    const gate = this.originGate;
    if (o !== undefined) {
      plan.poolTelemetry?.requestStarted(o, this, gate !== undefined);
      if (plan.samplesOnTick) plan.deadlineClock.ensureTicking();
    }
    if (plan.firstMs > 0) {
      this.first = new DeadlineNode<UndiciDeadlineKind>(this, plan.firstKind);
      plan.deadlineClock.arm(this.first, this.begunAt, plan.firstMs);
    }
    const requestTimeout = this.requestTimeoutMs;
    if (requestTimeout !== undefined && requestTimeout > 0) {
      this.requestSlot = new DeadlineNode<UndiciDeadlineKind>(this, Kind.Request);
      plan.deadlineClock.arm(this.requestSlot, this.begunAt, requestTimeout);
    }
    const signal = this.callerSignal;
    if (signal !== undefined) {
      if (typeof signal.addEventListener === "function") signal.addEventListener("abort", this, { once: true });
      else signal.onabort = () => this.handleEvent();
    }
    this.targetDispatcher = dispatcher;
    this.dispatchOptions = options;
    if (gate === undefined || gate.admit()) {
      this.dispatchFromGate();
      return;
    }
    this.requestPhase = Phase.Queued;
    gate.enqueueWaiter(this);
    if (o !== undefined) plan.poolTelemetry?.requestQueued(o, this);
  }

  /** Hands the request to undici (counted in its gate's `inUse`, when it has a gate). */
  dispatchFromGate(): void {
    const waited = this.requestPhase === Phase.Queued;
    this.requestPhase = Phase.Dispatched;
    const gate = this.originGate;
    if (gate !== undefined) {
      gate.awaitingConn++;
      const o = this.o;
      // A gated request left its gate's queue for undici: the origin's queue-depth floor follows.
      if (o !== undefined) o.queueShrank(gate.fifoQueue.nodeCount);
    }
    const body = this.dispatchOptions?.body;
    if (waited && body instanceof Readable && unusableBody(body, -1) !== undefined) {
      // Destroyed while the request waited in the gate (checked at handle() too): undici would only call it aborted.
      this.requestFailed(unusableBodyError(PACKAGE_PREFIX, "destroyed"));
      return;
    }
    try {
      ((gate?.dispatchTo ?? this.targetDispatcher) as DispatcherLike).dispatch(this.dispatchOptions, this);
    } catch (error) {
      this.requestFailed(error as Error);
    }
  }

  // ---- undici's events (named by the subclasses) ---------------------------------------------------------------

  /** undici gave the request a connection (`onRequestStart` / `onConnect`); throws `REQUEST_GONE` to refuse it. */
  protected connectionGiven(controller: DispatchControllerLike): void {
    if (this.requestPhase !== Phase.Dispatched) {
      // Failed while waiting for this connection: undici drops the request unsent and keeps the connection, which
      // the gate then gives to the next queued request (after undici's current call returns).
      if (this.requestPhase === Phase.Abandoned) {
        this.requestPhase = Phase.Done;
        const gate = this.originGate;
        if (gate !== undefined) process.nextTick(releaseGateSlot, gate);
      }
      throw REQUEST_GONE;
    }
    this.requestPhase = Phase.Connected;
    this.controller = controller;
    const gate = this.originGate;
    if (gate !== undefined && gate.awaitingConn > 0) gate.awaitingConn--;
    const first = this.first;
    if (first !== undefined) this.plan.deadlineClock.disarm(first);
    const o = this.o;
    const now = clock.now();
    if (this.uploadObserved) this.socketActive(now);
    if (o !== undefined) this.plan.poolTelemetry?.markAcquired(o, this, now);
  }

  /**
   * Socket activity (the connection, a request-body chunk written, the request sent, headers, a body chunk, a paused
   * body read again) at `now`: records it, and arms the `socketTimeout` deadline from `now` if it is not armed. An
   * armed one is not touched: it re-arms itself from `lastActive` when it comes due (`idleDue`).
   */
  protected socketActive(now: number): void {
    const ms = this.plan.idleMs;
    if (ms <= 0 || this.requestPhase !== Phase.Connected) return;
    this.lastActive = now;
    let slot = this.first;
    if (slot === undefined) {
      slot = new DeadlineNode<UndiciDeadlineKind>(this, SOCKET_IDLE);
      this.first = slot;
    }
    if (!slot.armed) this.plan.deadlineClock.arm(slot, now, ms);
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
    if (statusCode < 200 || this.settled) {
      this.requestProgress();
      return;
    }
    const slot = this.requestSlot;
    if (slot !== undefined) this.plan.deadlineClock.disarm(slot);
    this.requestProgress();
    const body = createResponseBody(this);
    this.responseBody = body;
    this.settled = true;
    const resolve = this.settleResolve as Resolve;
    this.settleResolve = this.settleReject = undefined;
    this.httpResponse = new SmithyResponse({
      statusCode,
      reason: statusText,
      headers: parseResponseHeaders(Array.isArray(raw) ? raw : flattenHeaders(headers)),
      body,
    });
    resolve({ response: this.httpResponse });
  }

  /** A body chunk; pauses `controller` when the body's buffer is full. */
  protected dataReceived(controller: DispatchControllerLike, chunk: Buffer): void {
    const body = this.responseBody;
    if (body === undefined || body.destroyed) return;
    const slot = this.first;
    // Armed while Connected means the idle deadline (see `first`); it re-arms itself from `lastActive` when due.
    if (slot?.armed) this.lastActive = clock.now();
    if (body.push(chunk)) return;
    this.pausedForReader = true;
    // Paused for the reader: no inactivity timeout while undici reads nothing (as undici's bodyTimeout).
    if (slot !== undefined) this.plan.deadlineClock.disarm(slot);
    controller.pause();
    const o = this.o;
    if (o !== undefined) this.plan.poolTelemetry?.bodyPaused(o, this, clock.now());
  }

  /** The response ended. */
  protected responseEnded(): void {
    this.releaseSlot();
    this.responseBody?.push(null);
    this.finish(this.outcome ?? "completed");
  }

  /** The request failed in undici (or undici let go of an abandoned one). */
  protected requestFailed(error: Error): void {
    if (error === REQUEST_GONE || this.requestPhase === Phase.Done) return;
    if (this.requestPhase === Phase.Abandoned) {
      // Already settled and closed; undici let go of it (its connection attempt failed or was ended).
      this.requestPhase = Phase.Done;
      this.originGate?.freeSlot();
      return;
    }
    this.releaseSlot();
    const outcome = this.outcome;
    const mapped = this.mapError(error as Error & { code?: string });
    if (!this.settled) this.rejectOnce(mapped);
    else {
      this.failure ??= mapped;
      const body = this.responseBody;
      if (body !== undefined && !body.destroyed) failResponseBody(body, this.bodyError(error, mapped, outcome));
    }
    this.finish(this.outcome ?? "failed");
  }

  // ---- abort signal, deadlines, body ---------------------------------------------------------------------------

  /** The abort signal fired (EventListener interface). */
  handleEvent(): void {
    if (this.isFinished) return;
    const error = buildAbortError(this.callerSignal);
    this.fail(error, "aborted");
  }

  onDeadline(kind: UndiciDeadlineKind, now: number): void {
    // `first` is the idle deadline once connected, whatever kind it was created with (see `first`).
    if (kind === SOCKET_IDLE || (kind !== Kind.Request && this.requestPhase === Phase.Connected)) {
      this.idleDue(now);
      return;
    }
    if (this.settled || this.isFinished) return;
    const plan = this.plan;
    switch (kind) {
      case Kind.Request:
        if (plan.throwsOnTimeout) {
          this.fail(requestTimeoutError(PACKAGE_PREFIX, this.requestTimeoutMs), "timed_out");
        } else {
          guardedWarn(
            plan.warnLogger ?? console,
            `${requestTimeoutMessage(PACKAGE_PREFIX, this.requestTimeoutMs, false)} ${REQUEST_TIMEOUT_HINT}`
          );
        }
        return;
      case Kind.Connection: {
        let detail: string | undefined;
        if (this.requestPhase === Phase.Queued) {
          detail = `The request was still waiting for a free connection (${this.describeQueue()}).`;
        } else if (
          this.originGate === undefined &&
          this.listTag === 1 &&
          this.o !== undefined &&
          this.o.queuedNow > 0
        ) {
          // A caller's dispatcher: undici's queue and its connection attempts cannot be told apart from here.
          detail = `The request may still have been waiting in the dispatcher's queue (${this.o.queuedNow} queued there).`;
        }
        this.fail(connectionTimeoutError(PACKAGE_PREFIX, plan.connectLimitMs, detail), "timed_out");
        return;
      }
      case Kind.Acquire:
        this.fail(
          acquisitionTimeoutError(
            PACKAGE_PREFIX,
            plan.acquireMs,
            now - this.begunAt,
            "connection",
            this.describeQueue()
          ),
          "timed_out"
        );
        return;
      default:
        // Compile-time exhaustiveness only (a missed kind does not compile).
        kind satisfies never;
    }
  }

  readMore(): void {
    if (!this.pausedForReader) return;
    this.pausedForReader = false;
    const o = this.o;
    if (o !== undefined) this.plan.poolTelemetry?.bodyResumed(o, this);
    if (this.plan.idleMs > 0) this.socketActive(clock.now());
    this.controller?.resume();
  }

  bodyDestroyed(error: Error | null): void {
    if (this.isFinished) return;
    // Destroyed by the caller before the end: free the connection (undici then calls onResponseError).
    if (this.outcome === undefined) this.outcome = error ? "failed" : "completed";
    this.controller?.abort(error ?? bodyDestroyedError(PACKAGE_PREFIX));
  }

  /** `UndiciHttpHandler.destroy()` reached this request while it waited in its gate (undici never saw it). */
  failQueuedOnDestroy(): void {
    this.fail(
      handlerDestroyedError(`while the request was waiting for a free connection (${this.describeQueue()})`),
      "failed"
    );
  }

  // ---- internals -----------------------------------------------------------------------------------------------

  /** Rejects (before headers) or errors the body (after), aborts the exchange, and records the outcome. */
  private fail(error: Error, outcome: RequestOutcome): void {
    if (this.isFinished) return;
    if (this.outcome === undefined) this.outcome = outcome;
    const phase = this.requestPhase;
    if (phase === Phase.Connected) {
      this.rejectOnce(error);
      // undici calls onResponseError (the body, if any, fails there); it closes the connection.
      (this.controller as DispatchControllerLike).abort(error);
      return;
    }
    // No connection yet: reject now and leave; undici never sends it (see the header).
    this.rejectOnce(error);
    const gate = this.originGate;
    if (phase === Phase.Queued) {
      this.requestPhase = Phase.Done;
      this.leftQueue = true;
      if (gate !== undefined) {
        gate.unlinkWaiter(this);
        // The last one waiting: a connection still being opened for an abandoned request serves nobody now.
        gate.abandonIfUnneeded();
      }
    } else if (phase === Phase.Dispatched) {
      // undici still holds it: the slot stays taken until undici lets go (onRequestStart / onResponseError).
      this.requestPhase = Phase.Abandoned;
      if (gate !== undefined) {
        if (gate.awaitingConn > 0) gate.awaitingConn--;
        gate.abandonIfUnneeded();
      }
    }
    this.finish(this.outcome);
  }

  /** Rejects the promise with `error` (deadlines cancelled) unless it is already settled. */
  private rejectOnce(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.failure = error;
    const reject = this.settleReject as Reject;
    this.settleResolve = this.settleReject = undefined;
    this.cancelDeadlines();
    reject(error);
  }

  /** The request is done with its slot and connection. */
  private releaseSlot(): void {
    const first = this.first;
    if (first !== undefined) this.plan.deadlineClock.disarm(first);
    const phase = this.requestPhase;
    this.requestPhase = Phase.Done;
    const o = this.o;
    if (o !== undefined && this.heldSince >= 0) this.plan.poolTelemetry?.requestReleased(o, this, clock.now());
    const gate = this.originGate;
    if (gate === undefined) return;
    if (phase === Phase.Dispatched) {
      if (gate.awaitingConn > 0) gate.awaitingConn--;
      gate.freeSlot();
    } else if (phase === Phase.Connected) {
      gate.freeSlot();
    } else if (phase === Phase.Queued) {
      gate.unlinkWaiter(this);
    }
  }

  private cancelDeadlines(): void {
    const scheduler = this.plan.deadlineClock;
    if (this.first !== undefined) scheduler.disarm(this.first);
    if (this.requestSlot !== undefined) scheduler.disarm(this.requestSlot);
  }

  /**
   * The idle deadline came due at `now`: activity since it was armed moves it to `lastActive + socketTimeout` (the
   * time a restart on every event would have given it); none, and the socket timed out.
   */
  private idleDue(now: number): void {
    if (this.isFinished || this.requestPhase !== Phase.Connected) return;
    const ms = this.plan.idleMs;
    const last = this.lastActive;
    if (last + ms > now) this.plan.deadlineClock.arm(this.first as Deadline<UndiciDeadlineKind>, last, ms);
    else this.socketTimedOut();
  }

  /**
   * `socketTimeout` fired: aborts the exchange with undici's own timeout error for the phase (code
   * `UND_ERR_HEADERS_TIMEOUT` before the headers, `UND_ERR_BODY_TIMEOUT` after), so the rejection or body error takes
   * exactly the path (and the `TimeoutError` message) of undici's headersTimeout / bodyTimeout.
   */
  private socketTimedOut(): void {
    const headers = !this.settled;
    const cause = Object.assign(
      new Error(headers ? "Headers Timeout Error" : "Body Timeout Error"),
      headers
        ? { name: "HeadersTimeoutError", code: "UND_ERR_HEADERS_TIMEOUT" }
        : { name: "BodyTimeoutError", code: "UND_ERR_BODY_TIMEOUT" }
    );
    // undici calls onResponseError with it (errored → mapError) and closes the connection.
    (this.controller as DispatchControllerLike).abort(cause);
  }

  private finish(outcome: RequestOutcome): void {
    if (this.isFinished) return;
    this.isFinished = true;
    const monitor = this.plan.poolTelemetry;
    if (this.o !== undefined && monitor?.wants(requestFinishedChannel)) {
      monitor.emit(
        undiciRequestFinishedEvent(
          this.o,
          this.dispatchOptions,
          this.httpResponse,
          outcome,
          this.failure,
          this.begunAt,
          this.leftQueue
        ),
        requestFinishedChannel
      );
    }
    this.cancelDeadlines();
    this.targetDispatcher = undefined;
    this.dispatchOptions = undefined;
    const signal = this.callerSignal;
    if (signal !== undefined) {
      if (typeof signal.removeEventListener === "function") signal.removeEventListener("abort", this);
      else signal.onabort = null;
    }
    const o = this.o;
    if (o !== undefined) this.plan.poolTelemetry?.markClosed(o, this, outcome);
    // Unreachable by undici's contract (every request ends in onResponseStart or onResponseError); never leave a
    // promise hanging.
    if (!this.settled) this.rejectOnce(new Error(`${PACKAGE_PREFIX} - the request ended without a response.`));
  }

  /**
   * The error a body fails with after the headers. A transport failure (reset, FIN or truncation mid-body, an
   * abort, `destroy()`) has `NodeHttpHandler`'s shape, `Error("aborted")` with `code: "ECONNRESET"` (the SDK
   * retries it the same way), what happened as `cause`; a body inactivity timeout stays a `TimeoutError`.
   */
  private bodyError(raw: Error & { code?: string }, mapped: Error, outcomeBefore: RequestOutcome | undefined): Error {
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
      // One error object per request: the SDK decorates the rejection ($metadata).
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

  private describeQueue(): string {
    const gate = this.originGate;
    if (gate !== undefined) return `maxSockets=${gate.gateLimit ?? "unlimited"}, ${gate.fifoQueue.nodeCount} queued`;
    const o = this.o;
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

/** The abort-signal shapes the SDK passes (DOM `AbortSignal` or Smithy's legacy one). @internal */
export interface AbortSignalLike {
  aborted: boolean;
  reason?: unknown;
  addEventListener?: (type: "abort", listener: { handleEvent(): void }, options?: { once?: boolean }) => void;
  removeEventListener?: (type: "abort", listener: { handleEvent(): void }) => void;
  onabort?: ((this: unknown, ...args: any[]) => any) | null;
}
