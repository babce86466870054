import { describeValue } from "./invalid-option";
import { validateBody } from "./validate-body";
import { declaredLength, validateHeaders } from "./validate-headers";

/** The fields of a Smithy `HttpRequest` that `validateRequest()` reads. */
interface RequestTarget {
  protocol?: unknown;
  hostname?: unknown;
  port?: unknown;
  path?: unknown;
  headers?: unknown;
  body?: unknown;
}

/** The two schemes a handler speaks, as `validateRequest()` returns them (lower case, with the colon). @internal */
export type RequestProtocol = "http:" | "https:";

/**
 * A character that changes what a host name means in a URL or on the wire: controls, space, and the URL delimiters
 * `/ ? # @ \` (a `hostname` of `"a.example@b.example"` would otherwise reach `b.example` on one transport and fail DNS on
 * another).
 */
const BAD_HOSTNAME_CHAR = /[^!-~\u0080-\uffff]|[/?#@\\]/;

/** A character Node refuses in an HTTP/1.1 request target (`ERR_UNESCAPED_CHARACTERS`): controls, space, > U+00FF. */
const BAD_PATH_CHAR = /[^\x21-\xff]/;

/**
 * The last host name that passed (one endpoint per client is the common case: its check is one comparison). Starts as
 * a valid one, so no invalid value can ever equal it.
 */
let checkedHostname = "localhost";

/**
 * Checks what `handle()` gets before anything is dispatched, so a bad request never opens a socket, and returns its
 * scheme. Every handler calls it first in `handle()`, so a bad request fails the same way on each (as a rejection):
 * - `protocol` is `"http:"` or `"https:"` in any letter case (the WHATWG URL parser lower-cases schemes, and
 *   `HttpRequest` adds a missing colon only in its constructor); anything else, a missing one included, is refused
 *   rather than sent as clear text, as Node's `http.request` would with an `http.Agent`;
 * - `hostname` a non-empty string (Node would silently use `localhost` otherwise) without controls, spaces or URL
 *   delimiters;
 * - `port` absent or an integer from 1 to 65535 (a numeric string such as `"8080"` is accepted, as Node accepts it);
 * - `path` without controls, spaces or characters above U+00FF (what Node's HTTP/1.1 client refuses; HTTP/2 and undici
 *   are held to the same rule). The path is never put in the message: it may carry what telemetry never shows;
 * - the headers: on HTTP/2 every name and value (`validateHeaders()`: Node's HTTP/2 client checks none); otherwise the
 *   declared `content-length` only (`declaredLength()`: node:http and undici check names and values themselves when
 *   they create the request, and `explainRefusal()` words their refusal the same way);
 * - the body against that length (`validateBody()`).
 * Throws a one-line `TypeError` naming the field and the value (Node's `code` where Node has one for the fault).
 * O(length of host name and path), plus the header values on HTTP/2.
 * @param prefix - the handler's package name, starting the message.
 * @param http2 - the request goes out on HTTP/2.
 * @internal
 */
export function validateRequest(
  request: RequestTarget | null | undefined,
  prefix: string,
  http2 = false
): RequestProtocol {
  // The common path is kept small, so that the handler's request path inlines it: the checks that can fail and their
  // messages are out of line.
  if (request === null || typeof request !== "object") throw notARequest(request, prefix);
  const { protocol, hostname, port, path } = request;
  const scheme = protocol === "https:" || protocol === "http:" ? protocol : normalizeProtocol(protocol, prefix);
  if (hostname !== checkedHostname) checkHostname(hostname, prefix);
  if (typeof path === "string" && BAD_PATH_CHAR.test(path)) throw badPath(prefix);
  if (port !== undefined && port !== null) checkPort(port, prefix);
  const headers = request.headers;
  validateBody(request.body, http2 ? validateHeaders(headers, prefix, true) : declaredLength(headers, prefix), prefix);
  return scheme;
}

function notARequest(request: unknown, prefix: string): TypeError {
  return new TypeError(`${prefix} - handle(request) expects an HttpRequest; received ${describeValue(request)}.`);
}

/** A host name other than the last one that passed: checked, and remembered when it passes. */
function checkHostname(hostname: unknown, prefix: string): void {
  if (typeof hostname !== "string" || hostname === "" || hostname === "[]" || BAD_HOSTNAME_CHAR.test(hostname)) {
    throw new TypeError(
      `${prefix} - invalid request hostname: ${describeValue(hostname)}; expected a non-empty host name or IP address.`
    );
  }
  checkedHostname = hostname;
}

function badPath(prefix: string): TypeError {
  return Object.assign(
    new TypeError(
      `${prefix} - invalid request path: it contains a control character, a space or a character above U+00FF; escape it (the path is not shown).`
    ),
    // Node's code for the same refusal of its HTTP/1.1 client.
    { code: "ERR_UNESCAPED_CHARACTERS" }
  );
}

function checkPort(port: unknown, prefix: string): void {
  const n = typeof port === "string" && /^\d+$/.test(port) ? Number(port) : port;
  if (typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= 65535) return;
  throw new TypeError(
    `${prefix} - invalid request port: ${describeValue(port)}; expected an integer from 1 to 65535 (or none for the protocol's default).`
  );
}

/** `protocol` other than the exact `"http:"` / `"https:"`: accepted in other letter cases, else a `TypeError`. */
function normalizeProtocol(protocol: unknown, prefix: string): RequestProtocol {
  const lower = typeof protocol === "string" ? protocol.toLowerCase() : undefined;
  if (lower === "https:" || lower === "http:") return lower;
  throw Object.assign(
    new TypeError(
      `${prefix} - invalid request protocol: ${describeValue(protocol)}; expected "http:" or "https:" (in any letter case). Nothing was sent.`
    ),
    // Node's code for a protocol its client does not support.
    { code: "ERR_INVALID_PROTOCOL" }
  );
}
