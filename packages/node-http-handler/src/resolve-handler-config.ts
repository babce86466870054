import type { Logger, Provider } from "@smithy/types";
import { type ResolvedSharedOptions, resolveOptions, SHARED_OPTIONS } from "@sockeye/pool-monitor/internal";
import type { Agent as HttpAgent } from "node:http";
import https from "node:https";
import { DEFAULT_MAX_SOCKETS, PACKAGE_PREFIX } from "./constants";
import type { NodeHttpHandlerOptions } from "./node-http-handler-options";

/**
 * The handler's resolved configuration, as `httpHandlerConfigs()` returns it (as upstream, agents included).
 * @internal
 */
export type ResolvedHandlerConfig = Omit<ResolvedSharedOptions, "logger" | "httpAgent" | "httpsAgent"> & {
  /** The service default idle timeout (`Symbol.for("@smithy/defaultSocketTimeout")`). */
  defaultSocketTimeout?: number;
  /** The caller set a lifecycle limit explicitly, so it also applies to caller-owned agents. */
  lifecycleForExternalAgents: boolean;
  logger?: Logger;
  httpAgentProvider: Provider<HttpAgent>;
  httpAgent?: HttpAgent;
  httpsAgent: https.Agent;
};

/**
 * Agents the handler created itself. Lifecycle limits with their defaults apply only to these; a caller-owned agent's
 * pool is left alone unless the caller set `idleSocketTimeout` / `connectionLifetime` explicitly. @internal
 */
export const ownedAgents = new WeakSet<object>();

/** An object counts as an Agent instance if it is one or has a `destroy` function (proxy agents). */
function isAgentInstance(value: unknown, ctor: Function): boolean {
  return value instanceof ctor || typeof (value as { destroy?: unknown })?.destroy === "function";
}

/** Resolves the handler config: the https agent now, the http agent at the first http: request. @internal */
export function resolveHandlerConfig(
  options: NodeHttpHandlerOptions | void | undefined,
  onExternalAgent: () => void
): ResolvedHandlerConfig {
  const config = resolveOptions(SHARED_OPTIONS, options, PACKAGE_PREFIX) as unknown as ResolvedSharedOptions;
  const { httpAgent, httpsAgent } = config;
  let httpAgentPromise: Promise<HttpAgent> | undefined;
  let httpsAgentInstance: https.Agent;
  if (isAgentInstance(httpsAgent, https.Agent)) {
    onExternalAgent();
    httpsAgentInstance = httpsAgent as https.Agent;
  } else {
    httpsAgentInstance = new https.Agent({
      keepAlive: true,
      maxSockets: DEFAULT_MAX_SOCKETS,
      ...(httpsAgent as object),
    });
    // Handler-owned, like the http agent: the default idleSocketTimeout applies to it (i.e. to every AWS request).
    ownedAgents.add(httpsAgentInstance);
  }
  return {
    ...(config as Omit<typeof config, "logger"> & { logger?: Logger }),
    // Set explicitly (validated above), the lifecycle limits also apply to caller-owned agents.
    lifecycleForExternalAgents: options?.idleSocketTimeout != null || options?.connectionLifetime != null,
    // Created by the first http: request.
    httpAgent: undefined,
    httpAgentProvider: () =>
      (httpAgentPromise ??= (async () => {
        const http = await loadHttp();
        if (isAgentInstance(httpAgent, http.Agent)) {
          onExternalAgent();
          return httpAgent as HttpAgent;
        }
        const agent = new http.Agent({ keepAlive: true, maxSockets: DEFAULT_MAX_SOCKETS, ...(httpAgent as object) });
        ownedAgents.add(agent);
        return agent;
      })()),
    httpsAgent: httpsAgentInstance,
  };
}

let httpModule: typeof import("node:http") | undefined;

/** Loads node:http on first use; `http.request` is read at call time, so later patches (nock, APM) apply. @internal */
export async function loadHttp(): Promise<typeof import("node:http")> {
  if (httpModule === undefined) {
    const mod = await import("node:http");
    httpModule = ((mod as { default?: typeof import("node:http") }).default ?? mod) as typeof import("node:http");
  }
  return httpModule;
}

/** The loaded node:http module (only after `loadHttp()` resolved). @internal */
export function loadedHttp(): typeof import("node:http") {
  return httpModule as typeof import("node:http");
}
