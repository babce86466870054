/**
 * What `Http2PoolMonitor` reads from an HTTP/2 session pool (implemented by `Http2SessionPool`, its origins and
 * session entries): read-only views, so the monitor imports no pool class and the pool can import the monitor: no
 * import cycle. Everything here is read at `getStats()` or sample time; nothing is written through it.
 */
import type { SaturationReport } from "@sockeye/pool-monitor";
import type { Http2OriginCounters } from "./http2-origin-counters";
import type { Http2SessionState } from "./http2-session-state";
import type { ResolvedHttp2Config } from "./resolve-http2-config";

/** One open session of an origin. @internal */
export interface Http2SessionView {
  readonly id: number;
  readonly state: Http2SessionState;
  readonly isolated: boolean;
  /** Counted in `maxIsolatedSessionsPerOrigin` (an isolated session that is not an event stream's). */
  readonly boundedIsolated: boolean;
  /** Streams open on it now / at most at once / over its life. */
  readonly active: number;
  readonly maxActive: number;
  readonly streams: number;
  readonly peerMaxConcurrentStreams: number | undefined;
  readonly streamLimit: number;
  /** `timing.now()` ms at creation. */
  readonly createdAt: number;
}

/** One origin (`scheme://host:port`) of the pool. @internal */
export interface Http2OriginView {
  readonly name: string;
  /** `undefined` with `telemetry: false`. */
  readonly counters: Http2OriginCounters | undefined;
  /** Every open session, isolated and closing ones included. */
  readonly open: Iterable<Http2SessionView>;
  /** Pooled sessions that are connecting or ready. */
  readonly sessions: readonly Http2SessionView[];
  /** Pooled streams waiting for a slot / isolated requests waiting for a session / both. */
  readonly queued: number;
  readonly isolatedQueued: number;
  readonly waiting: number;
  /** Isolated sessions counted against `maxIsolatedSessionsPerOrigin`. */
  readonly isolatedOpen: number;
  /** The request waiting longest (`startedAt`: `timing.now()` ms). */
  readonly oldestWaiting: { readonly startedAt: number } | undefined;
  /** The request holding a stream slot longest (`slotAt`: `timing.now()` ms). */
  readonly activeHead: { readonly slotAt: number } | undefined;
}

/** The pool. @internal */
export interface Http2PoolView {
  readonly origins: ReadonlyMap<string, Http2OriginView>;
  readonly config:
    | Pick<ResolvedHttp2Config, "maxSessionsPerOrigin" | "maxConcurrentStreams" | "maxIsolatedSessionsPerOrigin">
    | undefined;
  /** `timing.now()`, ms. */
  now(): number;
  /** Hands a saturation transition to the user's callbacks and logger. */
  report(report: SaturationReport): void;
}
