/**
 * Test helper: a deterministic discrete-event simulation of one agent origin (c sockets, FIFO queue),
 * producing the samples `PoolMonitor.sample()` would feed to a `SaturationDetector`.
 *
 * Event-driven: the next event is the earliest of (next arrival, earliest completion, next sample),
 * so cost is O((arrivals + completions) log c), independent of the time resolution. Service times
 * are lognormal (median `medianMs`, shape `sigma`); randomness comes from a seeded mulberry32 PRNG,
 * so a (scenario, seed) pair always yields the same sample sequence. Closed-loop clients (long
 * pollers) resubmit when their request completes; a latency ramp scales service times linearly.
 * Unread bodies: a response that arrives inside the `unread` period keeps its socket until the
 * caller consumes it at `unread.consumeAtMs` (the classic unread `GetObject` body); a sample counts it
 * as unconsumed once it is `unread.countAfterMs` old, as the monitor does.
 */
import type { SaturationSample } from "./saturation-detector";

/** Arrival processes; times in ms. */
export type ArrivalSpec =
  | { kind: "poisson"; ratePerSec: number; fromMs?: number; untilMs?: number }
  | { kind: "batch"; size: number; atMs: number }
  | { kind: "periodic"; size: number; everyMs: number; fromMs?: number; untilMs?: number };

export interface SimScenario {
  maxSockets: number;
  medianMs: number;
  sigma: number;
  horizonMs: number;
  sampleIntervalMs: number;
  arrivals: ArrivalSpec[];
  /** Service started at or after this time never completes (a server that stops answering). */
  stallAtMs?: number;
  /** Multiplies service times of requests started at or after `slowdownAtMs`. */
  slowdownFactor?: number;
  slowdownAtMs?: number;
  /** Service-time multiplier ramping linearly from 1 at `ramp.fromMs` to `ramp.factor` at `ramp.toMs` (then flat). */
  ramp?: { fromMs: number; toMs: number; factor: number };
  /** Closed-loop clients: each sends at `fromMs` (default 0), then again `thinkMs` after its request completes. */
  closedLoop?: { clients: number; thinkMs?: number; fromMs?: number };
  /**
   * Responses arriving in [`fromMs`, `consumeAtMs`) are not read: each pins its socket until `consumeAtMs`, when the
   * caller reads them all (the request completes then). A sample counts one as unconsumed once its response is
   * `countAfterMs` old (default 2 × `sampleIntervalMs`: the monitor's threshold while requests queue).
   */
  unread?: { fromMs: number; consumeAtMs: number; countAfterMs?: number };
}

/** Mean service rate mu in requests/s for c sockets with lognormal service (mean = median * e^(sigma^2/2)). */
export function capacityPerSec(s: Pick<SimScenario, "maxSockets" | "medianMs" | "sigma">): number {
  return s.maxSockets / ((s.medianMs * Math.exp((s.sigma * s.sigma) / 2)) / 1000);
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function arrivalTimes(spec: ArrivalSpec[], horizonMs: number, rng: () => number): number[] {
  const out: number[] = [];
  for (const a of spec) {
    if (a.kind === "batch") {
      for (let i = 0; i < a.size; i++) out.push(a.atMs);
    } else if (a.kind === "periodic") {
      const until = Math.min(a.untilMs ?? horizonMs, horizonMs);
      for (let t = a.fromMs ?? 0; t < until; t += a.everyMs) for (let i = 0; i < a.size; i++) out.push(t);
    } else {
      const until = Math.min(a.untilMs ?? horizonMs, horizonMs);
      let t = a.fromMs ?? 0;
      for (;;) {
        t += (-Math.log(1 - rng()) / a.ratePerSec) * 1000;
        if (t >= until) break;
        out.push(t);
      }
    }
  }
  return out.sort((x, y) => x - y);
}

/** Min-heap of completion times with the matching acquire times. */
class CompletionHeap {
  ends: number[] = [];
  starts: number[] = [];
  get size(): number {
    return this.ends.length;
  }
  peek(): number {
    return this.ends.length ? this.ends[0] : Number.POSITIVE_INFINITY;
  }
  push(end: number, start: number): void {
    const e = this.ends;
    const s = this.starts;
    let i = e.length;
    e.push(end);
    s.push(start);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (e[p] <= e[i]) break;
      [e[p], e[i]] = [e[i], e[p]];
      [s[p], s[i]] = [s[i], s[p]];
      i = p;
    }
  }
  pop(): number {
    const e = this.ends;
    const s = this.starts;
    const start = s[0];
    const lastE = e.pop()!;
    const lastS = s.pop()!;
    if (e.length) {
      e[0] = lastE;
      s[0] = lastS;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < e.length && e[l] < e[m]) m = l;
        if (r < e.length && e[r] < e[m]) m = r;
        if (m === i) break;
        [e[m], e[i]] = [e[i], e[m]];
        [s[m], s[i]] = [s[i], s[m]];
        i = m;
      }
    }
    return start;
  }
}

/**
 * Runs the scenario and calls `onSample` for every sample; the first sample is taken at a seeded
 * random phase in [0, sampleIntervalMs).
 */
