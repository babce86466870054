/**
 * The response body every handler hands to the SDK: a plain `Readable` fed by its transport (`BodySource`) with
 * backpressure (`pushBody()` false pauses the transport; `read` → `readMore()` resumes it). Destroying it early aborts
 * the exchange, so an abandoned body never pins a connection.
 *
 * The transport holds the body strongly only while it asks for data; then weakly (`bodyRef`), watched for collection
 * so that `bodyCollected()` frees its connection (`body-reclaim.ts`). A body read as it arrives costs no `WeakRef`.
 *
 * Errors behave as `IncomingMessage`'s: with an 'error', 'data' or 'readable' listener, `destroy(error)` now; else
 * the error waits for the first consumer listener, so an unobserved error never crashes the process.
 *
 * Not `class extends Readable`: a subclass is costly to instantiate per request; a base `Readable` with shared
 * `read`/`destroy` functions and the source on a symbol allocates no closure.
 */
import { Readable } from "node:stream";
import { type ReclaimableSource, watchForReclaim } from "./body-reclaim";
import { timing } from "./timing";

/** What the body needs from its transport, and the transport's two links to it (written only here). @internal */
export interface BodySource extends ReclaimableSource {
  /** The consumer wants more data: resume the transport if it was paused. Called on every `_read`. */
  readMore(): void;
  /** The consumer destroyed the body early: abort the exchange so its connection is freed. */
  bodyDestroyed(error: Error | null): void;
  /** The body was collected: an open response is aborted, its connection freed and counted. A throw is swallowed. */
  bodyCollected(): void;
  /** The body while it asks for data (set at its opening and by `_read`, cleared once it waits for its reader). */
  heldBody: Readable | undefined;
  /** The body, weakly, once it first waited for its reader (until `endResponseBody()` / `failSourceBody()`). */
  bodyRef: WeakRef<Readable> | undefined;
}

const kSource = Symbol("sockeye.bodySource");
const kPendingError = Symbol("sockeye.bodyPendingError");

/** Buffered bytes before the transport is paused, as undici's own body (Node's 16 KiB would pause four times as often). */
const HIGH_WATER_MARK = 64 * 1024;

type SourcedReadable = Readable & { [kSource]: BodySource; [kPendingError]?: Error };

function readBody(this: Readable): void {
  const source = (this as SourcedReadable)[kSource];
  source.heldBody = this;
  source.readMore();
}

function destroyBody(this: Readable, error: Error | null, callback: (error?: Error | null) => void): void {
  const source = (this as SourcedReadable)[kSource];
  source.bodyDestroyed(error);
  source.heldBody = undefined;
  source.bodyRef = undefined;
  if (error === null || this.listenerCount("error") > 0) {
    callback(error);
    return;
  }
  // IncomingMessage's rule: an error nobody listens to is not emitted (`errored` keeps it for finished/pipeline).
  this.emit("aborted");
  callback(null);
}

function deliverPendingError(body: SourcedReadable): void {
  const error = body[kPendingError];
  if (error === undefined || body.destroyed) return;
  body[kPendingError] = undefined;
  body.destroy(error);
}

const CONSUMER_EVENTS = new Set<string | symbol>(["error", "data", "readable", "end"]);

function onNewListener(this: Readable, event: string | symbol): void {
  if (!CONSUMER_EVENTS.has(event)) return;
  this.off("newListener", onNewListener);
  // The listener is added after this hook returns: deliver once it is in place.
  process.nextTick(deliverPendingError, this);
}

/** Ends `body` with a transport `error`, now if observed, else when its first consumer attaches. @internal */
export function failResponseBody(body: Readable, error: Error): void {
  if (body.destroyed) return;
  if (body.listenerCount("error") > 0 || body.listenerCount("data") > 0 || body.listenerCount("readable") > 0) {
    body.destroy(error);
    return;
  }
  const sourced = body as SourcedReadable;
  if (sourced[kPendingError] !== undefined) return;
  sourced[kPendingError] = error;
  body.on("newListener", onNewListener);
}

/** A new response body reading from `source`: hand it to the caller and keep no other reference. @internal */
export function openResponseBody(source: BodySource): Readable {
  const body = new Readable({
    highWaterMark: HIGH_WATER_MARK,
    read: readBody,
    destroy: destroyBody,
  }) as SourcedReadable;
  body[kSource] = source;
  // As `IncomingMessage`: the transport pushes whatever arrives, so no read-ahead after each push.
  (body as unknown as { _readableState: { readingMore: boolean } })._readableState.readingMore = true;
  source.heldBody = body;
  return body;
}

/** Whether `source` has a body open (handed out, neither ended nor failed by the transport). @internal */
export function bodyOpen(source: BodySource): boolean {
  return source.heldBody !== undefined || source.bodyRef !== undefined;
}

/** `source`'s body, if it is open and alive (held, or waiting for its reader and not collected). @internal */
export function bodyOf(source: BodySource): Readable | undefined {
  return source.heldBody ?? source.bodyRef?.deref();
}

/** Pushes a chunk into `source`'s body; false: pause (buffer full or body collected). @internal */
export function pushBody(source: BodySource, chunk: Buffer): boolean {
  const body = bodyOf(source);
  if (body === undefined) return false;
  if (body.destroyed || body.push(chunk)) return true;
  filled.push(source);
  if (filled.length === 1) timing.afterPoll(weakenFilled);
  return false;
}

/** Sources whose body filled its buffer during this turn (see the header). */
const filled: BodySource[] = [];

/** End of the turn: a body still full waits for its reader, held weakly and watched from now on. */
function weakenFilled(): void {
  for (let i = 0; i < filled.length; i++) {
    const source = filled[i];
    const body = source.heldBody;
    if (body === undefined || body.destroyed || body.readableLength < body.readableHighWaterMark) continue;
    source.heldBody = undefined;
    if (source.bodyRef === undefined) {
      source.bodyRef = new WeakRef(body);
      watchForReclaim(body, source);
    }
  }
  filled.length = 0;
}

/** The response ended: ends `source`'s body (if alive) and drops both links. @internal */
export function endResponseBody(source: BodySource): void {
  const body = detachBody(source);
  if (body !== undefined && !body.destroyed) body.push(null);
}

/** Fails `source`'s body with a transport `error` (`failResponseBody`), if alive, and drops both links. @internal */
export function failSourceBody(source: BodySource, error: Error): void {
  const body = detachBody(source);
  if (body !== undefined) failResponseBody(body, error);
}

/** `source`'s body, if alive, after dropping both links to it. */
function detachBody(source: BodySource): Readable | undefined {
  const body = bodyOf(source);
  source.heldBody = source.bodyRef = undefined;
  return body;
}
