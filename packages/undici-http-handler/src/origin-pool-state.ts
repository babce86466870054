/**
 * OriginPoolState: everything the undici telemetry keeps for one origin (`scheme://host:port`).
 *
 * Request bookkeeping is intrusive: a request's state object carries `listPrev`/`listNext` and is linked into at
 * most one of two doubly linked lists of its origin at a time:
 *
 *   waiting: requests not yet given a connection, in start order ─► head = oldest queued (oldestQueuedMs in O(1))
 *   paused:  responses whose body is paused by backpressure (the caller is not reading) ─► unconsumed-body detection
 *
 * Insert and remove are O(1) and allocate nothing. Connection state (connecting, created, closed by reason, connect
 * and TLS times, age) is fed by the tracked connector; the pool's own gauges (connected / free / pending) come from
 * undici's `PoolStats` at read time. Counters only grow, except the per-sample ones the detector consumes.
 */
import { type CloseReason, SaturationDetector, type SaturationSample } from "@sockeye/pool-monitor";
import { DurationRecorder } from "./duration-recorder";

/** Fields a request state object carries for its origin's lists. @internal */
export interface PoolRequestNode {
  startedAt: number;
  acquiredAt: number;
  pausedAt: number;
  /** 0: in no list, 1: waiting, 2: paused. */
  listed: number;
  listPrev: PoolRequestNode | undefined;
  listNext: PoolRequestNode | undefined;
}

/** Subset of undici's `PoolStats` / `ClientStats` read by the telemetry. @internal */
export interface UndiciStatsLike {
  connected?: number;
  free?: number;
  pending?: number;
  queued?: number;
  running?: number;
}

/** An intrusive doubly linked list of request nodes. @internal */
export class RequestList {
  head: PoolRequestNode | undefined = undefined;
  tail: PoolRequestNode | undefined = undefined;
  size = 0;

  constructor(private readonly tag: number) {}

  push(n: PoolRequestNode): void {
    n.listed = this.tag;
    n.listPrev = this.tail;
    n.listNext = undefined;
    if (this.tail === undefined) this.head = n;
    else this.tail.listNext = n;
    this.tail = n;
    this.size++;
  }

  remove(n: PoolRequestNode): void {
    if (n.listed !== this.tag) return;
    if (n.listPrev === undefined) this.head = n.listNext;
    else n.listPrev.listNext = n.listNext;
    if (n.listNext === undefined) this.tail = n.listPrev;
    else n.listNext.listPrev = n.listPrev;
    n.listPrev = n.listNext = undefined;
    n.listed = 0;
    this.size--;
  }
}

const CLOSE_REASONS: readonly CloseReason[] = [
  "connect_error",
  "aborted",
  "timed_out",
  "error",
  "timeout",
  "server_closed",
  "idle_timeout",
  "max_lifetime",
  "local",
];

/** @internal */
export class OriginPoolState {
  readonly detector: SaturationDetector;
  /** Connection limit; `null` = unlimited or unknown (caller's dispatcher). */
  maxSockets: number | null = null;
  /** Reads undici's stats of this origin's pool, when reachable. */
  stats: (() => UndiciStatsLike | undefined) | undefined = undefined;

  readonly waiting = new RequestList(1);
  readonly paused = new RequestList(2);
  /** Requests holding a connection (given one, not yet finished with it). */
  holding = 0;
  /** Connection attempts not yet connected or failed. */
  connecting = 0;
  /** Connected sockets whose first request has not been dispatched yet (to tell reused acquisitions). */
  fresh = 0;
  inFlight = 0;

  started = 0;
  completed = 0;
  failed = 0;
  aborted = 0;
  timedOut = 0;
  socketsCreated = 0;
  acquisitions = 0;
  reusedAcquisitions = 0;
  socketErrors = 0;
  readonly closed = Object.fromEntries(CLOSE_REASONS.map((r) => [r, 0])) as Record<CloseReason, number>;

  readonly queueWait = new DurationRecorder();
  readonly connect = new DurationRecorder();
  readonly tls = new DurationRecorder();
  readonly connectionAge = new DurationRecorder();

  // Per-sample counters, reset by the detector feed.
  arrivals = 0;
  completions = 0;
  holdSumMs = 0;
  holdCount = 0;
  holdMaxMs = 0;
  minQueued = Number.POSITIVE_INFINITY;
  readonly sample: SaturationSample = { now: 0, active: 0, maxSockets: 0, queued: 0, completions: 0 };
  lastWarnAt = Number.NEGATIVE_INFINITY;
  recommendedMaxSockets: number | null = null;

  constructor(
    readonly origin: string,
    windowSamples: number,
    sampleIntervalMs: number
  ) {
    this.detector = new SaturationDetector({ origin, windowSamples, sampleIntervalMs });
  }

  /** Requests waiting for a connection, excluding the one each connecting socket will take. */
  get queued(): number {
    const s = this.stats?.();
    if (s !== undefined && typeof s.pending === "number") return Math.max(0, s.pending - this.connecting);
    return Math.max(0, this.waiting.size - this.connecting);
  }

  /** Connections carrying a request, connecting ones included. */
  get active(): number {
    const s = this.stats?.();
    if (s !== undefined && typeof s.connected === "number" && typeof s.free === "number") {
      return Math.max(0, s.connected - s.free) + this.connecting;
    }
    return this.holding + this.connecting;
  }

  /** Idle pooled connections (0 when the dispatcher exposes no stats). */
  get idle(): number {
    const s = this.stats?.();
    return s !== undefined && typeof s.free === "number" ? s.free : 0;
  }

  /** Age of the oldest request still waiting for a connection, ms. */
  oldestQueuedMs(now: number): number {
    const head = this.waiting.head;
    return head === undefined || this.queued === 0 ? 0 : Math.max(0, now - head.startedAt);
  }

  /** Paused bodies not read for `thresholdMs`: count and oldest age. */
  unconsumed(now: number, thresholdMs: number): { count: number; oldestMs: number } {
    let count = 0;
    let oldestMs = 0;
    for (let n = this.paused.head; n !== undefined; n = n.listNext) {
      const age = now - n.pausedAt;
      if (age < thresholdMs) continue;
      count++;
      if (age > oldestMs) oldestMs = age;
    }
    return { count, oldestMs };
  }

  resetSampleCounters(): void {
    this.arrivals = 0;
    this.completions = 0;
    this.holdSumMs = 0;
    this.holdCount = 0;
    this.holdMaxMs = 0;
    this.minQueued = Number.POSITIVE_INFINITY;
  }
}
