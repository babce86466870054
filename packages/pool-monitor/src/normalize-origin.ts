/**
 * Origin keys: every origin the monitor reports is `scheme://host:port`. A canonical string costs one regex test; any
 * other is parsed with `URL` on every call, so paths, queries and credentials never reach stats, logs or channels.
 * Nothing is cached for non-canonical strings: a presigned URL is unique per request.
 */
const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };
const CANONICAL = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+):[0-9]{1,5}$/;
// `scheme://<bare IPv6>:port`, from a caller that pastes a hostname without brackets.
const BARE_IPV6 = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([0-9a-fA-F]*:[0-9a-fA-F:.]*):([0-9]{1,5})$/;

/**
 * Reduces an origin or absolute URL to `scheme://host:port` (lower case, explicit port, IPv6 in brackets), e.g.
 * `https://bucket.s3.amazonaws.com:443`.
 * @throws TypeError when it has no host or no known or explicit port; the message gives only the string's length
 *   (it may carry a presigned query).
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
