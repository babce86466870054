/**
 * Http2StreamRequest: one `NodeHttp2Handler.handle()` call until its stream closes, on `RequestCore` (promise,
 * abort, counting, deadlines: `requestTimeout` as `stream_idle`, and the 100-continue wait), plus its queue and slot
 * links (`Http2Origin`). Every listener is a shared module function that finds the request through a symbol, so
 * nothing but the promise executor is allocated per request.
 *
 * Progress (for `requestTimeout`): the stream's own activity only, as upstream's `stream.setTimeout`. The stream's
 * `push`, `_write` and `_writev` are replaced by shared functions that record `lastActive` and call the prototype's,
 * so sibling streams never keep a silent stream alive. The deadline runs from `handle()`, so it also bounds the wait
 * for a session.
 *
 * Truncated bodies: `_destroy` is replaced too. Node ends the body of a stream reset with CANCEL, or whose session
 * went away, as if complete; the body is destroyed with an error instead.
 *
 * Refused streams: a peer that refuses a stream before answering it with REFUSED_STREAM did not process it (RFC 9113
 * §8.7); ENHANCE_YOUR_CALM (what Node's server sends for every new stream while an unread body keeps more than its
 * `maxSessionMemory` queued on that connection) carries no such promise, so only an idempotent method (RFC 9110
 * §9.2.2) is sent again after it. A pooled request whose body can be sent again (none, a string or bytes) is then
 * placed again, up to `MAX_REFUSALS` times (`Http2SessionPool.streamRefused`), instead of failing; a streamed body,
 * an isolated session or a further refusal fails it as before.
 *
 * The response body is pool-monitor's shared `Readable` (`openResponseBody`), fed by the stream's instrumented `push`
 * (`bodyChunk`: each chunk goes straight into the body, never through the stream's own buffer; a full body makes Node
 * stop reading the stream, `readMore()` restarts it, and Node's flow control stops the peer once the stream's window
 * is full). The request holds the body strongly only while it asks for data:
 * a body its caller dropped is collected, and `bodyCollected()` resets the stream with CANCEL, which frees its slot
 * and its flow-control credit, and counts it (`bodiesReclaimed`). A body that fits in the body's buffer is received
 * in full and its stream closes at once, freeing the slot, as on the other transports. A stream error, reset or cut
 * reaches the body as the stream's own error (`failSourceBody`).
 *
 * One way out: `finish()` runs exactly once, from the stream's `'close'`, or from `end()` for a request with no
 * stream. `end()` is the entry of every early end; the first cause wins.
 */
