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
 *   `noDelay`);
 * - dropped silently: keys Node adds itself (`path: null`, `noDelay: true`) and request-level keys (`host`,
 *   `hostname`, `port`, `protocol`, `defaultPort`) that would redirect every connection.
 *
 * An instance that makes its connections itself (its own `createConnection` or `addRequest`, or a `connect` method
 * as `agent-base` agents such as `https-proxy-agent` have) is rejected with a `TypeError`: undici cannot use it, and
 * reading only its options would send every request around it (a proxy agent's requests would go direct). The one
 * exception is `agentkeepalive`, whose `createConnection` is Node's own with socket counting around it: its options
 * are read as a plain `Agent`'s (its `freeSocketTimeout` / `socketActiveTTL` are ignored with the warning, naming
 * `idleSocketTimeout` / `connectionLifetime`).
 *
 * Only values the caller chose are warned about. An instance's `.options` can also hold defaults its class wrote there
 * (`agentkeepalive` writes `freeSocketTimeout: 4000`, `timeout` derived from it, `socketActiveTTL: 0` into the options
 * object it is given, so what the caller passed is no longer known): a value of an ignored key counts as chosen unless
 * an agent of the same class, built from the same options without that key, holds the same value (see
 * `classDefault`). Node's own `Agent` classes write none of these keys, so theirs are read as they are.
 *
 * Cost: once per resolved config; nothing per request.
 */
import http from "node:http";
import https from "node:https";
import { describeValue } from "@sockeye/pool-monitor/internal";
import { PACKAGE_PREFIX } from "./constants";

/** What one agent's options mean on undici. @internal */
export interface AgentConnectOptions {
  /** undici `buildConnector` options (TLS and socket options, `keepAliveInitialDelay`, `maxCachedSessions`). */
  connect: Record<string, unknown>;
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
  freeSocketTimeout: "agentkeepalive's idle timeout: use idleSocketTimeout",
  socketActiveTTL: "agentkeepalive's socket lifetime: use connectionLifetime",
  maxFreeSockets: "undici keeps every idle connection until idleSocketTimeout",
  maxTotalSockets: "limits are per origin (maxSockets)",
  scheduling: "undici picks connections itself",
};

/**
 * Reads `agent` (an options object, an `http.Agent` / `https.Agent` instance, or an agent-like object) named
 * `name` (`"httpsAgent"` / `"httpAgent"`) into undici settings. `maxSockets` is left to the caller.
 * @internal
 */
export function agentConnectOptions(name: string, agent: unknown): AgentConnectOptions {
  const instance =
    agent instanceof http.Agent ||
    typeof (agent as { destroy?: unknown } | undefined)?.destroy === "function" ||
    typeof (agent as { addRequest?: unknown } | undefined)?.addRequest === "function";
  const ignored: string[] = [];
  let source: Record<string, unknown>;
  if (instance) {
    const custom = ownConnectionMethod(agent as Record<string, unknown>);
    if (custom !== undefined) {
      const kind = (agent as object).constructor?.name || "an agent";
      throw new TypeError(
        `${PACKAGE_PREFIX} - invalid option ${name}: ${kind} with its own ${custom}(), which undici cannot use (its requests would bypass it); pass undici's ProxyAgent or EnvHttpProxyAgent as dispatcher for a proxy, and plain Agent options ({ maxSockets, ca, … }) as ${name}.`
      );
    }
    const a = agent as http.Agent & { options?: Record<string, unknown>; keepAlive?: unknown };
    source = { ...a.options };
    if (source.keepAlive === undefined && typeof a.keepAlive === "boolean") source.keepAlive = a.keepAlive;
  } else {
    // An options object; anything else (unset) maps to nothing.
    source = { ...(agent as object) };
  }
  const connect: Record<string, unknown> = {};
  let localAddress: string | undefined;
  let keepAlive = true;
  // A value the agent's class may have written itself (an instance of a class other than Node's own).
  const mayBeDefault = instance && agent instanceof http.Agent && !NODE_AGENTS.has(agent.constructor);
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value === undefined || key === "maxSockets" || DROPPED.has(key)) continue;
    switch (key) {
      case "keepAlive":
        keepAlive = value !== false;
        break;
      case "keepAliveMsecs":
        if (typeof value === "number") connect.keepAliveInitialDelay = value;
        break;
      case "noDelay":
        if (value === false && !(mayBeDefault && classDefault(agent as http.Agent, source, key))) {
          ignored.push(`${name}.noDelay=false (undici always disables Nagle's algorithm)`);
        }
        break;
      case "localAddress":
        if (typeof value === "string") localAddress = value;
        break;
      default: {
        const hint = IGNORED[key];
        if (hint === undefined) connect[key] = value;
        else if (!(mayBeDefault && classDefault(agent as http.Agent, source, key))) {
          ignored.push(`${name}.${key}=${describeValue(value)} (${hint})`);
        }
      }
    }
  }
  return { connect, localAddress, keepAlive, ignored };
}

