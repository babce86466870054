/**
 * The signal "the caller started reading this response body", for a `Readable` the transport does not build itself
 * (node:http's `IncomingMessage`, HTTP/2's `ClientHttp2Stream`) or builds with a `read` that runs unasked (undici's
 * body). Every consumer reads through the body's `read()`: `pipe`, `'data'` and `resume()` (`flow()`), `'readable'`
 * loops, `for await` and the SDK's `transformTo*()`. Node itself only calls `read(0)` on a body nobody reads (to
 * refill a buffer below its high-water mark: `_read` runs then, so `_read` is no such signal), so a `read()` asking
 * for data is one. The body's `read` is replaced by one shared function (no closure) that tells the request, found
 * through a symbol; installed only while `unreadBodyTimeout` is on, so a handler without it pays nothing.
 */
import { Readable } from "node:stream";

/** What the watch tells: `RequestCore.bodyReadStarted()`. @internal */
export interface BodyReader {
  bodyReadStarted(): void;
}

const kReader = Symbol("sockeye.bodyReader");

type WatchedBody = Readable & { [kReader]?: BodyReader };

/** The prototype's `read`, bound once (a body class may not override it: Node's body classes do not). */
const protoRead = Readable.prototype.read;

function readWatched(this: WatchedBody, size?: number): unknown {
  if (size !== 0) this[kReader]?.bodyReadStarted();
  return protoRead.call(this, size);
}

/** Tells `reader` when `body` is first read for data (and at each read after: `bodyReadStarted` is then a no-op). @internal */
export function watchBodyRead(body: Readable, reader: BodyReader): void {
  (body as WatchedBody)[kReader] = reader;
  body.read = readWatched as Readable["read"];
}
