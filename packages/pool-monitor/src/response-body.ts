/**
 * The response body every handler hands to the SDK: a plain `Readable` fed by its transport (`BodySource`) with
 * backpressure (`pushBody()` false: pause the transport; `read` → `readMore()`: resume it). Destroying it early aborts
 * the exchange, so an abandoned body never pins a connection.
 *
 * Reachability: the transport holds the body strongly only while the body asks for data (from `_read` until
 * `pushBody()` returns false) and weakly otherwise (`bodyRef`, to fail or end it). A body that waits for its reader is
 * therefore reachable only through whoever will read it; once nothing does, it is collected and `bodyCollected()`
 * frees its connection (`body-reclaim.ts`). Listeners on Node objects (the `IncomingMessage`, a stream) reach the
 * source through state on those objects, never the body.
 *
 * Errors behave as Node's `IncomingMessage` does for the SDK, so an unobserved error never crashes the process and
 * a later reader still gets it:
 *
 *   transport error ──► someone listens ('error', 'data' or 'readable')? ──► destroy(error) now
 *                  └──► nobody yet ──► error kept on the body; the first 'error' / 'data' / 'readable' / 'end'
 *                                      listener (the stream collector's pipe, an async iterator, pipeline,
 *                                      finished) makes it destroy(error) on the next tick
 *
 * and `destroy(error)` emits `'error'` only when an `'error'` listener exists (as `IncomingMessage._destroy`);
 * otherwise the body closes with `errored` set and emits `'aborted'`. The `'newListener'` hook exists only on the
 * error path.
 *
 * Not `class extends Readable`: the build keeps class names (tsup `keepNames`), which makes a `Readable` subclass
 * costly to instantiate per request. A base `Readable` with shared `read`/`destroy` functions and the source on a
 * symbol allocates no closure.
 */
import { Readable } from "node:stream";
import { type ReclaimableSource, watchForReclaim } from "./body-reclaim";

/**
 * What the body needs from its transport (the request feeding it), and the transport's two links to it, which only
 * this module's functions write.
 * @internal
 */
export interface BodySource extends ReclaimableSource {
  /** The consumer wants more data: resume the transport if it was paused. Called on every `_read`. */
  readMore(): void;
  /** The consumer destroyed the body early: abort the exchange so its connection is freed. */
  bodyDestroyed(error: Error | null): void;
  /**
   * The body was garbage-collected: nothing can read it any more. If its response is still open (the connection is
   * pinned), abort the exchange, free the connection and count it (`TelemetryCore.bodyReclaimed`); if it had ended,
   * do nothing. Runs in a finalization task, never inside another call; a throw is swallowed.
   */
  bodyCollected(): void;
  /** The body while it asks for data (set by `_read`, cleared when `pushBody()` returns false). */
  heldBody: Readable | undefined;
  /** The body, weakly (from `openResponseBody()` until `endResponseBody()`). */
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
  source.heldBody = undefined;
  source.bodyDestroyed(error);
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
  // The listener is added after this hook returns: deliver once it is in place (the collector adds 'error' right
  // after pipe()).
  process.nextTick(deliverPendingError, this);
}

/**
 * Ends `body` with a transport `error`: destroys it now when someone observes it, else keeps the error until the
 * first consumer attaches (see the header). Never emits an unobserved `'error'`.
 * @internal
 */
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

/**
 * A new response body reading from `source`, linked to it weakly (`bodyRef`) and watched for reclaim: hand it to the
 * caller and keep no other reference to it.
 * @internal
 */
export function openResponseBody(source: BodySource): Readable {
  const body = new Readable({
    highWaterMark: HIGH_WATER_MARK,
    read: readBody,
    destroy: destroyBody,
  }) as SourcedReadable;
  body[kSource] = source;
  source.bodyRef = new WeakRef(body);
  watchForReclaim(body, source);
  return body;
}

/** `source`'s body, if it is still alive (held, or not yet collected). @internal */
export function bodyOf(source: BodySource): Readable | undefined {
  return source.heldBody ?? source.bodyRef?.deref();
}

/**
 * Pushes a chunk into `source`'s body. Returns false when the transport should pause: the body's buffer is full (the
 * body is then no longer held strongly: only its reader keeps it alive) or the body is gone (destroyed, or collected
 * and about to be reclaimed).
 * @internal
 */
export function pushBody(source: BodySource, chunk: Buffer): boolean {
  const body = source.heldBody ?? source.bodyRef?.deref();
  if (body === undefined || body.destroyed) return false;
  if (body.push(chunk)) return true;
  source.heldBody = undefined;
  return false;
}

/** The response ended: ends `source`'s body (if alive) and drops both links. @internal */
export function endResponseBody(source: BodySource): void {
  const body = source.heldBody ?? source.bodyRef?.deref();
  source.heldBody = undefined;
  source.bodyRef = undefined;
  if (body !== undefined && !body.destroyed) body.push(null);
}

/**
 * Fails `source`'s body with a transport `error` (`failResponseBody`), if it is alive, and drops both links.
 * @internal
 */
export function failSourceBody(source: BodySource, error: Error): void {
  const body = source.heldBody ?? source.bodyRef?.deref();
  source.heldBody = undefined;
  source.bodyRef = undefined;
  if (body !== undefined) failResponseBody(body, error);
}
