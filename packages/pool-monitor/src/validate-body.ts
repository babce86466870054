import { Readable } from "node:stream";
import { contentLengthMismatchError, unusableBodyError } from "./request-errors";

/**
 * Checks a request body against the declared `content-length` (`declared`, `-1`: none, see `validateHeaders()`) before
 * anything is dispatched (a stream body is held to it while it is sent, by `writeBody()` / `pipeBody()`):
 * - a body of known length (a string, measured in UTF-8 bytes as it is sent; a `Buffer` or other `ArrayBufferView`) that
 *   disagrees with `declared` is a `TypeError`: sent, a shorter body leaves the server waiting for bytes that never come,
 *   a longer one puts its extra bytes on the connection as the start of another request;
 * - a `Readable` already destroyed before its end (it would never end the request), or already read to its end while
 *   `declared` promises bytes, is an `Error` naming the body.
 * O(1) but for a string body, whose UTF-8 length is counted once (only when a length is declared).
 * @param prefix - the handler's package name, starting the message.
 * @internal
 */
export function validateBody(body: unknown, declared: number, prefix: string): void {
  if (body === undefined || body === null) {
    if (declared > 0) throw contentLengthMismatchError(prefix, declared, 0, true);
    return;
  }
  if (body instanceof Readable) {
    const problem = unusableBody(body, declared);
    if (problem !== undefined) throw unusableBodyError(prefix, problem);
    return;
  }
  if (declared === -1) return;
  let actual: number;
  if (typeof body === "string") actual = Buffer.byteLength(body);
  else if (ArrayBuffer.isView(body)) actual = body.byteLength;
  else return;
  if (actual !== declared) throw contentLengthMismatchError(prefix, declared, actual, true);
}

/**
 * Why a `Readable` body cannot be sent, or `undefined`: destroyed before its end, or ended already while `declared`
 * (`-1`: none) promises bytes. Read again when a queued request is finally sent (`writeBody()`).
 * @internal
 */
export function unusableBody(body: Readable, declared: number): "destroyed" | "consumed" | undefined {
  if (body.readableEnded) return declared > 0 ? "consumed" : undefined;
  return body.destroyed ? "destroyed" : undefined;
}
