import type { HeaderBag } from "@smithy/types";
import { util } from "undici";

/** Response headers whose duplicates Node's `IncomingMessage` drops (first value wins), as on `NodeHttpHandler`. */
const SINGLE_VALUED = new Set([
  "age",
  "authorization",
  "content-length",
  "content-type",
  "etag",
  "expires",
  "from",
  "host",
  "if-modified-since",
  "if-unmodified-since",
  "last-modified",
  "location",
  "max-forwards",
  "proxy-authorization",
  "referer",
  "retry-after",
  "server",
  "user-agent",
]);

/**
 * Names seen in the response being parsed: scratch space shared by every (synchronous) parse. Scanning it is a few
 * pointer compares on interned names; probing the header object for absent names is a megamorphic lookup in V8.
 */
const seen: string[] = [];

/**
 * Turns undici's raw header list into the header bag `NodeHttpHandler` produces: lower-case names, latin1 values,
 * duplicates joined with `", "` (`set-cookie` with `","`), single-valued headers keeping their first value. @internal
 */
export function parseResponseHeaders(raw: Buffer[] | string[] | null | undefined): HeaderBag {
  const headers: HeaderBag = {};
  if (!raw) return headers;
  let count = 0;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = util.headerNameToString(raw[i] as Buffer);
    const value = raw[i + 1].toString("latin1");
    let duplicate = false;
    for (let j = 0; j < count; j++) {
      if (seen[j] === name) {
        duplicate = true;
        break;
      }
    }
    if (!duplicate) {
      seen[count++] = name;
      headers[name] = value;
    } else if (name === "set-cookie") {
      headers[name] = `${headers[name]},${value}`;
    } else if (!SINGLE_VALUED.has(name)) {
      headers[name] = `${headers[name]}, ${value}`;
    }
  }
  return headers;
}
