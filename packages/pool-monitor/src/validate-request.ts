import { describeValue } from "./invalid-option";
import { validateBody } from "./validate-body";
import { declaredLength, validateHeaders } from "./validate-headers";

interface RequestTarget {
  protocol?: unknown;
  hostname?: unknown;
  port?: unknown;
  path?: unknown;
  headers?: unknown;
  body?: unknown;
}

type RequestProtocol = "http:" | "https:";

/** Controls, space and URL delimiters: `"a.example@b.example"` would reach `b.example` on one transport only. */
const BAD_HOSTNAME_CHAR = /[^!-~\u0080-\uffff]|[/?#@\\]/;

/** A character Node refuses in an HTTP/1.1 request target (`ERR_UNESCAPED_CHARACTERS`): controls, space, > U+00FF. */
const BAD_PATH_CHAR = /[^\x21-\xff]/;

/** The last host name that passed (one endpoint per client is common); starts valid, so no bad value equals it. */
let checkedHostname = "localhost";

/**
 * Checks a request before dispatch, so a bad one fails alike on every handler and opens no socket; returns its
 * scheme. Throws a one-line `TypeError` with Node's `code` where Node has one (a path is never shown). @internal
 */
export function validateRequest(
  request: RequestTarget | null | undefined,
  prefix: string,
  http2 = false
): RequestProtocol {
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

function normalizeProtocol(protocol: unknown, prefix: string): RequestProtocol {
  const lower = typeof protocol === "string" ? protocol.toLowerCase() : undefined;
  if (lower === "https:" || lower === "http:") return lower;
  throw Object.assign(
    new TypeError(
      `${prefix} - invalid request protocol: ${describeValue(protocol)}; expected "http:" or "https:" (in any letter case). Nothing was sent.`
    ),
    { code: "ERR_INVALID_PROTOCOL" }
  );
}
