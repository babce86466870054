import { describeValue } from "./invalid-option";

/** RFC 9110 §5.1 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * What Node's HTTP/1.1 client refuses in a header value (its HTTP/2 client sends them): controls but tab (CR LF would
 * smuggle a request), DEL, and anything above U+00FF.
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

const CONTENT_LENGTH = "content-length";

/**
 * Checks every request header in one pass and returns the declared `content-length` (-1: none): names are tokens,
 * values hold no `BAD_VALUE_CHAR`, HTTP/2 gets no connection-specific field. Throws a one-line `TypeError` with
 * Node's code, naming the header but never showing a value (values carry credentials). @internal
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

/** The declared `content-length` (-1: none), however often repeated: one integer >= 0, else a `TypeError`. @internal */
export function declaredLength(headers: unknown, prefix: string): number {
  if (headers === null || typeof headers !== "object") return -1;
  const bag = headers as Record<string, unknown>;
  let declared = -1;
  for (const name in bag) if (isContentLength(name)) declared = contentLength(declared, bag[name], name, prefix);
  return declared;
}

/** A transport's refusal of a header, reworded as `validateHeaders()` words it; other errors as is. @internal */
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

function headerError(message: string, code: string): TypeError {
  return Object.assign(new TypeError(message), { code });
}

function badValue(prefix: string, name: string): TypeError {
  return headerError(
    `${prefix} - invalid value of request header ${describeValue(name)}: it contains CR, LF, NUL, another control character or one above U+00FF (the value is not shown).`,
    "ERR_INVALID_CHAR"
  );
}

/** A `content-length` value in bytes, agreeing with the one found before (`declared`), else a `TypeError`. */
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
