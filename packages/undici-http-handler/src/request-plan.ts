import { DeadlinePlan, type DeadlineScheduler, resolveDefaultSocketTimeout } from "@sockeye/pool-monitor/internal";
import type { Logger } from "@smithy/types";
import type { ResolvedUndiciConfig } from "./resolve-undici-config";
import type { UndiciPoolMonitor } from "./undici-pool-monitor";

/** Per-config request settings and deadlines, shared by every request made with them. @internal */
export class RequestPlan extends DeadlinePlan<"undici"> {
  /** `connectionTimeout`, ms. */
  readonly connectLimitMs: number | undefined;
  /** The request deadline rejects (else it only warns). */
  readonly throwsOnTimeout: boolean;
  /** `socketTimeout` (the `socket_idle` deadline), ms (0 = none). */
  readonly idleMs: number;
  /** `idleMs` is the service's default (`Symbol.for("@smithy/defaultSocketTimeout")`), not an option. */
  readonly idleIsServiceDefault: boolean;
  readonly warnLogger: Logger | undefined;
  /** `maxQueuedRequests`: requests an origin's gate may queue (`Infinity`: unbounded). */
  readonly maxQueued: number;
  /** Whether the monitor samples on the scheduler (socketMonitor "interval"). */
  readonly samplesOnTick: boolean;

  /**
   * @param throwsOnTimeout - whether the request deadline rejects: `throwOnRequestTimeout === true` for the
   *   handler's own `requestTimeout`, `!== false` for a call's own.
   * @param requestTimeoutMs - the request deadline, ms: the handler's `requestTimeout` unless a call gives its own.
   */
  constructor(
    config: ResolvedUndiciConfig,
    scheduler: DeadlineScheduler,
    readonly poolTelemetry: UndiciPoolMonitor | undefined,
    throwsOnTimeout: boolean,
    readonly requestTimeoutMs: number | undefined = config.requestTimeout
  ) {
    const explicit = config.socketTimeout;
    const serviceDefault = explicit === undefined ? resolveDefaultSocketTimeout(config) : undefined;
    const socketTimeout = serviceDefault ?? explicit ?? 0;
    const idleMs = Number.isFinite(socketTimeout) ? socketTimeout : 0;
    super(
      scheduler,
      {
        connection: config.connectionTimeout,
        acquire: config.socketAcquisitionTimeout,
        request: requestTimeoutMs,
        socket_idle: idleMs,
        unread_body: config.unreadBodyTimeout,
      },
      // Armed at the connection, or at the first progress undici reports (see `UndiciRequestCore`).
      ["socket_idle"]
    );
    this.connectLimitMs = config.connectionTimeout;
    this.throwsOnTimeout = throwsOnTimeout;
    this.idleMs = idleMs;
    this.idleIsServiceDefault = serviceDefault !== undefined;
    this.warnLogger = config.logger;
    this.maxQueued = config.maxQueuedRequests ?? Number.POSITIVE_INFINITY;
    this.samplesOnTick = poolTelemetry !== undefined && config.socketMonitor === "interval";
  }
}
