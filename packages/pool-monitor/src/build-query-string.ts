/** Smithy's `QueryParameterBag`, structurally: `null` is a bare key, an array a repeated key. */
type QueryBag = Record<string, string | Array<string> | null>;

const hexEncode = (c: string): string => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;

/** RFC 3986 escaping: `encodeURIComponent` plus `!'()*`. */
function escapeUri(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, hexEncode);
}

/** Serialises a query bag: keys sorted, RFC 3986-escaped, `k=v1&k=v2` for arrays, `k=` for `""`. @internal */
export function buildQueryString(query: QueryBag): string {
  const parts: string[] = [];
  for (const rawKey of Object.keys(query).sort()) {
    const value = query[rawKey];
    const key = escapeUri(rawKey);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) parts.push(`${key}=${escapeUri(value[i])}`);
    } else if (value || typeof value === "string") {
      parts.push(`${key}=${escapeUri(value)}`);
    } else {
      parts.push(key);
    }
  }
  return parts.join("&");
}
