/**
 * The signal "the caller started reading this response body": every consumer (`pipe`, `'data'`, `resume()`,
 * `'readable'` loops, `for await`, `transformTo*()`) reads through `read()`, while Node itself calls only `read(0)`
 * on a body nobody reads. The body's `read` is replaced by one shared function that tells the request, found through
 * a symbol; installed only while `unreadBodyTimeout` is on.
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
