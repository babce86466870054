/**
 * Maps `NodeHttpHandler`'s `httpAgent` / `httpsAgent` (an options object, or an `Agent` instance whose `.options`
 * are read) to what they mean on undici, so that `httpsAgent: { ca }` works as it does on `NodeHttpHandler`.
 *
 * Every key of a Node `Agent`'s options ends in one of four places:
 * - undici pool settings: `maxSockets` → `connections` (read by `resolveUndiciConfig`), `keepAlive: false` → a new
 *   connection per request (undici `pipelining: 0`), `localAddress` → the pool's `localAddress`;
 * - undici `connect` options (`buildConnector`): every TLS / socket option `tls.connect()` and `net.connect()` take
 *   (`ca`, `cert`, `key`, `pfx`, `passphrase`, `rejectUnauthorized`, `servername`, `checkServerIdentity`,
 *   `ciphers`, `minVersion`, `lookup`, `family`, `localPort`, …), `maxCachedSessions`, and `keepAliveMsecs` as
 *   `keepAliveInitialDelay` (TCP keep-alive probes);
 * - ignored with one warning, because undici has no such setting: `timeout` (use `idleSocketTimeout` /
 *   `socketTimeout`), `maxFreeSockets`, `maxTotalSockets`, `scheduling`, `noDelay: false` (undici always sets
 *   `noDelay`), an instance's own `createConnection` (a proxy agent: use undici's `ProxyAgent` as `dispatcher`);
 * - dropped silently: keys Node adds itself (`path: null`, `noDelay: true`) and request-level keys (`host`,
 *   `hostname`, `port`, `protocol`, `defaultPort`) that would redirect every connection.
 *
 * The same TLS / socket options (in Node's spelling) feed the one-off `node:http(s)` agents of the
 * `Expect: 100-continue` path, so both paths trust the same CAs and present the same client certificate.
 *
 * Cost: once per resolved config; nothing per request.
 */
import http from "node:http";
import https from "node:https";

/** What one agent's options mean on undici. @internal */
export interface AgentConnectOptions {
  /** undici `buildConnector` options (TLS and socket options, `keepAliveInitialDelay`, `maxCachedSessions`). */
  connect: Record<string, unknown>;
  /** The same TLS / socket options in Node's spelling, for the 100-continue path's `node:http(s)` agents. */
  node: Record<string, unknown>;
  /** The pool's local address, if set. */
  localAddress: string | undefined;
  /** `false` when the agent asked for no connection reuse (`keepAlive: false`). */
  keepAlive: boolean;
  /** `option=value` descriptions of settings that have no undici equivalent (warned about once). */
  ignored: string[];
}

/** Keys Node's `Agent` constructor adds or request-level keys: never forwarded. */
const DROPPED = new Set(["path", "host", "hostname", "port", "protocol", "defaultPort", "agent", "socket"]);

/** Agent settings with no undici equivalent, and what to use instead. */
const IGNORED: Record<string, string> = {
  timeout: "use idleSocketTimeout / socketTimeout",
  maxFreeSockets: "undici keeps every idle connection until idleSocketTimeout",
  maxTotalSockets: "limits are per origin (maxSockets)",
  scheduling: "undici picks connections itself",
};

const EMPTY: AgentConnectOptions = Object.freeze({
  connect: Object.freeze({}),
  node: Object.freeze({}),
  localAddress: undefined,
  keepAlive: true,
  ignored: [],
}) as AgentConnectOptions;

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (typeof value === "object" && value !== null) return "an object";
  return String(value);
}

/**
 * Reads `agent` (an options object, an `http.Agent` / `https.Agent` instance, or an agent-like object) named
 * `name` (`"httpsAgent"` / `"httpAgent"`) into undici settings. `maxSockets` is left to the caller.
 * @internal
 */
export function agentConnectOptions(name: string, agent: unknown): AgentConnectOptions {
  if (agent === undefined || agent === null || typeof agent !== "object") return EMPTY;
  const instance = agent instanceof http.Agent || typeof (agent as { destroy?: unknown }).destroy === "function";
  const ignored: string[] = [];
  let source: Record<string, unknown>;
  if (instance) {
    const a = agent as http.Agent & { options?: Record<string, unknown>; keepAlive?: unknown };
    source = { ...(a.options ?? {}) };
    if (source.keepAlive === undefined && typeof a.keepAlive === "boolean") source.keepAlive = a.keepAlive;
    const own = (a as { createConnection?: unknown }).createConnection;
    if (
      typeof own === "function" &&
      own !== http.Agent.prototype.createConnection &&
      own !== https.Agent.prototype.createConnection
    ) {
      ignored.push(
        `${name}.createConnection (a custom agent such as a proxy agent; pass undici's ProxyAgent as dispatcher)`
      );
    }
  } else {
    source = agent as Record<string, unknown>;
  }
  const connect: Record<string, unknown> = {};
  const node: Record<string, unknown> = {};
  let localAddress: string | undefined;
  let keepAlive = true;
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value === undefined || key === "maxSockets" || DROPPED.has(key)) continue;
    if (key === "keepAlive") {
      keepAlive = value !== false;
      continue;
    }
    if (key === "keepAliveMsecs") {
      if (typeof value === "number") connect.keepAliveInitialDelay = value;
      continue;
    }
    if (key === "noDelay") {
      if (value === false) ignored.push(`${name}.noDelay=false (undici always disables Nagle's algorithm)`);
      continue;
    }
    if (key === "localAddress") {
      if (typeof value === "string") localAddress = value;
      node.localAddress = value;
      continue;
    }
    const hint = IGNORED[key];
    if (hint !== undefined) {
      ignored.push(`${name}.${key}=${describe(value)} (${hint})`);
      continue;
    }
    connect[key] = value;
    node[key] = value;
  }
  return { connect, node, localAddress, keepAlive, ignored };
}

/** undici-only `connect` keys that a `node:http(s)` agent must not receive. */
const UNDICI_ONLY = new Set([
  "timeout",
  "socketPath",
  "keepAlive",
  "keepAliveInitialDelay",
  "allowH2",
  "useH2c",
  "session",
  "maxCachedSessions",
]);

/**
 * The TLS / socket options for a 100-continue `node:http(s)` agent: the agent's options, then undici `connect`
 * options given as `dispatcher: { connect }` (they win, as they do on the undici path).
 * @internal
 */
export function nodeAgentTlsOptions(mapped: AgentConnectOptions, dispatcherConnect: unknown): Record<string, unknown> {
  if (typeof dispatcherConnect !== "object" || dispatcherConnect === null) return mapped.node;
  const out: Record<string, unknown> = { ...mapped.node };
  for (const [key, value] of Object.entries(dispatcherConnect as Record<string, unknown>)) {
    if (value !== undefined && !UNDICI_ONLY.has(key)) out[key] = value;
  }
  return out;
}
