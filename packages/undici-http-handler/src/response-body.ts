/**
 * The response body handed to the SDK: a plain `Readable` fed by undici's `onResponseData` with backpressure
 * (`push()` false pauses the socket, `read` resumes it). Destroying it early aborts the request, so an abandoned body
 * never pins a connection.
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

/** What the body needs from its request. @internal */
export interface BodySource {
  /** The consumer wants more data: resume the socket if it was paused. */
  readMore(): void;
  /** The consumer destroyed the body early: abort the exchange so its connection is freed. */
  bodyDestroyed(error: Error | null): void;
}

const kSource = Symbol("sockeye.bodySource");
const kPendingError = Symbol("sockeye.bodyPendingError");

/** Buffered bytes before the socket is paused, as undici's own body (Node's 16 KiB would pause four times as often). */
const HIGH_WATER_MARK = 64 * 1024;

type SourcedReadable = Readable & { [kSource]: BodySource; [kPendingError]?: Error };

function readBody(this: Readable): void {
  (this as SourcedReadable)[kSource].readMore();
}

function destroyBody(this: Readable, error: Error | null, callback: (error?: Error | null) => void): void {
  (this as SourcedReadable)[kSource].bodyDestroyed(error);
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
 * A new response body reading from `source`.
 * @internal
 */
export function createResponseBody(source: BodySource): Readable {
  const body = new Readable({
    highWaterMark: HIGH_WATER_MARK,
    read: readBody,
    destroy: destroyBody,
  }) as SourcedReadable;
  body[kSource] = source;
  return body;
}