/** Node's own agent classes: their constructors write no ignored key into `.options` (only `noDelay: true`, `path`). */
const NODE_AGENTS = new Set<unknown>([http.Agent, https.Agent]);

/**
 * Whether `options[key]` of `agent` is what its class writes when `key` is not given (a default, or one derived from
 * the other options, as agentkeepalive's `timeout` from `freeSocketTimeout`), rather than the caller's choice: an
 * agent of the same class is built from `options` without `key` and compared, then destroyed (it never had a
 * socket). A caller who passed exactly that value is indistinguishable from one who passed nothing (agentkeepalive
 * overwrites the options object it is given), and the value changes nothing the class would not do anyway. A class
 * whose constructor throws for those options: the value counts as chosen. Cost: one agent construction per ignored
 * key present, once per resolved config.
 */
function classDefault(agent: http.Agent, options: Record<string, unknown>, key: string): boolean {
  const AgentClass = agent.constructor as new (options: Record<string, unknown>) => http.Agent;
  const { [key]: value, ...rest } = options;
  let probe: http.Agent | undefined;
  try {
    probe = new AgentClass(rest);
    return Object.is((probe as { options?: Record<string, unknown> }).options?.[key], value);
  } catch {
    return false;
  } finally {
    probe?.destroy();
  }
}

/**
 * The name of the method through which `agent` makes connections other than Node's own (`createConnection`,
 * `addRequest` differing from `http.Agent`'s / `https.Agent`'s, or an `agent-base` style `connect`), or `undefined`.
 */
function ownConnectionMethod(agent: Record<string, unknown>): string | undefined {
  if (typeof agent.connect === "function") return "connect";
  const create = agent.createConnection;
  if (
    typeof create === "function" &&
    create !== http.Agent.prototype.createConnection &&
    create !== https.Agent.prototype.createConnection &&
    !isAgentKeepAlive(agent)
  )
    return "createConnection";
  const add = (agent as { addRequest?: unknown }).addRequest;
  if (typeof add === "function" && add !== (http.Agent.prototype as unknown as { addRequest: unknown }).addRequest)
    return "addRequest";
  return undefined;
}

/**
 * Whether `agent` is an `agentkeepalive` agent (`HttpAgent` / `HttpsAgent`), recognised by its public API
 * (`getCurrentStatus()`, `statusChanged`, the `freeSocketTimeout` option it always sets). Its `createConnection`
 * calls Node's own and only counts and times the sockets it creates: its connections go where a plain `Agent`'s go,
 * so reading its options as a plain `Agent`'s bypasses nothing.
 */
function isAgentKeepAlive(agent: Record<string, unknown>): boolean {
  const options = agent.options as { freeSocketTimeout?: unknown } | undefined;
  return (
    typeof agent.getCurrentStatus === "function" &&
    "statusChanged" in agent &&
    typeof options?.freeSocketTimeout === "number"
  );
}