import { HttpResponse, type HttpRequest } from "@smithy/protocol-http";
import type { RequestOutcome } from "@sockeye/pool-monitor";
import type { ClientRequest } from "node:http";
import http2, { type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { Readable } from "node:stream";
import {
  type AbortSignalLike,
  type BodyLengthSink,
  bodyOpen,
  type BodySource,
  buildQueryString,
  DeadlineKind,
  type DeadlinePlan,
  declaredLength,
  endResponseBody,
  failSourceBody,
  http2FrameError,
  http2NoResponseError,
  http2StreamAbortedError,
  openResponseBody,
  pipeBody,
  pushBody,
  queueFullError,
  RequestCore,
  RequestPhase,
  schemeOf,
  streamIdleTimeoutError,
  timing,
  unusableBody,
  unusableBodyError,
  watchBodyRead,
  type WireFacts,
  writeBody,
} from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";
import { getTransformedHeaders } from "./get-transformed-headers";
import type { Http2Origin, Http2Waiter } from "./http2-origin";
import type { Http2OriginTelemetry } from "./http2-pool-monitor";
import type { Http2SessionEntry } from "./http2-session-entry";

const { NGHTTP2_CANCEL, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** Times one request is placed again after a refused stream: a peer that refuses every stream fails it instead. */
const MAX_REFUSALS = 3;
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
  requestOf(this)?.end("failed", http2FrameError(type, id, code), "leave", "leave");
}

function onStreamClose(this: ClientHttp2Stream): void {
  requestOf(this)?.finish();
}

function onStreamContinue(this: ClientHttp2Stream): void {
  requestOf(this)?.sendBody();
}

function onStreamHeaders(this: ClientHttp2Stream): void {
  const req = requestOf(this);
  if (req !== undefined) req.noteProgress(true);
}

/** A `Readable` request body failed: the request fails with that very error (its cause chain intact). */
function onRequestBodyError(this: Readable & Owned, error: Error): void {
  const req = this[kRequest];
  this[kRequest] = undefined;
  req?.onBodyError(error);
}

function countingPush(this: StreamWithRequest, chunk: unknown, encoding?: BufferEncoding): boolean {
  const req = this[kRequest];
  if (req !== undefined) {
    req.noteProgress(true);
    if (req.responded) return req.bodyChunk(this, chunk as Buffer | null);
  }
  return (protoMethods as StreamInternals).push.call(this, chunk, encoding);
}

function countingWrite(this: StreamWithRequest, chunk: unknown, encoding: BufferEncoding, cb: WriteCallback): void {
  const req = this[kRequest];
  if (req !== undefined) req.noteProgress(false);
  (protoMethods as StreamInternals)._write.call(this, chunk, encoding, cb);
}

function countingWritev(this: StreamWithRequest, chunks: unknown[], cb: WriteCallback): void {
  const req = this[kRequest];
  if (req !== undefined) req.noteProgress(false);
  (protoMethods as StreamInternals)._writev.call(this, chunks, cb);
}

/** See "Truncated bodies" in the header. */
function guardedDestroy(this: StreamWithRequest, error: Error | null, cb: WriteCallback): void {
  const req = this[kRequest];
  if ((error === null || error === undefined) && req !== undefined && req.responded) {
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
 * `finish()`: the stream's listeners are removed and it no longer points at the request (its instrumented methods
 * then only call the prototype's). Its `'error'` listener stays, a no-op from now on: a request ended before its
 * stream closed (`sessionGone()`) may still see Node emit the destroyed stream's error, which must not go unhandled.
 */
function detachStream(stream: ClientHttp2Stream): void {
  (stream as StreamWithRequest)[kRequest] = undefined;
  stream.removeListener("response", onStreamResponse);
  stream.removeListener("headers", onStreamHeaders);
  stream.removeListener("aborted", onStreamAborted);
  stream.removeListener("frameError", onStreamFrameError);
  stream.removeListener("close", onStreamClose);
  stream.removeListener("continue", onStreamContinue);
}

/** The pool's session entry and origin types, as the request sees them. @internal */
export type Http2PoolSession = Http2SessionEntry<Http2StreamRequest>;
/** @internal */
export type Http2PoolOrigin = Http2Origin<Http2PoolSession, Http2StreamRequest>;

/** What a request needs from its pool (`Http2SessionPool`, which implements it: no import cycle). @internal */
export interface Http2StreamHost {
  /** Places `req` on a session or queues it. Throws only if `http2.connect()` throws. */
  acquire(req: Http2StreamRequest): void;
  /** Called once per request by `finish()`: out of the queue, its slot handed on or its isolated session dropped. */
  streamFinished(req: Http2StreamRequest): void;
  /** The peer refused the stream of `req` before answering it: free the slot and place `req` again. */
  streamRefused(req: Http2StreamRequest): void;
  /** The isolated session `entry` delivered its response: it takes no new stream. */
  isolatedResponded(entry: Http2PoolSession): void;
  /** A stream on `entry` timed out while no stream on it made progress either: retire it unless one does now. */
  sessionSilent(entry: Http2PoolSession): void;
}

/**
 * What `end()` does to a live stream: leave it (Node is closing it already), `destroy(error)` it (RST_STREAM with
 * INTERNAL_ERROR), or reset it with CANCEL (see `reset()`).
 */
type StreamEnd = "leave" | "destroy" | "cancel";

/** @internal */
export class Http2StreamRequest
  extends RequestCore<Http2OriginTelemetry>
  implements Http2Waiter<Http2StreamRequest>, BodyLengthSink, BodySource
{
  entry: Http2PoolSession | undefined = undefined;
  stream: ClientHttp2Stream | undefined = undefined;
  /** It settled with the response: the stream feeds the caller's body now. */
  responded = false;
  // BodySource links to the body handed out (see the header); the stream is paused while the body's buffer is full.
  heldBody: Readable | undefined = undefined;
  bodyRef: WeakRef<Readable> | undefined = undefined;
  streamPaused = false;
  /** The whole response body arrived (in the body's buffer, read or not): an early end no longer touches it. */
  private bodyReceived = false;
  /**
   * Its body was collected unread, or destroyed by its reader without an error, and the stream reset for it: what the
   * stream reports from then on reaches nobody.
   */
  private bodyGone = false;
  /** Holds a stream slot on `entry`. */
  onSession = false;
  // Http2Waiter: on a waiting list, links of the list it is on (waiting or holding a slot), when it took its slot.
  queued = false;
  next: Http2StreamRequest | undefined = undefined;
  prev: Http2StreamRequest | undefined = undefined;
  slotAt = 0;
  /** The stream's own progress events (see the header). */
  progress = 0;
  /**
   * Unread-body watch of the monitor (`Http2PoolMonitor.read()`): when the response was handed out (`-1`: not yet),
   * the `progress` count it last saw and since when that count has not moved (`timing.now()` ms).
   */
  respondedAt = -1;
  seenProgress = 0;
  progressAt = 0;
  /** For `request:finished`: the response headers. */
  responseHeaders: IncomingHttpHeaders | undefined = undefined;
  private awaitingContinue = false;
  private bodySent = false;
  /** Times the peer refused this request's stream (see "Refused streams" in the header). */
  private refusals = 0;
  /**
   * `reset()` ran: what the stream does from then on is ours, not the peer's: its end pushed while it is torn down is
   * no progress, and the `'aborted'` Node emits for it (from inside `close()`) no cause.
   */
  private wasReset = false;
  /** A `Readable` request body being piped (its error listener is detached by `finish()`). */
  private pipedBody: (Readable & Owned) | undefined = undefined;

  constructor(
    readonly host: Http2StreamHost,
    readonly origin: Http2PoolOrigin,
    readonly request: HttpRequest,
    /** On a session of its own (event stream or `disableConcurrentStreams`). */
    readonly isolated: boolean,
    /** An event stream: isolated, never queued, not counted against `maxIsolatedSessionsPerOrigin`. */
    readonly eventStream: boolean,
    signal: AbortSignalLike | undefined,
    /** `requestTimeout` (or the service default) as `stream_idle`, and the 100-continue wait. */
    plan: DeadlinePlan<"http2">
  ) {
    super(plan, origin.counters?.monitor, origin.counters, signal);
  }

  get errorPrefix(): string {
    return PACKAGE_PREFIX;
  }

  get waitsFor(): "connection" {
    return "connection";
  }

  /** Keeps the settle functions, attaches the abort listener, arms the deadlines, then asks the pool for a slot. */
  start(resolve: (value: { response: HttpResponse }) => void, reject: (error: unknown) => void): void {
    this.begin(resolve, reject);
    try {
      this.host.acquire(this);
    } catch (error) {
      this.end("failed", error, "leave", "leave");
    }
  }

  /** `maxQueuedRequests` (`max`) refused it: `waiting` streams wait already. It fails now (counted queue-full). */
  queueFull(max: number, waiting: number): void {
    const o = this.telemetry;
    const m = this.monitor;
    if (o !== undefined && m !== undefined && !m.coreDestroyed) m.queueFullRejected(o);
    this.end("failed", queueFullError(PACKAGE_PREFIX, max, waiting, "stream slot"), "leave", "leave");
  }

  /** It waits behind others for a stream slot (counted queued). */
  countQueued(): void {
    this.enterQueue(timing.now());
  }

  /**
   * The pool gave it a slot on `entry` at `now` (`reused`: a session that carried a stream before): it opens its
   * stream. Never after `finish()`.
   */
  startStream(entry: Http2PoolSession, now: number, reused: boolean): void {
    this.countAcquired(now, reused);
    this.enterPhase(RequestPhase.Acquired, now);
    const request = this.request;
    let path = request.path;
    const queryString = request.query ? buildQueryString(request.query) : "";
    if (queryString) path += `?${queryString}`;
    if (request.fragment) path += `#${request.fragment}`;
    let stream: ClientHttp2Stream;
    try {
      stream = entry.session.request({ ...request.headers, ":path": path, ":method": request.method });
    } catch (error) {
      // Node refused the request (e.g. an invalid header): no stream, so this finishes now and frees the slot.
      this.end("failed", error, "leave", "leave");
      return;
    }
    this.stream = stream;
    // HEADERS out: session activity, not stream progress (the stream's limit counts from handle(), as upstream).
    noteSessionActivity(entry, now);
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
      this.armDeadline(DeadlineKind.Continue, now);
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
      this.endDeadline(DeadlineKind.Continue);
    }
    // No progress yet: each chunk handed to the session is (`_write`/`_writev`); an empty body is none, as upstream.
    const body = this.request.body;
    if (body instanceof Readable) {
      // A body that failed while the request waited for its stream would never end the pipe: its error now.
      if (body.errored !== null && body.errored !== undefined) {
        this.end("failed", body.errored, "cancel", "cancel");
        return;
      }
      const declared = declaredLength(this.request.headers, PACKAGE_PREFIX);
      const problem = unusableBody(body, declared);
      if (problem !== undefined) {
        this.end("failed", unusableBodyError(PACKAGE_PREFIX, problem), "cancel", "cancel");
        return;
      }
      // Piped here so that a body error reaches the request through a shared listener, as itself.
      const owned = body as Readable & Owned;
      owned[kRequest] = this;
      this.pipedBody = owned;
      body.once("error", onRequestBodyError);
      pipeBody(body, this.stream as unknown as ClientRequest, declared, PACKAGE_PREFIX, this);
      return;
    }
    try {
      writeBody(this.stream as unknown as ClientRequest, body);
    } catch (error) {
      this.end("failed", error, "cancel", "leave");
    }
  }

  /**
   * The 100-continue wait ended: send the body anyway (as upstream). `requestTimeout` passed: the session is retired
   * too when no stream on it made progress for half that long either (`Http2SessionPool.sessionSilent`).
   */
  protected override deadlineExpired(kind: DeadlineKind, ms: number, now: number): void {
    if (kind === DeadlineKind.Continue) {
      this.sendBody();
      return;
    }
    if (kind === DeadlineKind.UnreadBody) {
      // Nobody read the body: reset the stream (its slot goes to the next stream); the body keeps the error for its
      // first reader (`onError` → `failSourceBody`).
      this.end("timed_out", this.deadlineError(kind, ms, now), "cancel", "cancel");
      return;
    }
    const entry = this.entry;
    if (entry !== undefined && this.onSession && now - entry.socketActiveAt >= ms / 2) this.host.sessionSilent(entry);
    // Before the response: reject and reset the stream; after it (the body stalled): the body reader gets the error.
    this.end("timed_out", streamIdleTimeoutError(ms), "cancel", "destroy");
  }

  onResponse(headers: IncomingHttpHeaders): void {
    if (this.awaitingContinue) {
      // A final response before 100 Continue: the body is not sent; end our side so the stream can close.
      this.awaitingContinue = false;
      this.bodySent = true;
      this.endDeadline(DeadlineKind.Continue);
      this.stream?.end();
    }
    this.noteProgress(true);
    if (this.settled) return;
    this.responded = true;
    this.outcome = "completed";
    this.responseHeaders = headers;
    const now = timing.now();
    this.respondedAt = this.progressAt = now;
    this.seenProgress = this.progress;
    const entry = this.entry;
    if (entry?.isolated) this.host.isolatedResponded(entry);
    const status = headers[":status"];
    const body = openResponseBody(this);
    if (this.plan.unreadBodyIndex >= 0) watchBodyRead(body, this);
    // The chunks bypass the stream (`bodyChunk`); flowing, it ends (and Node closes it) as soon as Node pushes its end.
    this.stream?.resume();
    this.resolveWith(
      {
        response: new HttpResponse({
          statusCode: typeof status === "number" ? status : -1,
          headers: getTransformedHeaders(headers),
          body,
        }),
      },
      now
    );
  }

  // ---- BodySource: the response body handed out (see the header) ------------------------------------------------

  /**
   * A chunk (or the end, `null`) Node pushes on the stream once the response is handed out: straight into the body,
   * so it is buffered once. `false` (the body's buffer is full, or the body is gone) makes Node stop reading the
   * stream, so flow control holds the peer; `readMore()` restarts it. Node also pushes `null` while it destroys a
   * stream: a cut body gets the stream's error instead (`onError`, `finish()`).
   */
  bodyChunk(stream: ClientHttp2Stream, chunk: Buffer | null): boolean {
    if (chunk === null) {
      if (!stream.destroyed) {
        this.bodyReceived = true;
        // The request side done too: the stream closes next, and the body ends after it (`finish()`), so whoever
        // waits for the body's end sees the slot free, as when the stream was the body. Else it ends now.
        if (!stream.writableFinished) endResponseBody(this);
      }
      return (protoMethods as StreamInternals).push.call(stream, null);
    }
    if (pushBody(this, chunk)) return true;
    this.streamPaused = true;
    return false;
  }

  /** The body wants data: Node reads the stream again (its `_read` restarts reading on the session). */
  readMore(): void {
    if (!this.streamPaused) return;
    this.streamPaused = false;
    const stream = this.stream;
    if (stream !== undefined && !stream.destroyed) (stream as unknown as Readable)._read(0);
  }

  /**
   * The caller destroyed the body before its end: reset the stream with CANCEL (so the peer stops sending and frees
   * it), counted as destroying the stream itself was: completed, or failed with the caller's error.
   */
  bodyDestroyed(error: Error | null): void {
    if (!bodyOpen(this)) return;
    this.heldBody = this.bodyRef = undefined;
    if (error !== null) {
      this.end("failed", error, "cancel", "cancel");
      return;
    }
    this.bodyGone = true;
    this.reset("cancel");
  }

  bodyCollected(): void {
    if (this.isFinished || !bodyOpen(this)) return;
    this.heldBody = this.bodyRef = undefined;
    this.bodyGone = true;
    const monitor = this.monitor;
    const telemetry = this.telemetry;
    if (monitor !== undefined && telemetry !== undefined && !monitor.coreDestroyed) monitor.bodyReclaimed(telemetry);
    this.reset("cancel");
  }

  /** The stream emitted `'error'` (Node is destroying it): so does the body, if it was handed out. */
  onError(error: Error): void {
    if (this.bodyGone) return;
    if (this.responded) failSourceBody(this, error);
    if (this.mayPlaceAgain()) this.placeAgain();
    else this.end("failed", error, "leave", "leave");
  }

  /** The peer refused the stream before answering, and the request can be sent again as it was (see the header). */
  private mayPlaceAgain(): boolean {
    const stream = this.stream;
    if (stream === undefined || this.settled || this.isolated || this.refusals >= MAX_REFUSALS) return false;
    const code = stream.rstCode;
    const refused =
      code === NGHTTP2_REFUSED_STREAM ||
      (code === NGHTTP2_ENHANCE_YOUR_CALM && IDEMPOTENT_METHODS.has(this.request.method.toUpperCase()));
    return refused && replayable(this.request.body);
  }

  /** Lets go of the refused stream (Node closes it) and its slot, and asks the pool for another. */
  private placeAgain(): void {
    this.refusals++;
    detachStream(this.stream as ClientHttp2Stream);
    this.stream = undefined;
    this.bodySent = false;
    if (this.awaitingContinue) {
      this.awaitingContinue = false;
      this.endDeadline(DeadlineKind.Continue);
    }
    this.countReleased(timing.now());
    this.host.streamRefused(this);
  }

  /** The peer reset the stream or the session went away: reject, or fail the body (see "Truncated bodies"). */
  onAborted(error: Error): void {
    // Destroying the stream inside our own `close()` would drop the RST_STREAM it is about to send.
    if (this.wasReset) return;
    this.end("failed", error, "leave", "destroy");
  }

  /** BodyLengthSink: the piped request body failed or broke its `content-length`: reject (or fail the body), reset the stream. */
  onBodyError(error: Error): void {
    this.end("failed", error, "cancel", "cancel");
  }

  /** The session this request waited for failed before it was established, or the handler was destroyed. */
  sessionFailed(error: Error): void {
    this.end("failed", error, "leave", "leave");
  }

  /** Its session closed, or the handler was destroyed, while it held a slot: it ends now, `'close'` or not. */
  sessionGone(error: Error | undefined): void {
    if (error !== undefined) this.end("failed", error, "destroy", "destroy");
    this.finish();
  }

  /** The abort signal fired, or a deadline: reject (or fail the body) and reset the stream with CANCEL. */
  fail(error: Error, outcome: RequestOutcome): void {
    this.end(outcome, error, "cancel", "cancel");
  }

  /**
   * One progress event: restarts the stream's and the session's deadlines. `received`: a frame from the peer, also
   * the session's proof of life for a pending silence check (`activitySeq`).
   */
  noteProgress(received: boolean): void {
    if (this.wasReset) return;
    this.progress++;
    const entry = this.entry;
    const now = timing.now();
    this.lastActive = now;
    if (entry === undefined) return;
    if (received) entry.activitySeq++;
    noteSessionActivity(entry, now);
  }

  /**
   * Every early end (abort, deadline, stream or body error, failed session, `destroy()`, refused request). Before the
   * response: rejects once and treats the stream as `beforeResponse` says (no stream: finishes now). After it: the
   * body gets `error` as `afterResponse` says, unless it arrived in full. The first cause wins. No-op once
   * finished.
   */
  end(outcome: RequestOutcome, error: unknown, beforeResponse: StreamEnd, afterResponse: StreamEnd): void {
    if (this.isFinished) return;
    if (!this.settled) {
      this.outcome = outcome;
      this.rejectWith(error, outcome);
      if (this.stream === undefined) this.finish();
      else if (beforeResponse !== "leave") this.reset(beforeResponse);
      return;
    }
    const stream = this.stream;
    if (stream === undefined) return;
    if (!this.responded || this.bodyReceived) {
      if (afterResponse !== "leave") this.reset("cancel");
      return;
    }
    if (this.outcome === "completed") this.outcome = outcome;
    this.reset(afterResponse, error as Error);
  }

  /**
   * Resets the live stream: `"cancel"` sends RST_STREAM(CANCEL), then destroys it locally (on a terminated session
   * `close()` alone never emits `'close'`, leaking the slot); `"destroy"` destroys it with `error`.
   */
  private reset(how: StreamEnd, error?: Error): void {
    const stream = this.stream;
    if (stream === undefined || stream.destroyed || how === "leave") return;
    this.wasReset = true;
    if (how === "cancel" && !stream.closed) stream.close(NGHTTP2_CANCEL);
    stream.destroy(error);
  }

  /** The single way out, idempotent: removes listeners, tells the pool once (`streamFinished`), then the core's. */
  override finish(): void {
    if (this.isFinished) return;
    const unsettled = this.settled ? undefined : http2NoResponseError(this.entry?.session.destroyed === true);
    if (unsettled !== undefined) this.outcome = "failed";
    const body = this.pipedBody;
    if (body !== undefined) {
      this.pipedBody = undefined;
      body[kRequest] = undefined;
      body.removeListener("error", onRequestBodyError);
    }
    const stream = this.stream;
    if (stream !== undefined) {
      detachStream(stream);
      // Let go of before it ended or failed the body (its session went away, `destroy()`): the body ends as the
      // stream did, or is cut with the stream's error (see "Truncated bodies").
      if (bodyOpen(this)) {
        if (this.bodyReceived || stream.readableEnded) endResponseBody(this);
        else failSourceBody(this, stream.errored ?? http2StreamAbortedError(NGHTTP2_CANCEL));
      }
    }
    if (this.onSession) this.countReleased(timing.now());
    this.host.streamFinished(this);
    super.finish(this.outcome ?? "failed", unsettled);
  }

  protected wireFacts(): WireFacts {
    const headers = this.request.headers;
    const response = this.responseHeaders;
    return {
      scheme: schemeOf(this.origin.name),
      method: this.request.method,
      statusCode: response?.[":status"],
      protocolVersion: "2",
      requestBodySize: headers?.["content-length"] ?? headers?.["Content-Length"],
      responseBodySize: response?.["content-length"],
      error: this.stream?.errored,
    };
  }
}

/** RFC 9110 §9.2.2: the methods a server must treat as if sent once, however often they arrive. */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);

/** A request body that can be sent again as it was: none, a string or bytes (a stream is consumed as it is sent). */
function replayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === "string" ||
    ArrayBuffer.isView(body) ||
    body instanceof ArrayBuffer
  );
}

/** Activity of `entry` at `now` (not of a stream): restarts its `sessionTimeout` and stamps its last activity. */
function noteSessionActivity(entry: Http2PoolSession, now: number): void {
  entry.socketActiveAt = now;
  const idle = entry.idle;
  if (idle !== undefined) idle.lastActive = now;
}
