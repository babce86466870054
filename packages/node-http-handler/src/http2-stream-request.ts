/**
 * Http2StreamRequest: one `NodeHttp2Handler.handle()` call until its stream closes, on `RequestCore` (deadlines:
 * `requestTimeout` as `stream_idle`, the 100-continue wait, `unreadBodyTimeout`), linked into its `Http2Origin`.
 *
 * The stream's `push`, `_write` and `_writev` are replaced by shared functions that record its own progress (sibling
 * streams never keep a silent one alive), and `_destroy`, so a body Node would end as complete after a CANCEL or a
 * lost session fails instead. `push` feeds the response body directly; a full body stops Node reading the stream.
 *
 * REFUSED_STREAM means the peer did not process the stream (RFC 9113 §8.7); ENHANCE_YOUR_CALM does not, so only an
 * idempotent method is resent after it. A resendable pooled request is placed again, up to `MAX_REFUSALS` times.
 */
import { HttpResponse, type HttpRequest } from "@smithy/protocol-http";
import type { RequestOutcome } from "@sockeye/pool-monitor";
import type { ClientRequest } from "node:http";
import http2, { type ClientHttp2Stream, type IncomingHttpHeaders } from "node:http2";
import { Readable } from "node:stream";
import {
  type AbortSignalLike,
  type BodyLengthSink,
  bodyOpen as importedBodyOpen,
  type BodySource,
  buildQueryString as importedBuildQueryString,
  DeadlineKind as importedDeadlineKind,
  type DeadlinePlan,
  declaredLength as importedDeclaredLength,
  endResponseBody as importedEndResponseBody,
  failSourceBody as importedFailSourceBody,
  http2FrameError,
  http2NoResponseError,
  http2StreamAbortedError,
  openResponseBody as importedOpenResponseBody,
  pipeBody as importedPipeBody,
  pushBody as importedPushBody,
  queueFullError,
  RequestCore,
  RequestPhase as importedRequestPhase,
  schemeOf as importedSchemeOf,
  streamIdleTimeoutError,
  timing as importedTiming,
  unusableBody as importedUnusableBody,
  unusableBodyError,
  watchBodyRead as importedWatchBodyRead,
  type WireFacts,
  writeBody as importedWriteBody,
} from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";
import { getTransformedHeaders } from "./get-transformed-headers";
import type { Http2Origin, Http2Waiter } from "./http2-origin";
import type { Http2OriginTelemetry } from "./http2-pool-monitor";
import type { Http2SessionEntry } from "./http2-session-entry";

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
const writeBody = importedWriteBody;
const schemeOf = importedSchemeOf;
const declaredLength = importedDeclaredLength;
const buildQueryString = importedBuildQueryString;
const pipeBody = importedPipeBody;
type DeadlineKind = importedDeadlineKind;

const { NGHTTP2_CANCEL, NGHTTP2_ENHANCE_YOUR_CALM, NGHTTP2_REFUSED_STREAM } = http2.constants;

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

function onStreamResponse(this: StreamWithRequest, headers: IncomingHttpHeaders): void {
  this[kRequest]?.onResponse(headers);
}

function onStreamError(this: StreamWithRequest, error: Error): void {
  this[kRequest]?.onError(error);
}

function onStreamAborted(this: StreamWithRequest): void {
  this[kRequest]?.onAborted(http2StreamAbortedError(this.rstCode));
}

function onStreamFrameError(this: StreamWithRequest, type: number, code: number, id: number): void {
  this[kRequest]?.end("failed", http2FrameError(type, id, code), "leave", "leave");
}

function onStreamClose(this: StreamWithRequest): void {
  this[kRequest]?.finish();
}

function onStreamContinue(this: StreamWithRequest): void {
  this[kRequest]?.sendBody();
}

function onStreamHeaders(this: StreamWithRequest): void {
  this[kRequest]?.noteProgress(true);
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
  this[kRequest]?.noteProgress(false);
  (protoMethods as StreamInternals)._write.call(this, chunk, encoding, cb);
}

function countingWritev(this: StreamWithRequest, chunks: unknown[], cb: WriteCallback): void {
  this[kRequest]?.noteProgress(false);
  (protoMethods as StreamInternals)._writev.call(this, chunks, cb);
}

/** A response Node would end as complete after a CANCEL or a lost session, unfinished, fails instead. */
function guardedDestroy(this: StreamWithRequest, error: Error | null, cb: WriteCallback): void {
  if (error == null && this[kRequest]?.responded === true) {
    // Other reset codes need nothing: Node destroys the body with ERR_HTTP2_STREAM_ERROR itself.
    const rstCode = this.rstCode;
    const cancelled = rstCode === NGHTTP2_CANCEL || (!rstCode && this.session?.destroyed === true);
    const ended = (this as unknown as StreamInternals)._readableState?.ended === true;
    if (cancelled && !ended) error = http2StreamAbortedError(NGHTTP2_CANCEL);
  }
  (protoMethods as StreamInternals)._destroy.call(this, error, cb);
}

