import type { Logger } from "@smithy/types";
import { DeadlineKind, DeadlinePlan, type DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import type { Agent } from "node:http";
import type { AgentGate } from "./agent-gate";
import { MIN_CONTINUE_WAIT_MS } from "./constants";

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
  /** `maxQueuedRequests`: requests a gate key may queue (`Infinity`: unbounded). */
  readonly maxQueued: number;
  /** `unreadBodyTimeout`. */
  readonly unreadBodyMs: number | undefined;
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
  /** Its deadlines on the handler's scheduler, built on first use (`deadlinePlanOf`); `undefined` until then. */
  deadlines?: DeadlinePlan<"http1"> | undefined;
}

/**
 * The deadlines of `plan`'s requests on `scheduler`, built once and kept on the plan (rebuilt only if the plan is
 * used with another scheduler): `connectionTimeout` (armed by the request itself: not for a free, connected socket),
 * `socketAcquisitionTimeout`, `requestTimeout`, upstream's `100 Continue` wait, max(6 s, requestTimeout), when
 * the request waits for it on its one-off agent, and `unreadBodyTimeout`. The socket-usage warning window is `SocketUsageWarning`'s.
 * @internal
 */
export function deadlinePlanOf(plan: RequestPlan, scheduler: DeadlineScheduler): DeadlinePlan<"http1"> {
  const cached = plan.deadlines;
  if (cached !== undefined && cached.scheduler === scheduler) return cached;
  const requestMs = plan.requestMs;
  const continueMs =
    plan.expectContinue && !plan.callerAgent
      ? Math.max(MIN_CONTINUE_WAIT_MS, requestMs ?? MIN_CONTINUE_WAIT_MS)
      : undefined;
  const durations = {
    connection: plan.connectWaitMs,
    acquire: plan.acquireMs,
    request: requestMs,
    continue: continueMs,
    warning: undefined,
    unread_body: plan.unreadBodyMs,
  };
  plan.deadlines = new DeadlinePlan<"http1">(scheduler, durations, [DeadlineKind.Connection]);
  return plan.deadlines;
}
