import type { HeaderBag } from "@smithy/types";
import type { IncomingHttpHeaders } from "node:http";

/**
 * Copies Node's (already lower-cased) response headers into a plain `HeaderBag`, joining repeated values with
 * `","` and no space (e.g. two `set-cookie` lines become `"a=1,b=2"`), as upstream does.
 * @internal
 */
export function getTransformedHeaders(headers: IncomingHttpHeaders): HeaderBag {
  const transformed: HeaderBag = {};
  // Own enumerable names, as `for…in` with an own-property check, without a per-header `Object.hasOwn` call.
  const names = Object.keys(headers);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const value = headers[name];
    if (value === undefined) continue;
    transformed[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return transformed;
}
