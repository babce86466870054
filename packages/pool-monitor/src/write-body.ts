import type { ClientRequest } from "node:http";
import { Readable } from "node:stream";

/**
 * Writes a Smithy request body to a Node request and ends it: a `Readable` is piped; a Buffer or string is sent
 * as is (an empty Buffer as no body, aws-sdk-js-v3#6426); any other ArrayBufferView is wrapped without copying;
 * other truthy values go through `Buffer.from` (so a plain object throws a `TypeError`, as upstream); no body ends
 * the request. A piped stream's error destroys the request with that error instead of leaving it hanging.
 * @internal
 */
export function writeBody(req: ClientRequest, body: unknown): void {
  if (body instanceof Readable) {
    body.once("error", (error) => req.destroy(error));
    body.pipe(req);
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
