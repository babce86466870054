/**
 * writeBody: sends a Smithy request body on a Node request (`http.ClientRequest`, or an HTTP/2 client stream) and ends
 * it.
 *
 * A `Readable` body with a declared length (`content-length`, read from the request's headers once the body is sent;
 * `validateRequest()` checked it when the request was handed over) is held to it while it flows: a
 * `LengthGuard` (one object per such upload, found through a symbol on the body, so no closure) counts each chunk in a
 * `'data'` listener registered before the pipe's own, and the pipe does not end the destination (`{ end: false }`):
 * - a chunk that would run past the declared length destroys the destination before the pipe writes it (listeners run
 *   in registration order), so no byte beyond the declared length, which the server would parse as the start of
 *   another request, reaches the connection;
 * - at the body's end the destination is ended only if the count is exact; a short body destroys it instead of leaving
 *   the server waiting for bytes that never come.
 * Either failure hands a `content-length` mismatch error to the request's `BodyLengthSink` (HTTP/2: the stream request,
 * which rejects with it and resets the stream), or, without one, destroys the destination with it (node:http: the
 * request reports its destination's error).
 */
import type { ClientRequest } from "node:http";
import { Readable } from "node:stream";
import { contentLengthMismatchError, unusableBodyError } from "./request-errors";
import { unusableBody } from "./validate-body";
import { declaredLength } from "./validate-headers";

/** What `writeBody()` writes to: a `ClientRequest`, or an HTTP/2 stream (both are `Writable`s). */
type Destination = ClientRequest;

const kGuard = Symbol("sockeye.lengthGuard");

/** Who is told, at once and before the pipe writes on, that a stream body broke its declared length. @internal */
export interface BodyLengthSink {
  /** Must stop the destination synchronously (no further byte may be written to it). */
  onBodyError(error: Error): void;
}

/** The count of one stream body held to its declared length. */
class LengthGuard {
  sent = 0;
  constructor(
    readonly dest: Destination,
    readonly declared: number,
    readonly prefix: string,
    readonly sink: BodyLengthSink | undefined
  ) {}

  /** The body broke its length: the sink, or else the destination, gets the error. */
  fail(): void {
    const error = contentLengthMismatchError(this.prefix, this.declared, this.sent, false);
    if (this.sink !== undefined) this.sink.onBodyError(error);
    else this.dest.destroy(error);
  }
}

type GuardedBody = Readable & { [kGuard]?: LengthGuard };

function onGuardedData(this: GuardedBody, chunk: Buffer | string): void {
  const guard = this[kGuard];
  if (guard === undefined) return;
  guard.sent += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.length;
  if (guard.sent > guard.declared) fail(this, guard);
}

function onGuardedEnd(this: GuardedBody): void {
  const guard = this[kGuard];
  if (guard === undefined) return;
  release(this);
  if (guard.sent === guard.declared) guard.dest.end();
  else guard.fail();
}

function fail(body: GuardedBody, guard: LengthGuard): void {
  release(body);
  body.unpipe(guard.dest);
  guard.fail();
}

function release(body: GuardedBody): void {
  body[kGuard] = undefined;
  body.removeListener("data", onGuardedData);
  body.removeListener("end", onGuardedEnd);
}

/**
 * Pipes a `Readable` body into `dest`, held to `declared` bytes (its request's `content-length`) unless that is `-1`
 * (see the header). The caller handles the body's own errors.
 * @param sink - told of a length mismatch instead of `dest` being destroyed with it.
 * @internal
 */
export function pipeBody(
  body: Readable,
  dest: Destination,
  declared: number,
  prefix: string,
  sink?: BodyLengthSink
): void {
  if (declared === -1) {
    body.pipe(dest);
    return;
  }
  (body as GuardedBody)[kGuard] = new LengthGuard(dest, declared, prefix, sink);
  body.on("data", onGuardedData);
  body.once("end", onGuardedEnd);
  body.pipe(dest, { end: false });
}

/**
 * Writes a Smithy request body to a Node request and ends it: a `Readable` is piped (held to the `content-length` of
 * `headers`, see the header); a Buffer or string is sent as is (an empty Buffer as no body, aws-sdk-js-v3#6426); any
 * other ArrayBufferView is wrapped without copying; other truthy values go through `Buffer.from` (so a plain object
 * throws a `TypeError`, as upstream); no body ends the request. A `Readable` that was destroyed (or, with a length to
 * meet, consumed) while the request waited destroys the request at once, naming it. A piped stream's error destroys the
 * request with that error instead of leaving it hanging.
 * @param headers - the request's headers (read for a `Readable` body only).
 * @param prefix - the handler's package name, for the errors above.
 * @internal
 */
export function writeBody(req: ClientRequest, body: unknown, headers?: unknown, prefix = ""): void {
  if (body instanceof Readable) {
    const declared = declaredLength(headers, prefix);
    const problem = unusableBody(body, declared);
    if (problem !== undefined) {
      req.destroy(unusableBodyError(prefix, problem));
      return;
    }
    body.once("error", (error) => req.destroy(error));
    pipeBody(body, req, declared, prefix);
    return;
  }
  if (!body) {
    req.end();
    return;
  }
  if (typeof body === "string") {
    req.end(body);
    return;
  }
  if (Buffer.isBuffer(body)) {
    if (body.byteLength === 0) req.end();
    else req.end(body);
    return;
  }
  const view = body as ArrayBufferView;
  if (
    typeof view === "object" &&
    view.buffer &&
    typeof view.byteOffset === "number" &&
    typeof view.byteLength === "number"
  ) {
    req.end(Buffer.from(view.buffer, view.byteOffset, view.byteLength));
    return;
  }
  req.end(Buffer.from(body as string));
}
