import { Readable } from "node:stream";
import { contentLengthMismatchError, unusableBodyError } from "./request-errors";

/**
 * Checks a body of known length against the declared `content-length` (-1: none) before dispatch (a shorter one
 * leaves the server waiting, a longer one smuggles a request); a stream body is held to it while sent. @internal
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

/** Why a `Readable` body cannot be sent (checked again when a queued request is sent), or `undefined`. @internal */
export function unusableBody(body: Readable, declared: number): "destroyed" | "consumed" | undefined {
  if (body.readableEnded) return declared > 0 ? "consumed" : undefined;
  return body.destroyed ? "destroyed" : undefined;
}
