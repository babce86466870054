/**
 * writeBody: sends a Smithy request body on a Node request (or HTTP/2 stream) and ends it. A piped `Readable` gets a
 * `LengthGuard` on a symbol of the body. With a declared `content-length` its `'data'` listener runs before the
 * pipe's, so a chunk past the length fails the request before any extra byte is written, and a short body fails it
 * at its end rather than leave the server waiting. Its `'close'` listener fails the request when the body is destroyed
 * without an error before its end, which the pipe alone would leave waiting for ever.
 */
import type { ClientRequest } from "node:http";
import { Readable } from "node:stream";
import { bodyClosedEarlyError, contentLengthMismatchError, unusableBodyError } from "./request-errors";
import { unusableBody } from "./validate-body";
import { declaredLength } from "./validate-headers";

/** A `ClientRequest`, or an HTTP/2 stream typed as one. */
type Destination = ClientRequest;

const kGuard = Symbol("sockeye.lengthGuard");

/** Who is told, at once and before the pipe writes on, that a stream body broke its declared length. @internal */
export interface BodyLengthSink {
  /** Must stop the destination synchronously (no further byte may be written to it). */
  onBodyError(error: Error): void;
}

/** The count of one piped stream body, held to its declared length unless -1. */
class LengthGuard {
  sent = 0;
  constructor(
    readonly dest: Destination,
    readonly declared: number,
    readonly prefix: string,
    readonly sink: BodyLengthSink | undefined
  ) {}

  fail(error = contentLengthMismatchError(this.prefix, this.declared, this.sent, false)): void {
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

/**
 * The body closed: the guard lets go; if it was destroyed without an error before its end, the request fails (its
 * `'error'` listener handles an error).
 */
function onGuardedClose(this: GuardedBody): void {
  const guard = this[kGuard];
  if (guard === undefined) return;
  // Whatever the end, so that a body the caller keeps does not keep the request alive.
  release(this);
  if (closedEarly(this)) guard.fail(bodyClosedEarlyError(guard.prefix));
}

/** Whether `body` was destroyed without an error before its end. @internal */
export function closedEarly(body: Readable): boolean {
  return body.destroyed && !body.readableEnded && (body.errored ?? null) === null;
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
  body.removeListener("close", onGuardedClose);
}

/** Pipes `body` into `dest` with its `LengthGuard` (see the header); the caller handles the body's errors. @internal */
export function pipeBody(
  body: Readable,
  dest: Destination,
  declared: number,
  prefix: string,
  sink?: BodyLengthSink
): void {
  (body as GuardedBody)[kGuard] = new LengthGuard(dest, declared, prefix, sink);
  body.once("close", onGuardedClose);
  if (declared === -1) {
    body.pipe(dest);
    return;
  }
  body.on("data", onGuardedData);
  body.once("end", onGuardedEnd);
  body.pipe(dest, { end: false });
}

/**
 * Writes a Smithy request body to a Node request and ends it, as upstream (an empty Buffer is no body:
 * aws-sdk-js-v3#6426). A stream that became unusable while the request waited, or errors, destroys it. @internal
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
