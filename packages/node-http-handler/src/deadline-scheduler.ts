/**
 * DeadlineScheduler: every per-request deadline of one handler on ONE lazy, unref'd interval.
 *
 * Why: upstream arms 2–5 native `Timeout`s per request (warning, connection, request, socket and keep-alive
 * deferrals). Each costs ~150–280 B of heap, an async id and hook work, and ~160–200 ns to arm and clear, and
 * almost all of them are cancelled before they fire. Here a deadline is a small node the request already owns,
 * and arming or cancelling it is a few field writes.
 *
 * Structure (the invariant is the one Node's lib/internal/timers.js relies on):
 *
 *   lists: Map<durationMs, DeadlineList>
 *     1000 ─► [d(at=10.0s)] ⇄ [d(at=10.2s)] ⇄ [d(at=10.9s)]   ◄─ tail (appended)
 *     5000 ─► [d(at=14.1s)] ⇄ [d(at=14.3s)]
 *
 *   Every node of a list shares one duration and is appended with `at = start + duration`, where `start` is a
 *   monotonic clock reading taken at arm time. Appends therefore arrive in `at` order and each list stays sorted
 *   without ever being searched: expiry only looks at heads.
 *
 * Costs: arm O(1) (a Map lookup and an append), cancel O(1) (unlink), tick O(#durations + #expired). No allocation
 * per arm on the interval: the node belongs to the request's state object and is reused for its whole life (a new
 * duration allocates its list once; a native short deadline allocates its Node `Timeout`).
 *
 * Resolution: the interval runs every `TICK_MS` (100 ms) only while something is armed or the owner asks for
 * ticks (`onTick` returns true); a deadline fires no earlier than `start + duration` and at most one tick later
 * (plus whatever event-loop lag delays the tick itself). Durations shorter than two ticks use a native timer, as
 * a ±100 ms error would dominate them.
 *
 * Event-loop stalls: the tick only *collects* expired nodes; they are fired from a `setImmediate`, i.e. after the
 * poll phase. A response or `connect` that became ready during a long block is therefore processed first and
 * cancels its deadline, instead of being failed by a deadline that "expired" while the loop was blocked.
 *
 * Isolation: each expired deadline is fired in its own `try`; an owner that throws cannot keep the other deadlines
 * of the same flush from firing (the first such error is rethrown once the loop is done, so a bug stays visible).
 * Owners route user code (loggers, callbacks) through `guardedCall`, so in practice nothing reaches this `catch`.
 *
 * `stop()` (handler `destroy()`) forgets every deadline, native short timers included: after it nothing fires and
 * `size` is 0. The armed count is only ever changed by a transition out of / into IDLE, so it cannot go negative.
 *
 * Process lifetime: the interval (a `LazyInterval` from `@sockeye/pool-monitor`, shared with the standalone
 * monitor) is `unref()`'d and cleared at the first tick that finds nothing to do, so an idle process has no handler
 * timer at all and a forgotten handler never keeps a process alive (sockets in use do).
 *
 * Fake timers: the interval is recreated if `globalThis.setInterval` changed since it was created (vitest
 * installing or removing fake timers), and every global is resolved at call time through the shared `timing` seam.
 */
import { LazyInterval, timing } from "@sockeye/pool-monitor";
import { TICK_MS } from "./constants";

export { DeadlineKind } from "./deadline-kind";

/** Something that owns deadlines and is told when one fires. @internal */
export interface DeadlineOwner {
  /**
   * @param kind - the `kind` the deadline was created with (see `DeadlineKind`).
   * @param now - `timing.now()` ms at firing time.
   */
  onDeadline(kind: number, now: number): void;
}

const IDLE = 0;
const ARMED = 1;
const EXPIRING = 2;

/**
 * One deadline slot. Created once per (request, concern) and re-armed as needed.
 * @internal
 */
export class Deadline {
  /** Absolute expiry, monotonic ms. */
  at = 0;
  next: Deadline | undefined = undefined;
  prev: Deadline | undefined = undefined;
  list: DeadlineList | undefined = undefined;
  state = IDLE;
  native: ReturnType<typeof setTimeout> | undefined = undefined;

  constructor(
    readonly owner: DeadlineOwner,
    readonly kind: number
  ) {}

  /** True while the deadline is armed (and has not fired or been cancelled). */
  get armed(): boolean {
    return this.state !== IDLE;
  }
}

/** Intrusive doubly linked list of deadlines. @internal */
class DeadlineList {
  head: Deadline | undefined = undefined;
  tail: Deadline | undefined = undefined;

  append(d: Deadline): void {
    d.list = this;
    d.prev = this.tail;
    d.next = undefined;
    if (this.tail) this.tail.next = d;
    else this.head = d;
    this.tail = d;
  }

  remove(d: Deadline): void {
    if (d.prev) d.prev.next = d.next;
    else this.head = d.next;
    if (d.next) d.next.prev = d.prev;
    else this.tail = d.prev;
    d.next = d.prev = d.list = undefined;
  }
}

