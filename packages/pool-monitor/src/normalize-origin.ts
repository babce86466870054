/**
 * Origin keys: every origin the monitor reports is `scheme://host:port`, whatever string a caller passed.
 *
 * `trackRequest()` looks the caller's string up in the origin map first, so a caller that already passes
 * `scheme://host:port` pays one `Map.get()`. Any other string (a `url.href` with a path or a presigned query string,
 * an upper-case host, a missing default port) is parsed once per call with the WHATWG `URL` parser and reduced to
 * its origin, so paths, queries and credentials never reach stats, logs or channel payloads. Nothing is cached for
 * non-canonical strings (a presigned URL is unique per request: a cache would grow without bound).
 */

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };
const CANONICAL = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+):[0-9]{1,5}$/;
// `scheme://<bare IPv6>:port`, as a caller that pastes a hostname without brackets builds it.
const BARE_IPV6 = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([0-9a-fA-F]*:[0-9a-fA-F:.]*):([0-9]{1,5})$/;

/**
 * Reduces `origin` to `scheme://host:port` (lower-case scheme and host, explicit port; IPv6 hosts in brackets).
 *
 * @param origin - an origin or any absolute URL (`http://host`, `https://host:8443/path?X-Amz-Signature=…`).
 * @returns the origin, e.g. `https://bucket.s3.amazonaws.com:443`.
 * @throws TypeError when `origin` is not a string or not an absolute URL with a host and a known or explicit port.
 *   The message never repeats the string (it may carry a presigned query): it gives its length only.
 * @public
 */
export function normalizeOrigin(origin: string): string {
  if (typeof origin !== "string") {
    throw new TypeError(
      `@sockeye/pool-monitor: origin must be a string "scheme://host:port"; received ${origin === null ? "null" : typeof origin}.`
    );
  }
  if (CANONICAL.test(origin)) return origin;
  const bare = BARE_IPV6.exec(origin);
  if (bare !== null) return `${bare[1].toLowerCase()}://[${bare[2].toLowerCase()}]:${bare[3]}`;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const port = url === undefined ? "" : url.port || DEFAULT_PORTS[url.protocol] || "";
  if (url === undefined || url.hostname === "" || port === "") {
    throw new TypeError(
      `@sockeye/pool-monitor: origin must be "scheme://host:port" (or an absolute http(s) URL to reduce to it); received a string of ${origin.length} characters that is not.`
    );
  }
  return `${url.protocol}//${url.hostname}:${port}`;
}
