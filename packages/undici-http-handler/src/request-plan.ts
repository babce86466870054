import { DeadlineKind, type DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import type { Logger } from "@smithy/types";
import type { ResolvedUndiciConfig } from "./resolve-undici-config";
import type { UndiciPoolMonitor } from "./undici-pool-monitor";

/** The deadline armed from the start: whichever of the connection and acquisition timeouts ends first. @internal */
export type FirstDeadlineKind = typeof DeadlineKind.Connection | typeof DeadlineKind.Acquire;

/**
 * Per-config request settings, built once per resolved config (two plans: with and without a call's own
 * `requestTimeout`) and shared by every request. A class, not an object literal, so the build can shorten its member
 * names (they are read on every request).
 * @internal
 */
export class RequestPlan {
  /** `min(connectionTimeout, socketAcquisitionTimeout)` (both end when the request gets a connection), or 0. */
  declare readonly firstMs: number;
  declare readonly firstKind: FirstDeadlineKind;
  /** `connectionTimeout`, ms. */
  declare readonly connectLimitMs: number | undefined;
  /** `socketAcquisitionTimeout`, ms. */
  declare readonly acquireMs: number | undefined;
  /** The request deadline rejects (else it only warns). */
  declare readonly throwsOnTimeout: boolean;
  /** `socketTimeout`: inactivity timeout on the scheduler (`SOCKET_IDLE`, see `UndiciRequestCore`), ms (0 = none). */
  declare readonly idleMs: number;
  /** `idleMs` is the service's default (`Symbol.for("@smithy/defaultSocketTimeout")`), not an option. */
  declare readonly idleIsServiceDefault: boolean;
  declare readonly warnLogger: Logger | undefined;
  /** Whether the monitor samples on the scheduler (socketMonitor "interval"). */
  declare readonly samplesOnTick: boolean;

  /**
   * @param throwsOnTimeout - whether the request deadline rejects: `throwOnRequestTimeout === true` for the
   *   handler's own `requestTimeout`, `!== false` for a call's own.
   */
  constructor(
    config: ResolvedUndiciConfig,
    readonly deadlineClock: DeadlineScheduler,
    readonly poolTelemetry: UndiciPoolMonitor | undefined,
    throwsOnTimeout: boolean
  ) {
    const connection = config.connectionTimeout ?? 0;
    const acquisition = config.socketAcquisitionTimeout ?? 0;
    let firstMs = 0;
    let firstKind: FirstDeadlineKind = DeadlineKind.Connection;
    if (connection > 0 && (acquisition === 0 || connection <= acquisition)) firstMs = connection;
    else if (acquisition > 0) {
      firstMs = acquisition;
      firstKind = DeadlineKind.Acquire;
    }
    const explicit = config.socketTimeout;
    const serviceDefault =
      explicit === undefined && typeof config.defaultSocketTimeout === "number" && config.defaultSocketTimeout > 0
        ? config.defaultSocketTimeout
        : undefined;
    const socketTimeout = serviceDefault ?? explicit ?? 0;
    this.firstMs = firstMs;
    this.firstKind = firstKind;
    this.connectLimitMs = config.connectionTimeout;
    this.acquireMs = config.socketAcquisitionTimeout;
    this.throwsOnTimeout = throwsOnTimeout;
    this.idleMs = Number.isFinite(socketTimeout) ? socketTimeout : 0;
    this.idleIsServiceDefault = serviceDefault !== undefined;
    this.warnLogger = config.logger;
    this.samplesOnTick = poolTelemetry !== undefined && config.socketMonitor === "interval";
  }
}
