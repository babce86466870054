import type { Logger } from "@smithy/types";
import type { Agent } from "node:http";
import type { AgentGate } from "./agent-gate";

/**
 * What the handler resolves for a request before `InFlightRequest.start()`: which agent and which deadlines (ms,
 * `undefined` = off). Read-only and shared: one plan per (resolved config, protocol) serves every request without a
 * per-call `requestTimeout` override or `Expect: 100-continue` (those get their own).
 * @internal
 */
export interface RequestPlan {
  agent: Agent;
  isSSL: boolean;
  /** The agent is a one-off 100-continue agent: never swept, and tracked as `unpooled` (outside the pool gauges and the detector). */
  oneOffAgent: boolean;
  /**
   * The agent's free sockets are swept (`idleSocketTimeout` / `connectionLifetime`, see `socket-lifecycle.ts`): a limit
   * is on and the handler created the agent, or the caller set a limit explicitly. Otherwise a request does no
   * lifecycle work at dispatch or at its end.
   */
  swept: boolean;
  expectContinue: boolean;
  connectionTimeout: number | undefined;
  requestTimeout: number | undefined;
  throwOnRequestTimeout: boolean;
  socketTimeout: number | undefined;
  socketTimeoutIsServiceDefault: boolean;
  socketAcquisitionTimeout: number | undefined;
  connectionLifetime: number | undefined;
  logger: Logger | undefined;
  externalAgent: boolean;
  /**
   * The handler's gate in front of `agent` (`agent-gate.ts`): requests beyond its limits wait there, not in
   * `agent.requests`. `undefined`: none (the one-off 100-continue agent; unit specs): created at once.
   */
  gate?: AgentGate | undefined;
}
