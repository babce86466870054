/**
 * SocketUsageWarning: upstream's "socket usage at capacity" warning, in the `socketMonitor` modes:
 * - `"per-request"`: upstream's native timer per request; on firing, `checkSocketUsage` on its agent;
 * - `"interval"` with telemetry: nothing per request (the saturation detector samples on the shared tick);
 * - `"interval"` without telemetry: a `Deadline` per request for max(`MIN_WARNING_WINDOW_MS`, `warningWindowMs`),
 *   then both agents are checked;
 * - `"off"`: nothing.
 * One warning timestamp per handler (upstream's 15 s lockout) is shared by both agents.
 */
import {
  Deadline,
  DeadlineKind,
  type DeadlineOwner,
  type DeadlineScheduler,
  timing,
} from "@sockeye/pool-monitor/internal";
import type { Agent } from "node:http";
import type { AgentGate } from "./agent-gate";
import { checkSocketUsage } from "./check-socket-usage";
import { MIN_WARNING_WINDOW_MS, PACKAGE_PREFIX } from "./constants";
import type { RequestPlan } from "./request-plan";
import type { ResolvedHandlerConfig } from "./resolve-handler-config";

/** The per-request slots this concern uses (fields of the request's state). @internal */
export interface WarnedRequest extends DeadlineOwner<DeadlineKind> {
  readonly requestPlan: RequestPlan;
  /** `"interval"` mode without telemetry: the window on the shared scheduler. */
  usageWarning: Deadline<DeadlineKind> | undefined;
  /** `"per-request"` mode: upstream's native timer. */
  warningTimer: ReturnType<typeof setTimeout> | undefined;
}

/** What the warning reads of the handler's resolved config. @internal */
export type SocketUsageWarningSettings = Pick<
  ResolvedHandlerConfig,
  | "socketMonitor"
  | "socketAcquisitionWarningTimeout"
  | "requestTimeout"
  | "connectionTimeout"
  | "logger"
  | "httpAgent"
  | "httpsAgent"
>;

/** Delay before a request counts as "waiting", ms (upstream's formula). */
function warningWindowMs(s: SocketUsageWarningSettings): number {
  return s.socketAcquisitionWarningTimeout ?? (s.requestTimeout ?? 2000) + (s.connectionTimeout ?? 1000);
}

function onPerRequestTimer(warning: SocketUsageWarning, r: WarnedRequest): void {
  r.warningTimer = undefined;
  warning.onWindow(r);
}

/** @internal */
export class SocketUsageWarning {
  /** Upstream's per-handler warning timestamp (wall clock ms), shared by both agents. */
  timestamp = 0;
  /** Set by the handler whenever its config is (re)resolved; `undefined` before the first `handle()`. */
  warningSettings: SocketUsageWarningSettings | undefined = undefined;

  /**
   * @param gateOf - the handler's gate in front of an agent, if any: its queued requests count as enqueued with
   *   `agent.requests` (upstream's condition, with the queue the handler keeps instead of the agent).
   */
  constructor(
    private readonly sharedScheduler: DeadlineScheduler,
    private readonly gateOf: (agent: Agent) => AgentGate | undefined = () => undefined
  ) {}

  /** Arms a new request's window by the mode; none for an unlimited or one-off agent, or when `monitored`. */
  arm(r: WarnedRequest, now: number, monitored: boolean): void {
    const settings = this.warningSettings;
    if (settings === undefined || settings.socketMonitor === "off" || r.requestPlan.oneOffAgent) return;
    const maxSockets = r.requestPlan.agent.maxSockets;
    if (typeof maxSockets !== "number" || maxSockets === Number.POSITIVE_INFINITY) return;
    if (settings.socketMonitor === "per-request") {
      r.warningTimer = timing.setTimeout(onPerRequestTimer, warningWindowMs(settings), this, r);
      return;
    }
    if (monitored) {
      this.sharedScheduler.ensureTicking();
      return;
    }
    r.usageWarning ??= new Deadline<DeadlineKind>(r, DeadlineKind.Warning);
    this.sharedScheduler.arm(r.usageWarning, now, Math.max(MIN_WARNING_WINDOW_MS, warningWindowMs(settings)));
  }

  /** The request settled: its window no longer matters. */
  clear(r: WarnedRequest): void {
    if (r.usageWarning !== undefined) this.sharedScheduler.disarm(r.usageWarning);
    if (r.warningTimer !== undefined) {
      timing.clearTimeout(r.warningTimer);
      r.warningTimer = undefined;
    }
  }

  /** A request waited the whole window without settling: run upstream's check. */
  onWindow(r: WarnedRequest): void {
    const settings = this.warningSettings;
    if (settings === undefined) return;
    if (settings.socketMonitor === "per-request") {
      this.timestamp = checkSocketUsage(
        r.requestPlan.agent,
        this.timestamp,
        r.requestPlan.logger,
        undefined,
        r.requestPlan.agentGate
      );
      return;
    }
    for (const agent of [settings.httpAgent, settings.httpsAgent]) {
      if (agent === undefined) continue;
      const before = this.timestamp;
      this.timestamp = checkSocketUsage(agent, before, settings.logger, PACKAGE_PREFIX, this.gateOf(agent));
      if (this.timestamp !== before) return;
    }
  }
}
