import type { HeaderBag } from "@smithy/types";
import { util } from "undici";

/**
 * Response headers whose duplicates Node's `IncomingMessage` drops (first value wins). Kept so a response reads the
 * same through this handler as through `NodeHttpHandler`.
 */
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
 * Names seen in the response being parsed. Module-level scratch space: parsing is synchronous, so one array serves
 * every response without allocating; duplicate detection scans it (a response has ~5–15 headers, and well-known
 * names are interned strings, so the scan is a few pointer compares) instead of probing the header object with
 * names it does not have, which V8 serves through a slow megamorphic lookup.
 */
const seen: string[] = [];

/**
 * Turns undici's raw header list (`[name, value, name, value, …]` as Buffers) into the header bag
 * `NodeHttpHandler` produces: lower-case names (well-known ones without allocating), latin1 values, duplicates
 * joined with `", "` (`set-cookie` with `","`), single-valued headers keeping their first value. One object per
 * response.
 * @internal
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
