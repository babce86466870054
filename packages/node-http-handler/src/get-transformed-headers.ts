import type { HeaderBag } from "@smithy/types";
import type { IncomingHttpHeaders } from "node:http";

/** Copies Node's response headers into a `HeaderBag`, joining repeated values with `","`, as upstream. @internal */
export function getTransformedHeaders(headers: IncomingHttpHeaders): HeaderBag {
  const transformed: HeaderBag = {};
  const names = Object.keys(headers);
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const value = headers[name];
    if (value === undefined) continue;
    transformed[name] = Array.isArray(value) ? value.join(",") : value;
  }
  return transformed;
}