/** Points the stream at its request and replaces its four methods (see the header). */
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

/** Unlinks the stream from the request; its no-op `'error'` listener stays (a late error must not go unhandled). */
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

/** What `end()` does to a live stream: leave it (Node closes it), destroy it with the error, or reset it (CANCEL). */
type StreamEnd = "leave" | "destroy" | "cancel";

/** The reason a stream is destroyed with while its request body is still being sent (never reaches the caller). */
const UPLOAD_CUT = new Error("request cancelled before its body was sent");

/** @internal */
export class Http2StreamRequest
  extends RequestCore<Http2OriginTelemetry>
  implements Http2Waiter<Http2StreamRequest>, BodyLengthSink, BodySource
{
  entry: Http2PoolSession | undefined = undefined;
  stream: ClientHttp2Stream | undefined = undefined;
  /** It settled with the response: the stream feeds the caller's body now. */
  responded = false;
  // BodySource: the body handed out; the stream is paused while the body's buffer is full.
  streamPaused = false;
  /** The whole response body arrived (in the body's buffer, read or not): an early end no longer touches it. */
  private bodyReceived = false;
  /** Its body was collected or destroyed without an error, and the stream reset for it: what follows reaches nobody. */
  private bodyGone = false;
  onSession = false;
  // Http2Waiter (`Http2Origin`'s lists).
  listTag = 0;
  listNext: Http2StreamRequest | undefined = undefined;
  listPrev: Http2StreamRequest | undefined = undefined;
  slotAt = 0;
  /** Progress events of the stream, and the unread-body watch: response time (-1: none yet), last count, since when. */
  progress = 0;
  respondedAt = -1;
  seenProgress = 0;
  progressAt = 0;
  responseHeaders: IncomingHttpHeaders | undefined = undefined;
  private awaitingContinue = false;
  private bodySent = false;
  private refusals = 0;
  /** `reset()` ran: what the stream does from then on (its end pushed, `'aborted'` from inside `close()`) is ours. */
  private wasReset = false;
  /** A `Readable` request body being piped (`finish()` detaches its error listener). */
  private pipedBody: (Readable & Owned) | undefined = undefined;

  constructor(
    readonly host: Http2StreamHost,
    readonly origin: Http2PoolOrigin,
    readonly request: HttpRequest,
    /** On a session of its own (event stream or `disableConcurrentStreams`). */
    readonly isolated: boolean,
    /** Isolated, never queued, not counted against `maxIsolatedSessionsPerOrigin`. */
    readonly eventStream: boolean,
    signal: AbortSignalLike | undefined,
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

  countQueued(): void {
    this.enterQueue(timing.now());
  }

  /** The pool gave it a slot on `entry` (`reused`: one that carried a stream before): it opens its stream. */
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
      // Node refused the request (e.g. an invalid header): no stream, so this finishes now.
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

  sendBody(): void {
    if (this.bodySent || this.stream === undefined) return;
    this.bodySent = true;
    if (this.awaitingContinue) {
      this.awaitingContinue = false;
      this.endDeadline(DeadlineKind.Continue);
    }
    const body = this.request.body;
    if (body instanceof Readable) {
      // A body that failed while the request waited for its stream would never end the pipe: its error now.
      if (body.errored !== null && body.errored !== undefined) {
        this.onBodyError(body.errored);
        return;
      }
      const declared = declaredLength(this.request.headers, PACKAGE_PREFIX);
      const problem = unusableBody(body, declared);
      if (problem !== undefined) {
        this.onBodyError(unusableBodyError(PACKAGE_PREFIX, problem));
        return;
      }
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

  /** Continue wait over: send the body (as upstream). `requestTimeout`: the session may be checked (`sessionSilent`). */
  protected override deadlineExpired(kind: DeadlineKind, ms: number, now: number): void {
    if (kind === DeadlineKind.Continue) {
      this.sendBody();
      return;
    }
    if (kind === DeadlineKind.UnreadBody) {
      // Nobody read the body: reset the stream; the body keeps the error for its first reader.
      this.end("timed_out", this.deadlineError(kind, ms, now), "cancel", "cancel");
      return;
    }
    const entry = this.entry;
    if (entry !== undefined && this.onSession && now - entry.socketActiveAt >= ms / 2) this.host.sessionSilent(entry);
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
    // Flowing, the stream ends (and Node closes it) as soon as Node pushes its end.
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

  /**
   * BodySource: what Node pushes goes straight into the body; `false` (buffer full) stops Node reading the stream. The
   * `null` Node pushes while destroying a stream does not end the body: it gets the stream's error.
   */
  bodyChunk(stream: ClientHttp2Stream, chunk: Buffer | null): boolean {
    if (chunk === null) {
      if (!stream.destroyed) {
        this.bodyReceived = true;
        // The request side done too: the stream closes next and the body ends after it (`finish()`), so whoever
        // waits for the body's end sees the slot free.
        if (!stream.writableFinished) endResponseBody(this);
      }
      return (protoMethods as StreamInternals).push.call(stream, null);
    }
    if (pushBody(this, chunk)) return true;
    this.streamPaused = true;
    return false;
  }

  readMore(): void {
    if (!this.streamPaused) return;
    this.streamPaused = false;
    const stream = this.stream;
    if (stream !== undefined && !stream.destroyed) (stream as unknown as Readable)._read(0);
  }

  /** The caller destroyed the body before its end: reset the stream (completed, or failed with the caller's error). */
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

  protected override releaseCollectedBody(): void {
    this.bodyGone = true;
    this.reset("cancel");
  }

  /** The stream emitted `'error'` (Node is destroying it): so does the body, if it was handed out. */
  onError(error: Error): void {
    if (this.bodyGone) return;
    const code = this.stream?.rstCode;
    if (this.responded) failSourceBody(this, error);
    else if ((code === NGHTTP2_REFUSED_STREAM || code === NGHTTP2_ENHANCE_YOUR_CALM) && this.telemetry !== undefined) {
      this.telemetry.streamsRefused++; // sent again or not
    }
    if (this.mayPlaceAgain()) this.placeAgain();
    else this.end("failed", error, "leave", "leave");
  }

  /** The peer refused the stream before answering, and the request can be sent again as it was. */
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

  /** The peer reset the stream or the session went away: reject, or fail the body. */
  onAborted(error: Error): void {
    // Destroying the stream inside our own `close()` would drop the RST_STREAM it is about to send.
    if (this.wasReset) return;
    this.end("failed", error, "leave", "destroy");
  }

  /** BodyLengthSink: the piped request body failed, broke its `content-length` or was destroyed before its end. */
  onBodyError(error: Error): void {
    this.end("failed", error, "cancel", "cancel");
  }

  /** The session it waited for failed before it was established, or the handler was destroyed. */
  sessionFailed(error: Error): void {
    this.end("failed", error, "leave", "leave");
  }

  /** Its session closed, or the handler was destroyed, while it held a slot: it ends now, `'close'` or not. */
  sessionGone(error: Error | undefined): void {
    if (error !== undefined) this.end("failed", error, "destroy", "destroy");
    this.finish();
  }

  fail(error: Error, outcome: RequestOutcome): void {
    this.end(outcome, error, "cancel", "cancel");
  }

  /** One progress event of the stream, activity of its session; `received`: a frame (the session's proof of life). */
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

  /** Every early end: before the response, rejects (`beforeResponse`); after it, fails the body (`afterResponse`). */
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
   * Resets the live stream; after `close(CANCEL)` it is destroyed too (on a dead session `close()` never closes it).
   * While the request body is still being sent, `close()` would end our side first (END_STREAM), so the server would
   * take the cut body for a whole one: such a stream is destroyed with an error instead (RST_STREAM INTERNAL_ERROR).
   */
  private reset(how: StreamEnd, error?: Error): void {
    const stream = this.stream;
    if (stream === undefined || stream.destroyed || how === "leave") return;
    this.wasReset = true;
    if (how === "cancel" && !stream.closed) {
      if (!stream.writableEnded) {
        stream.destroy(error ?? UPLOAD_CUT);
        return;
      }
      stream.close(NGHTTP2_CANCEL);
    }
    stream.destroy(error);
  }

  /** The single way out (`'close'` or `end()`), idempotent: tells the pool once (`streamFinished`), then the core. */
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
      // Let go of early (its session went away, `destroy()`): the body ends as the stream did, or is cut.
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
  return body == null || typeof body === "string" || ArrayBuffer.isView(body) || body instanceof ArrayBuffer;
}

/** Activity of `entry` at `now`: restarts its `sessionTimeout` and stamps its last activity. */
function noteSessionActivity(entry: Http2PoolSession, now: number): void {
  entry.socketActiveAt = now;
  const idle = entry.idle;
  if (idle !== undefined) idle.lastActive = now;
}
