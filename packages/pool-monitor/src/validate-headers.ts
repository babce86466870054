import { describeValue } from "./invalid-option";

/** A header name as RFC 9110 §5.1 allows it: a token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * A character no handler may put in a header value: controls other than tab (CR and LF end the field and start another
 * one: request smuggling behind an intermediary), DEL, and anything above U+00FF (it cannot be sent as one byte). Node's
 * HTTP/1.1 client refuses the same set; its HTTP/2 client sends them unchanged.
 */
const BAD_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/** HTTP/1.1 connection-specific fields, which HTTP/2 forbids (RFC 9113 §8.2.2; `te` only as `trailers`). */
const HTTP2_CONNECTION_FIELDS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** `content-length` lower-cased; compared only with names of its length. */
const CONTENT_LENGTH = "content-length";

/**
 * Checks every request header before anything is dispatched and returns the declared `content-length` (`-1`: none):
 * - a name is a token (on HTTP/2, a `:`-prefixed pseudo-header name is left to Node, which knows the allowed ones);
 * - a string value (or each string of an array value) holds no control character but tab and nothing above U+00FF;
 * - on HTTP/2, no HTTP/1.1 connection-specific field (`connection`, `keep-alive`, `proxy-connection`,
 *   `transfer-encoding`, `upgrade`; `te` other than `trailers`);
 * - `content-length` as `declaredLength()` checks it.
 * Throws a one-line `TypeError` naming the header (never showing a value other than a bad `content-length`: values
 * carry credentials), with Node's code for the fault (`ERR_INVALID_HTTP_TOKEN`, `ERR_INVALID_CHAR`,
 * `ERR_HTTP2_INVALID_CONNECTION_HEADERS`, `ERR_HTTP_INVALID_HEADER_VALUE`). One pass, O(total length of names and
 * values). `NodeHttp2Handler` calls it per request (Node's HTTP/2
 * client checks neither names nor values); node:http and undici apply the same rule themselves when they create the
 * request, so their handlers call only `declaredLength()` and, when the transport refuses a header, `explainRefusal()`.
 * @param prefix - the handler's package name, starting the message.
 * @param http2 - the request goes out on HTTP/2.
 * @internal
 */
export function validateHeaders(headers: unknown, prefix: string, http2: boolean): number {
  if (headers === null || typeof headers !== "object") return -1;
  const bag = headers as Record<string, unknown>;
  let declared = -1;
  for (const name in bag) {
    const value = bag[name];
    if (!TOKEN.test(name) && !(http2 && name.charCodeAt(0) === 58 /* ":" */ && TOKEN.test(name.slice(1)))) {
      throw headerError(
        `${prefix} - invalid request header name ${describeValue(name)}: expected a token (letters, digits and !#$%&'*+-.^_\`|~).`,
        "ERR_INVALID_HTTP_TOKEN"
      );
    }
    if (typeof value === "string") {
      if (BAD_VALUE_CHAR.test(value)) throw badValue(prefix, name);
    } else if (Array.isArray(value)) {
      for (const item of value) if (typeof item === "string" && BAD_VALUE_CHAR.test(item)) throw badValue(prefix, name);
    }
    if (isContentLength(name)) declared = contentLength(declared, value, name, prefix);
    else if (http2 && name.length <= 17) {
      const lower = name.toLowerCase();
      if (HTTP2_CONNECTION_FIELDS.has(lower) || (lower === "te" && value !== "trailers")) {
        throw headerError(
          `${prefix} - request header ${describeValue(name)} is not allowed on HTTP/2 (a connection-specific HTTP/1.1 field, RFC 9113 §8.2.2).`,
          "ERR_HTTP2_INVALID_CONNECTION_HEADERS"
        );
      }
    }
  }
  return declared;
}

/**
 * The declared `content-length` (`-1`: none): in whatever letter case and however often it appears, one non-negative
 * integer, else a `TypeError` (`ERR_HTTP_INVALID_HEADER_VALUE`) naming it. Reads the names only (a length compare
 * each): what the node:http and undici handlers check per request.
 * @internal
 */
export function declaredLength(headers: unknown, prefix: string): number {
  if (headers === null || typeof headers !== "object") return -1;
  const bag = headers as Record<string, unknown>;
  let declared = -1;
  for (const name in bag) if (isContentLength(name)) declared = contentLength(declared, bag[name], name, prefix);
  return declared;
}

/**
 * A transport's refusal of a request header (Node's `ERR_INVALID_HTTP_TOKEN` / `ERR_INVALID_CHAR`, undici's
 * `UND_ERR_INVALID_ARG`) as `validateHeaders()` words it, so that every handler gives the same error; any other error,
 * or one `validateHeaders()` finds nothing wrong for, is returned as is. Failure path only.
 * @internal
 */
export function explainRefusal(error: unknown, headers: unknown, prefix: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== "ERR_INVALID_HTTP_TOKEN" && code !== "ERR_INVALID_CHAR" && code !== "UND_ERR_INVALID_ARG") return error;
  try {
    validateHeaders(headers, prefix, false);
  } catch (ours) {
    return ours;
  }
  return error;
}

function isContentLength(name: string): boolean {
  return name.length === 14 && (name === CONTENT_LENGTH || name.toLowerCase() === CONTENT_LENGTH);
}

/**
 * A `TypeError` with `code`: Node's own code for the same fault (what upstream's callers saw on node:http, where Node
 * raised it).
 */
function headerError(message: string, code: string): TypeError {
  return Object.assign(new TypeError(message), { code });
}

function badValue(prefix: string, name: string): TypeError {
  return headerError(
    `${prefix} - invalid value of request header ${describeValue(name)}: it contains CR, LF, NUL, another control character or one above U+00FF (the value is not shown).`,
    "ERR_INVALID_CHAR"
  );
}

/**
 * A `content-length` value as a number of bytes, agreeing with the one found before (`declared`, `-1`: none), or a
 * `TypeError` naming it.
 */
function contentLength(declared: number, value: unknown, name: string, prefix: string): number {
  const n = typeof value === "string" && /^\d{1,15}$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
    throw headerError(
      `${prefix} - invalid request header ${describeValue(name)}: ${describeValue(value)}; expected a number of bytes (a non-negative integer).`,
      "ERR_HTTP_INVALID_HEADER_VALUE"
    );
  }
  if (declared !== -1 && n !== declared) {
    throw headerError(
      `${prefix} - the request has content-length headers that disagree (${declared} and ${n}).`,
      "ERR_HTTP_INVALID_HEADER_VALUE"
    );
  }
  return n;
}
