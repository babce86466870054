/**
 * Origin keys: `scheme://host:port`. A canonical string costs one regex test; any other is parsed with `URL` on every
 * call (not cached: a presigned URL is unique per request), so paths, queries and credentials never reach stats.
 */
const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443" };
const CANONICAL = /^[a-z][a-z0-9+.-]*:\/\/(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+):[0-9]{1,5}$/;
// `scheme://<bare IPv6>:port`, from a caller that pastes a hostname without brackets.
const BARE_IPV6 = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([0-9a-fA-F]*:[0-9a-fA-F:.]*):([0-9]{1,5})$/;

/**
 * Reduces an origin or absolute URL to `scheme://host:port` (lower case, explicit port, IPv6 in brackets).
 * @throws TypeError when it has no host or no known port; the message shows only the string's length. @public
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