export function simulate(sc: SimScenario, seed: number, onSample: (s: SaturationSample) => void): void {
  const rng = mulberry32(seed);
  const arrivals = arrivalTimes(sc.arrivals, sc.horizonMs, rng);
  const heap = new CompletionHeap();
  // Closed-loop resubmissions (few: one per client), kept sorted.
  const resubmits: number[] = [];
  if (sc.closedLoop) for (let i = 0; i < sc.closedLoop.clients; i++) resubmits.push(sc.closedLoop.fromMs ?? 0);
  const queue: number[] = [];
  // Responses not read yet (unread model): acquire and response times; each holds a socket.
  const pinnedStarts: number[] = [];
  const pinnedAt: number[] = [];
  const unread = sc.unread;
  const countAfterMs = unread?.countAfterMs ?? 2 * sc.sampleIntervalMs;
  let qHead = 0;
  let ai = 0;
  let nextSample = rng() * sc.sampleIntervalMs;
  let floor = 0;
  let completions = 0;
  let arrived = 0;
  let holdSum = 0;
  let holdCount = 0;
  let holdMax = 0;
  const serve = (t: number) => {
    const normal = Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng());
    let d = sc.medianMs * Math.exp(sc.sigma * normal);
    if (sc.slowdownAtMs !== undefined && t >= sc.slowdownAtMs) d *= sc.slowdownFactor ?? 1;
    if (sc.ramp !== undefined && t > sc.ramp.fromMs) {
      const f = Math.min(1, (t - sc.ramp.fromMs) / (sc.ramp.toMs - sc.ramp.fromMs));
      d *= 1 + f * (sc.ramp.factor - 1);
    }
    const end = sc.stallAtMs !== undefined && t >= sc.stallAtMs ? Number.POSITIVE_INFINITY : t + d;
    heap.push(end, t);
  };
  // A request releases its socket: count the completion, resubmit (closed loop), hand the socket to the queue head.
  const release = (t: number, start: number) => {
    if (sc.closedLoop) {
      resubmits.push(t + (sc.closedLoop.thinkMs ?? 0));
      resubmits.sort((x, y) => x - y);
    }
    completions++;
    holdSum += t - start;
    holdCount++;
    if (t - start > holdMax) holdMax = t - start;
    if (qHead < queue.length) {
      qHead++;
      const depth = queue.length - qHead;
      if (depth < floor) floor = depth;
      serve(t);
    }
  };
  while (nextSample < sc.horizonMs) {
    const tc = heap.peek();
    const tOpen = ai < arrivals.length ? arrivals[ai] : Number.POSITIVE_INFINITY;
    const tClosed = resubmits.length > 0 ? resubmits[0] : Number.POSITIVE_INFINITY;
    const ta = Math.min(tOpen, tClosed);
    const tRead = unread !== undefined && pinnedStarts.length > 0 ? unread.consumeAtMs : Number.POSITIVE_INFINITY;
    if (tRead <= tc && tRead <= ta && tRead <= nextSample) {
      // The caller reads every pinned body: their sockets are released.
      const starts = pinnedStarts.splice(0);
      pinnedAt.length = 0;
      for (const start of starts) release(tRead, start);
    } else if (tc <= ta && tc <= nextSample) {
      const start = heap.pop();
      if (unread !== undefined && tc >= unread.fromMs && tc < unread.consumeAtMs) {
        pinnedStarts.push(start); // response arrived, body left unread: the socket stays held
        pinnedAt.push(tc);
      } else {
        release(tc, start);
      }
    } else if (ta <= nextSample) {
      if (tClosed <= tOpen) resubmits.shift();
      else ai++;
      arrived++;
      if (heap.size + pinnedStarts.length < sc.maxSockets) serve(ta);
      else queue.push(ta);
    } else {
      const depth = queue.length - qHead;
      let oldestActive = 0;
      let ageSum = 0;
      for (const start of heap.starts) {
        const age = nextSample - start;
        ageSum += age;
        if (age > oldestActive) oldestActive = age;
      }
      let unconsumed = 0;
      let unconsumedOldest = 0;
      for (let i = 0; i < pinnedStarts.length; i++) {
        const age = nextSample - pinnedStarts[i];
        ageSum += age;
        if (age > oldestActive) oldestActive = age;
        const unreadFor = nextSample - pinnedAt[i];
        if (unreadFor >= countAfterMs) {
          unconsumed++;
          if (unreadFor > unconsumedOldest) unconsumedOldest = unreadFor;
        }
      }
      const active = heap.size + pinnedStarts.length;
      onSample({
        now: nextSample,
        active,
        maxSockets: sc.maxSockets,
        queued: depth,
        minQueued: floor,
        completions,
        arrivals: arrived,
        holdTimeSumMs: holdSum,
        holdCount,
        holdTimeMaxMs: holdMax,
        oldestActiveMs: oldestActive,
        activeAgeSumMs: ageSum,
        activeAgeCount: active,
        oldestQueuedMs: depth > 0 ? nextSample - queue[qHead] : 0,
        unconsumedCount: unconsumed,
        unconsumedOldestMs: unconsumedOldest,
      });
      floor = depth;
      completions = arrived = holdSum = holdCount = holdMax = 0;
      if (qHead > 4096 && qHead * 2 > queue.length) {
        queue.splice(0, qHead);
        qHead = 0;
      }
      nextSample += sc.sampleIntervalMs;
    }
  }
}
