/**
 * Http2StreamRequest: the state of one `NodeHttp2Handler.handle()` call, from the call until its stream closes.
 *
 * One object per request holds everything the request needs: its queue links (`Http2Origin`), its idle-watch links
 * (`Http2IdleWatch`, for `requestTimeout`), its 100-continue `Deadline`, its progress counter, and it is its own
 * abort listener (`handleEvent`). Every listener the request registers is a shared module function that finds the
 * request through a symbol (on the stream; on the SDK's legacy `{ onabort }` signal; on a `Readable` request body),
 * so the hot path allocates no closure per request beyond the promise executor. (The pooled `HttpResponse` and the
 * stream itself are the only other per-request allocations.)
 *
 * Progress (for `requestTimeout`): the stream's own activity only, as upstream's `stream.setTimeout`, which Node
 * refreshes on the stream's frames and writes. Four methods of the stream instance are replaced by shared module
 * functions that count and then call the prototype's: `push` (each DATA chunk received, and the end), `_write` /
 * `_writev` (each request-body chunk handed to the session); response and informational headers count too. Each one
 * restarts the stream's idle-watch deadline (`noteProgress`), so sibling streams on the same session never keep a
 * silent stream alive.
 *
 * Truncated bodies: the fourth replaced method is `_destroy`. When a stream whose response arrived is destroyed
 * without an error before its body ended because it was reset with CANCEL or its session went away (Node then ends
 * the body as if it were complete), the body is destroyed with the abnormal-abort error instead, so a truncated body
 * is never mistaken for a whole one. Other reset codes already error the body (`ERR_HTTP2_STREAM_ERROR`, Node); a
 * consumer's own `destroy()` (no reset, session alive) is left alone.
 *
 * Settling: exactly once. The promise resolves when response headers arrive (the body is the stream) and rejects on
 * the first of: abort, inactivity timeout, request-body error (with that error), stream error, RST_STREAM
 * ("aborted"), frame error, or the stream closing without a response. Whatever happens first, the stream's slot is
 * released exactly once, when the stream closes (or at once for a request that never got a stream).
 */