function fireNative(d: Deadline, scheduler: DeadlineScheduler): void {
  scheduler.fireNative(d);
}

/**
 * One lazily created, self-stopping, unref'd interval that fires every deadline of one handler.
 * @internal
 */
export class DeadlineScheduler {
  private readonly lists = new Map<number, DeadlineList>();
  /** Deadlines shorter than two ticks, each on its own native timer (kept here so `stop()` can clear them). */
  private readonly natives = new DeadlineList();
  private readonly interval: LazyInterval;
  private armedCount = 0;
  private expired: Deadline[] = [];
  private flushPending = false;
  private readonly boundFlush = () => this.flush();

  /**
   * @param onTick - called on every tick with the monotonic time; returns true while the owner still needs ticks
   *   (e.g. requests in flight to sample). The interval stops when it returns false and nothing is armed.
   */
  constructor(private readonly onTick?: (now: number) => boolean) {
    this.interval = new LazyInterval(() => this.tick(), TICK_MS);
  }

  /** Number of deadlines currently armed on the shared interval or on native short timers. */
  get size(): number {
    return this.armedCount;
  }

  /** Whether the shared interval currently exists. */
  get ticking(): boolean {
    return this.interval.running;
  }

  /**
   * Arms `d` to fire `durationMs` after `start` (a `timing.now()` reading). Re-arming an armed deadline moves it.
   * Non-finite or negative durations are ignored (nothing is armed).
   */
  arm(d: Deadline, start: number, durationMs: number): void {
    if (d.state !== IDLE) this.cancel(d);
    if (!(durationMs >= 0) || durationMs === Number.POSITIVE_INFINITY) return;
    d.state = ARMED;
    this.armedCount++;
    if (durationMs < 2 * TICK_MS) {
      const remaining = Math.max(0, start + durationMs - timing.now());
      const native = timing.setTimeout(fireNative, remaining, d, this);
      (native as { unref?: () => void }).unref?.();
      d.native = native;
      this.natives.append(d);
      return;
    }
    d.at = start + durationMs;
    let list = this.lists.get(durationMs);
    if (list === undefined) {
      list = new DeadlineList();
      this.lists.set(durationMs, list);
    }
    list.append(d);
    this.ensureTicking();
  }

  /** Cancels `d` if armed (or collected but not yet fired). O(1). */
  cancel(d: Deadline): void {
    if (d.state === IDLE) return;
    this.armedCount--;
    d.state = IDLE;
    if (d.native !== undefined) {
      timing.clearTimeout(d.native);
      d.native = undefined;
    }
    d.list?.remove(d);
  }

  /** @internal A native short deadline's timer fired. */
  fireNative(d: Deadline): void {
    d.native = undefined;
    if (d.state !== ARMED) return;
    this.natives.remove(d);
    d.state = IDLE;
    this.armedCount--;
    d.owner.onDeadline(d.kind, timing.now());
  }

  /** Starts the interval if it is not running (or was created by another timer implementation). */
  ensureTicking(): void {
    this.interval.ensure();
  }

  /** Clears the interval and forgets every deadline, native short ones included (used by `destroy()`). */
  stop(): void {
    this.interval.stop();
    for (const list of this.lists.values()) forget(list);
    this.lists.clear();
    for (let d = this.natives.head; d !== undefined; d = d.next) {
      timing.clearTimeout(d.native);
      d.native = undefined;
    }
    forget(this.natives);
    for (const d of this.expired) d.state = IDLE;
    this.expired = [];
    this.armedCount = 0;
  }

  private tick(): void {
    const now = timing.now();
    for (const [duration, list] of this.lists) {
      let d = list.head;
      while (d !== undefined && d.at <= now) {
        const next = d.next;
        list.remove(d);
        d.state = EXPIRING;
        this.expired.push(d);
        d = next;
      }
      if (list.head === undefined) this.lists.delete(duration);
    }
    if (this.expired.length > 0 && !this.flushPending) {
      this.flushPending = true;
      timing.setImmediate(this.boundFlush);
    }
    const ownerBusy = this.onTick ? this.onTick(now) : false;
    if (!ownerBusy && this.armedCount === 0) this.interval.stop();
  }

  private flush(): void {
    this.flushPending = false;
    const expired = this.expired;
    this.expired = [];
    const now = timing.now();
    let failure: { error: unknown } | undefined;
    for (const d of expired) {
      // Cancelled or re-armed after collection (e.g. its response arrived during an event-loop stall): skip.
      if (d.state !== EXPIRING) continue;
      d.state = IDLE;
      this.armedCount--;
      try {
        d.owner.onDeadline(d.kind, now);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }
}

/** Unlinks every node of `list` and marks it idle, without touching the armed count. */
function forget(list: DeadlineList): void {
  for (let d = list.head; d !== undefined; ) {
    const next = d.next;
    d.next = d.prev = d.list = undefined;
    d.state = IDLE;
    d = next;
  }
  list.head = list.tail = undefined;
}
