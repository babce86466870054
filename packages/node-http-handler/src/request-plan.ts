import type { Logger } from "@smithy/types";
import { DeadlineKind, DeadlinePlan, type DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import type { Agent } from "node:http";
import type { AgentGate } from "./agent-gate";
import { MIN_CONTINUE_WAIT_MS } from "./constants";

/**
 * What the handler resolves for a request: its agent and deadlines (ms, `undefined` = off). Shared by every request of
 * a (resolved config, protocol) without a per-call override or `Expect: 100-continue`. @internal
 */
export interface RequestPlan {
  readonly agent: Agent;
  readonly isSSL: boolean;
  /** The agent is a one-off 100-continue agent: never swept, and counted as `unpooled` (outside the pool gauges). */
  readonly oneOffAgent: boolean;
  /** The agent's free sockets are swept (`socket-lifecycle.ts`); otherwise no lifecycle work per request. */
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
  /** The handler's gate in front of `agent` (`undefined`: none, e.g. the one-off 100-continue agent). */
  readonly agentGate: AgentGate | undefined;
  /** Its deadlines on the handler's scheduler, built on first use (`deadlinePlanOf`); `undefined` until then. */
  deadlines?: DeadlinePlan<"http1"> | undefined;
}

/**
 * The deadlines of `plan`'s requests on `scheduler`, built once per plan and scheduler: `connectionTimeout` (armed by
 * the request itself), `socketAcquisitionTimeout`, `requestTimeout`, upstream's `100 Continue` wait and
 * `unreadBodyTimeout`. @internal
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
