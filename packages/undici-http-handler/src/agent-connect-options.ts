/**
 * Maps `httpAgent` / `httpsAgent` (options, or an `Agent`'s `.options`) to undici. Every key ends in one of four places:
 * - undici pool settings: `maxSockets` (read by `resolveUndiciConfig`), `keepAlive: false` (a connection per
 *   request), `localAddress`;
 * - undici `connect` options: every `tls.connect()` / `net.connect()` option, and `keepAliveMsecs` as
 *   `keepAliveInitialDelay`;
 * - ignored with one warning (`IGNORED`, `noDelay: false`): undici has no such setting;
 * - dropped silently (`DROPPED`): keys Node adds itself, and request-level keys that would redirect every connection.
 *
 * An instance that makes its own connections (`https-proxy-agent`) is rejected: its requests would bypass it.
 * `agentkeepalive` is the exception (Node's own connections, counted), and the defaults it writes into its options
 * are not warned about (`classDefault`).
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

/** Reads `agent` (options, or an agent instance) named `name` into undici settings, except `maxSockets`. @internal */
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
    source = { ...(agent as object) };
  }
  const connect: Record<string, unknown> = {};
  let localAddress: string | undefined;
  let keepAlive = true;
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

/** Node's own agent classes write no ignored key into `.options`. */
const NODE_AGENTS = new Set<unknown>([http.Agent, https.Agent]);

/**
 * Whether `options[key]` is what `agent`'s class writes when `key` is not given, by building a probe agent without it
 * (once per ignored key per config). A class that throws: the value counts as chosen.
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

/** The method through which `agent` makes connections other than Node's own, or `undefined`. */
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

/** An `agentkeepalive` agent, recognised by its public API (and the `freeSocketTimeout` it always sets). */
function isAgentKeepAlive(agent: Record<string, unknown>): boolean {
  const options = agent.options as { freeSocketTimeout?: unknown } | undefined;
  return (
    typeof agent.getCurrentStatus === "function" &&
    "statusChanged" in agent &&
    typeof options?.freeSocketTimeout === "number"
  );
}
