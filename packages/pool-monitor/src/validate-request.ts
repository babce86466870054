import { describeValue } from "./invalid-option";

/** The fields of a Smithy `HttpRequest` that `validateRequest()` reads. */
interface RequestTarget {
  hostname?: unknown;
  port?: unknown;
}

/**
 * Checks what `handle()` needs of a request before anything is dispatched, so a bad request never opens a socket:
 * `request` is an object, `hostname` a non-empty string (Node would silently use `localhost` otherwise), and `port`
 * absent or an integer from 1 to 65535 (a numeric string such as `"8080"` is accepted, as Node accepts it).
 * Throws a `TypeError` naming the field and the value. O(1). Every handler calls it first in `handle()`, so a bad
 * request fails the same way on each (as a rejection).
 * @param prefix - the handler's package name, starting the message.
 * @internal
 */
export function validateRequest(request: RequestTarget | null | undefined, prefix: string): void {
  if (request === null || typeof request !== "object") {
    throw new TypeError(`${prefix} - handle(request) expects an HttpRequest; received ${describeValue(request)}.`);
  }
  const { hostname, port } = request;
  if (typeof hostname !== "string" || hostname === "" || hostname === "[]") {
    throw new TypeError(
      `${prefix} - invalid request hostname: ${describeValue(hostname)}; expected a non-empty host name or IP address.`
    );
  }
  if (port === undefined || port === null) return;
  const n = typeof port === "string" && /^\d+$/.test(port) ? Number(port) : port;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 65535) {
    throw new TypeError(
      `${prefix} - invalid request port: ${describeValue(port)}; expected an integer from 1 to 65535 (or none for the protocol's default).`
    );
  }
}