import { HttpResponse, type HttpRequest } from "@smithy/protocol-http";
import type { ClientRequest } from "node:http";
import http2, { type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { Readable } from "node:stream";
import {
  buildAbortError,
  buildQueryString,
  Deadline,
  type DeadlineOwner,
  http2FrameError,
  http2NoResponseError,
  http2StreamAbortedError,
  streamIdleTimeoutError,
  writeBody,
} from "@sockeye/pool-monitor/internal";
import { MIN_CONTINUE_WAIT_MS } from "./constants";
import { getTransformedHeaders } from "./get-transformed-headers";
import type { Http2IdleWatcher } from "./http2-idle-watch";
import type { Http2Origin } from "./http2-origin";
import type { Http2SessionEntry } from "./http2-session-entry";
import type { Http2SessionPool } from "./http2-session-pool";

const { NGHTTP2_CANCEL } = http2.constants;
const kRequest = Symbol("sockeye.http2StreamRequest");

type StreamWithRequest = ClientHttp2Stream & { [kRequest]?: Http2StreamRequest };
type Owned = { [kRequest]?: Http2StreamRequest };
type WriteCallback = (error?: Error | null) => void;
type StreamInternals = {
  push(chunk: unknown, encoding?: BufferEncoding): boolean;
  _write(chunk: unknown, encoding: BufferEncoding, callback: WriteCallback): void;
  _writev(chunks: unknown[], callback: WriteCallback): void;
  _destroy(error: Error | null, callback: WriteCallback): void;
  _readableState?: { ended?: boolean };
};

/** The prototype methods the instrumented ones call (resolved from the first stream's prototype chain). */
let protoMethods: StreamInternals | undefined;

/** How a request ended, for telemetry. @internal */
const OUTCOME_NONE = 0;
const OUTCOME_COMPLETED = 1;
const OUTCOME_FAILED = 2;
const OUTCOME_ABORTED = 3;
const OUTCOME_TIMED_OUT = 4;

/** A signal as the SDK may pass it: a DOM `AbortSignal` or the SDK's own `{ aborted, onabort }` shape. */
export interface AbortSignalLike {
  aborted: boolean;
  reason?: unknown;
  onabort?: ((this: unknown, ev: unknown) => unknown) | null;
  addEventListener?: (type: "abort", listener: { handleEvent(): void }, options?: { once?: boolean }) => void;
  removeEventListener?: (type: "abort", listener: { handleEvent(): void }) => void;
}

function requestOf(stream: ClientHttp2Stream): Http2StreamRequest | undefined {
  return (stream as StreamWithRequest)[kRequest];
}

function onStreamResponse(this: ClientHttp2Stream, headers: IncomingHttpHeaders): void {
  requestOf(this)?.onResponse(headers);
}

function onStreamError(this: ClientHttp2Stream, error: Error): void {
  requestOf(this)?.onError(error);
}

function onStreamAborted(this: ClientHttp2Stream): void {
  requestOf(this)?.onAborted(http2StreamAbortedError(this.rstCode));
}

function onStreamFrameError(this: ClientHttp2Stream, type: number, code: number, id: number): void {
  requestOf(this)?.fail(http2FrameError(type, id, code), OUTCOME_FAILED);
}

function onStreamClose(this: ClientHttp2Stream): void {
  requestOf(this)?.onClose();
}

function onStreamContinue(this: ClientHttp2Stream): void {
  requestOf(this)?.sendBody();
}

function onStreamHeaders(this: ClientHttp2Stream): void {
  const req = requestOf(this);
  if (req !== undefined) req.noteProgress();
}

/** A `Readable` request body failed: the request fails with that very error (its cause chain intact). */
function onRequestBodyError(this: Readable & Owned, error: Error): void {
  const req = this[kRequest];
  this[kRequest] = undefined;
  req?.onBodyError(error);
}

/** The SDK's legacy signal shape (`{ aborted, onabort }`): one shared function, the request found on the signal. */
function onLegacyAbort(this: AbortSignalLike & Owned): void {
  const req = this[kRequest];
  this[kRequest] = undefined;
  req?.handleEvent();
}

function countingPush(this: StreamWithRequest, chunk: unknown, encoding?: BufferEncoding): boolean {
  const req = this[kRequest];
  if (req !== undefined) req.noteProgress();
  return (protoMethods as StreamInternals).push.call(this, chunk, encoding);
}

function countingWrite(this: StreamWithRequest, chunk: unknown, encoding: BufferEncoding, cb: WriteCallback): void {
  const req = this[kRequest];
  if (req !== undefined) req.noteProgress();
  (protoMethods as StreamInternals)._write.call(this, chunk, encoding, cb);
}

function countingWritev(this: StreamWithRequest, chunks: unknown[], cb: WriteCallback): void {
  const req = this[kRequest];
  if (req !== undefined) req.noteProgress();
  (protoMethods as StreamInternals)._writev.call(this, chunks, cb);
}

/** See "Truncated bodies" in the header. */
function guardedDestroy(this: StreamWithRequest, error: Error | null, cb: WriteCallback): void {
  const req = this[kRequest];
  if ((error === null || error === undefined) && req !== undefined && req.settled) {
    const internals = this as unknown as StreamInternals;
    // Other reset codes need nothing: Node destroys the body with ERR_HTTP2_STREAM_ERROR itself.
    const rstCode = this.rstCode;
    const cancelled = rstCode === NGHTTP2_CANCEL || (!rstCode && this.session?.destroyed === true);
    if (cancelled && internals._readableState?.ended !== true) {
      error = http2StreamAbortedError(NGHTTP2_CANCEL);
    }
  }
  (protoMethods as StreamInternals)._destroy.call(this, error, cb);
}

/** Points the stream at its request and replaces the four counted methods (see the header). */
function instrument(stream: ClientHttp2Stream, req: Http2StreamRequest): void {
  const target = stream as unknown as StreamInternals & Owned;
  if (protoMethods === undefined) {
    const proto = Object.getPrototypeOf(stream) as StreamInternals;
    protoMethods = { push: proto.push, _write: proto._write, _writev: proto._writev, _destroy: proto._destroy };
  }
  target[kRequest] = req;
  target.push = countingPush as StreamInternals["push"];
  target._write = countingWrite as StreamInternals["_write"];
  target._writev = countingWritev as StreamInternals["_writev"];
  target._destroy = guardedDestroy as StreamInternals["_destroy"];
}

/**
 * RST_STREAM(CANCEL), as upstream's `stream.close()`, then a local teardown: on a session nghttp2 has already
 * terminated (after a connection error it reported to nobody) `close()` alone never emits `'close'`, which would leak
 * the stream slot.
 */
function cancel(stream: ClientHttp2Stream | undefined, error?: Error): void {
  if (stream === undefined || stream.destroyed) return;
  if (!stream.closed) stream.close(NGHTTP2_CANCEL);
  stream.destroy(error);
}

/** @internal */
export class Http2StreamRequest implements DeadlineOwner, Http2IdleWatcher {
  entry: Http2SessionEntry | undefined = undefined;
  stream: ClientHttp2Stream | undefined = undefined;
  settled = false;
  /** Counted in the pool's in-flight total. */
  counted = false;
  /** Holds a stream slot on `entry`. */
  onSession = false;
  // Queue links (Http2Origin).
  queued = false;
  wasQueued = false;
  waitNext: Http2StreamRequest | undefined = undefined;
  waitPrev: Http2StreamRequest | undefined = undefined;
  // Slot-holder links (Http2Origin), and when the slot was taken (timing.now() ms).
  activeNext: Http2StreamRequest | undefined = undefined;
  activePrev: Http2StreamRequest | undefined = undefined;
  slotAt = 0;
  // Idle watch (requestTimeout).
  watchDeadline: Deadline<Http2IdleWatcher> | undefined = undefined;
  watched = false;
  watchBytes = 0;
  /** The stream's own progress events (see the header); each one restarts the idle watch (`noteProgress`). */
  progress = 0;
  readonly startedAt: number;
  private streamStartedAt = 0;
  private outcome = OUTCOME_NONE;
  private outcomeCounted = false;
  private awaitingContinue = false;
  private bodySent = false;
  private continueDeadline: Deadline | undefined = undefined;
  private abortAttached = false;
  /** A `Readable` request body being piped (its error listener is detached when the stream closes). */
  private pipedBody: (Readable & Owned) | undefined = undefined;

  constructor(
    readonly pool: Http2SessionPool,
    readonly origin: Http2Origin,
    readonly request: HttpRequest,
    /** On a session of its own (event stream or `disableConcurrentStreams`). */
    readonly isolated: boolean,
    /** An event stream: isolated, never queued, not counted against `maxIsolatedSessionsPerOrigin`. */
    readonly eventStream: boolean,
    readonly signal: AbortSignalLike | undefined,
    /** Inactivity limit, ms (`requestTimeout`, or the service default); `undefined` = none. */
    readonly idleMs: number | undefined,
    private readonly resolve: (value: { response: HttpResponse }) => void,
    private readonly reject: (error: unknown) => void
  ) {
    this.startedAt = pool.now();
  }

  /** Attaches the abort listener and the idle watch, then asks the pool for a stream slot. */
  start(): void {
    const signal = this.signal;
    if (signal !== undefined && signal !== null) {
      if (typeof signal.addEventListener === "function") {
        signal.addEventListener("abort", this, { once: true });
      } else {
        // The SDK's legacy signal shape: a single `onabort` slot, as upstream (the last request wins it).
        (signal as AbortSignalLike & Owned)[kRequest] = this;
        signal.onabort = onLegacyAbort as AbortSignalLike["onabort"];
      }
      this.abortAttached = true;
    }
    if (this.idleMs !== undefined) this.pool.watch.watch(this, this.idleMs, this.startedAt);
    try {
      this.pool.acquire(this);
    } catch (error) {
      this.fail(error, OUTCOME_FAILED);
    }
  }

  /** Called by the pool once the request holds a slot on a ready session. */
  startStream(entry: Http2SessionEntry): void {
    if (this.settled) {
      this.pool.released(this, 0);
      return;
    }
    const request = this.request;
    let path = request.path;
    const queryString = request.query ? buildQueryString(request.query) : "";
    if (queryString) path += `?${queryString}`;
    if (request.fragment) path += `#${request.fragment}`;
    let stream: ClientHttp2Stream;
    try {
      stream = entry.session.request({ ...request.headers, ":path": path, ":method": request.method });
    } catch (error) {
      // Free the slot first (the request holds one but has no stream), then reject.
      this.pool.released(this, 0);
      this.fail(error, OUTCOME_FAILED);
      return;
    }
    this.stream = stream;
    this.streamStartedAt = this.pool.now();
    this.noteProgress(); // a stream at last: the idle watch has something to observe
    instrument(stream, this);
    stream.on("response", onStreamResponse);
    stream.on("headers", onStreamHeaders);
    stream.on("error", onStreamError);
    stream.on("aborted", onStreamAborted);
    stream.on("frameError", onStreamFrameError);
    stream.on("close", onStreamClose);
    const headers = request.headers;
    const expect = headers ? (headers.Expect ?? headers.expect) : undefined;
    if (expect === "100-continue") {
      this.awaitingContinue = true;
      stream.once("continue", onStreamContinue);
      this.continueDeadline ??= new Deadline(this, 0);
      this.pool.scheduler.arm(
        this.continueDeadline,
        this.streamStartedAt,
        Math.max(MIN_CONTINUE_WAIT_MS, this.idleMs ?? MIN_CONTINUE_WAIT_MS)
      );
      return;
    }
    this.sendBody();
  }

  /** Writes the body and ends the stream (once). */
  sendBody(): void {
    if (this.bodySent || this.stream === undefined) return;
    this.bodySent = true;
    if (this.awaitingContinue) {
      this.awaitingContinue = false;
      if (this.continueDeadline !== undefined) this.pool.scheduler.cancel(this.continueDeadline);
    }
    this.noteProgress();
    const body = this.request.body;
    if (body instanceof Readable) {
      // Piped here rather than by writeBody, so that a body error reaches the request through a shared listener
      // and rejects with the body's own error.
      const owned = body as Readable & Owned;
      owned[kRequest] = this;
      this.pipedBody = owned;
      body.once("error", onRequestBodyError);
      body.pipe(this.stream);
      return;
    }
    try {
      writeBody(this.stream as unknown as ClientRequest, body);
    } catch (error) {
      this.fail(error, OUTCOME_FAILED);
      cancel(this.stream);
    }
  }

  /** The 100-continue wait ended without `100 Continue`: send the body anyway (upstream behaviour). */
  onDeadline(): void {
    this.sendBody();
  }

  onResponse(headers: IncomingHttpHeaders): void {
    if (this.awaitingContinue) {
      // A final response before 100 Continue: the body is not sent; end our side so the stream can close.
      this.awaitingContinue = false;
      this.bodySent = true;
      if (this.continueDeadline !== undefined) this.pool.scheduler.cancel(this.continueDeadline);
      this.stream?.end();
    }
    this.noteProgress();
    if (this.settled) return;
    this.settled = true;
    this.outcome = OUTCOME_COMPLETED;
    const entry = this.entry;
    if (entry?.isolated) this.pool.isolatedResponded(entry);
    const status = headers[":status"];
    this.resolve({
      response: new HttpResponse({
        statusCode: typeof status === "number" ? status : -1,
        headers: getTransformedHeaders(headers),
        body: this.stream,
      }),
    });
  }

  onError(error: Error): void {
    if (this.settled) {
      if (this.outcome === OUTCOME_COMPLETED) this.outcome = OUTCOME_FAILED;
      return;
    }
    this.fail(error, OUTCOME_FAILED);
  }

  /**
   * The peer reset the stream (RST_STREAM) or the session went away mid-stream. Before the response: reject (as
   * upstream). After it: Node ends the body as if it were complete; destroy it with the error instead, so a truncated
   * body is never mistaken for a whole one.
   */
  onAborted(error: Error): void {
    if (!this.settled) {
      this.fail(error, OUTCOME_FAILED);
      return;
    }
    if (this.outcome === OUTCOME_COMPLETED) this.outcome = OUTCOME_FAILED;
    this.stream?.destroy(error);
  }

  /** The piped request body failed: reject with its error (or fail the response body with it), reset the stream. */
  onBodyError(error: Error): void {
    this.pipedBody = undefined;
    if (this.settled) {
      if (this.outcome === OUTCOME_COMPLETED) this.outcome = OUTCOME_FAILED;
      cancel(this.stream, error);
      return;
    }
    this.fail(error, OUTCOME_FAILED);
    cancel(this.stream);
  }

  onClose(): void {
    this.pool.watch.unwatch(this);
    const body = this.pipedBody;
    if (body !== undefined) {
      this.pipedBody = undefined;
      body[kRequest] = undefined;
      body.removeListener("error", onRequestBodyError);
    }
    if (this.continueDeadline !== undefined) this.pool.scheduler.cancel(this.continueDeadline);
    this.detachAbort();
    if (!this.settled) {
      this.fail(http2NoResponseError(this.entry?.session.destroyed === true), OUTCOME_FAILED);
    }
    this.countOutcome();
    this.pool.released(this, this.pool.now() - this.streamStartedAt);
  }

  /** The session this request waited for failed before it was established. */
  sessionFailed(error: Error): void {
    this.fail(error, OUTCOME_FAILED);
  }

  /** The abort signal fired (this object is the listener). */
  handleEvent(): void {
    this.detachAbort();
    if (this.settled) {
      // After the response: the body reader gets the AbortError (not a silent end).
      if (this.outcome === OUTCOME_COMPLETED) this.outcome = OUTCOME_ABORTED;
      cancel(this.stream, buildAbortError(this.signal));
      return;
    }
    cancel(this.stream);
    this.fail(buildAbortError(this.signal), OUTCOME_ABORTED);
  }

  /**
   * One progress event of this stream: restarts its idle watch and its session's (`sessionTimeout`), and stamps the
   * session's last activity (what `onInactive` compares). O(1), no allocation.
   */
  noteProgress(): void {
    this.progress++;
    const entry = this.entry;
    if (!this.watched && entry === undefined) return;
    const now = this.pool.now();
    const watch = this.pool.watch;
    watch.touch(this, now);
    if (entry !== undefined) {
      entry.socketActiveAt = now;
      watch.touch(entry, now);
    }
  }

  /** The idle watch's view of the stream: its own progress counter once it has a stream, -1 before. */
  activity(): number {
    return this.stream === undefined ? -1 : this.progress;
  }

  /**
   * `requestTimeout` (or the service default) passed with no progress of this stream. Its pooled session is retired
   * too when the session's socket also moved no byte for at least half that long (a dead session; see
   * `Http2SessionPool.sessionSilent`); a silent stream on a busy session leaves the session alone.
   */
  onInactive(now: number): void {
    const ms = this.idleMs ?? 0;
    const error = streamIdleTimeoutError(ms);
    const stream = this.stream;
    const entry = this.entry;
    if (entry !== undefined && this.onSession && now - entry.socketActiveAt >= ms / 2) this.pool.sessionSilent(entry);
    if (this.settled) {
      // Headers arrived, the body stalled: the body reader gets the error.
      if (this.outcome === OUTCOME_COMPLETED) this.outcome = OUTCOME_TIMED_OUT;
      stream?.destroy(error);
      return;
    }
    this.fail(error, OUTCOME_TIMED_OUT);
    cancel(stream);
  }

  /** Rejects (once). A request without a stream also leaves the queue / drops its isolated session now. */
  fail(error: unknown, outcome: number): void {
    if (this.settled) return;
    this.settled = true;
    this.outcome = outcome;
    if (this.stream === undefined) {
      this.pool.watch.unwatch(this);
      this.detachAbort();
      this.pool.abandon(this);
      this.pool.droppedWhileWaiting(this);
      this.countOutcome();
    }
    this.reject(error);
  }

  private detachAbort(): void {
    if (!this.abortAttached) return;
    this.abortAttached = false;
    const signal = this.signal as (AbortSignalLike & Owned) | undefined;
    if (signal === undefined || signal === null) return;
    if (typeof signal.removeEventListener === "function") {
      signal.removeEventListener("abort", this);
    } else if (signal[kRequest] === this) {
      signal[kRequest] = undefined;
      if ((signal.onabort as unknown) === onLegacyAbort) signal.onabort = null;
    }
  }

  private countOutcome(): void {
    if (this.outcomeCounted) return;
    this.outcomeCounted = true;
    const counters = this.origin.counters;
    if (counters === undefined) return;
    switch (this.outcome) {
      case OUTCOME_COMPLETED:
        counters.completed++;
        break;
      case OUTCOME_ABORTED:
        counters.aborted++;
        break;
      case OUTCOME_TIMED_OUT:
        counters.timedOut++;
        break;
      default:
        counters.failed++;
    }
  }
}
