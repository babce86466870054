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
  readonly agent: Agent;
  readonly isSSL: boolean;
  /** The agent is a one-off 100-continue agent: never swept, and counted as `unpooled` (outside the pool gauges). */
  readonly oneOffAgent: boolean;
  /**
   * The agent's free sockets are swept (`idleSocketTimeout` / `connectionLifetime`, see `socket-lifecycle.ts`): a
   * limit is on and the handler created the agent, or the caller set a limit explicitly. Otherwise a request does no
   * lifecycle work at dispatch or at its end.
   */
  readonly swept: boolean;
  readonly expectContinue: boolean;
  /** `connectionTimeout`. */
  readonly connectWaitMs: number | undefined;
  /** `requestTimeout` (the per-call override when there is one). */
  readonly requestMs: number | undefined;
  /** `throwOnRequestTimeout`. */
  readonly requestTimeoutThrows: boolean;
  /** `socketTimeout`, or the service default when unset; `undefined` when off. */
  readonly socketIdleMs: number | undefined;
  readonly socketTimeoutIsServiceDefault: boolean;
  /** `socketAcquisitionTimeout`. */
  readonly acquireMs: number | undefined;
  /** `connectionLifetime`. */
  readonly lifetimeMs: number | undefined;
  readonly logger: Logger | undefined;
  /** The caller passed its own agent (`httpAgent` / `httpsAgent` instance). */
  readonly callerAgent: boolean;
  /**
   * The handler's gate in front of `agent` (`agent-gate.ts`): requests beyond its limits wait there, not in
   * `agent.requests`. `undefined`: none (the one-off 100-continue agent; unit specs): created at once.
   */
  readonly agentGate: AgentGate | undefined;
}
