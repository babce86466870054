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
 * per arm: the node belongs to the request's state object and is reused for its whole life.
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
 * Process lifetime: the interval is `unref()`'d and cleared at the first tick that finds nothing to do, so an idle
 * process has no handler timer at all and a forgotten handler never keeps a process alive (sockets in use do).
 *
 * Fake timers: the interval is recreated if `globalThis.setInterval` changed since it was created (vitest
 * installing or removing fake timers), and every global is resolved at call time through `timing`.
 */
import { TICK_MS } from "./constants";
import { timing } from "./timing";

/** Something that owns deadlines and is told when one fires. @internal */
export interface DeadlineOwner {
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
  native: NodeJS.Timeout | undefined = undefined;

  constructor(
    readonly owner: DeadlineOwner,
    readonly kind: number
  ) {}

  /** True while the deadline is armed (and has not fired or been cancelled). */
  get armed(): boolean {
    return this.state !== IDLE;
  }
}

/** @internal */
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
  d.native = undefined;
  d.state = IDLE;
  scheduler.released();
  d.owner.onDeadline(d.kind, timing.now());
}

/**
 * One lazily created, self-stopping, unref'd interval that fires every deadline of one handler.
 * @internal
 */
export class DeadlineScheduler {
  private readonly lists = new Map<number, DeadlineList>();
  private ticker: NodeJS.Timeout | undefined;
  private tickerImpl: unknown;
  private armedCount = 0;
  private expired: Deadline[] = [];
  private flushPending = false;
  private readonly boundTick = () => this.tick();
  private readonly boundFlush = () => this.flush();

  /**
   * @param onTick - called on every tick with the monotonic time; returns true while the owner still needs ticks
   *   (e.g. requests in flight to sample). The interval stops when it returns false and nothing is armed.
   */
  constructor(private readonly onTick?: (now: number) => boolean) {}

  /** Number of deadlines currently armed on the shared interval or on native short timers. */
  get size(): number {
    return this.armedCount;
  }

  /** Whether the shared interval currently exists. */
  get ticking(): boolean {
    return this.ticker !== undefined;
  }

  /**
   * Arms `d` to fire `durationMs` after `start` (a `timing.now()` reading). Re-arming an armed deadline moves it.
   * Non-finite or negative durations are ignored (nothing is armed).
   */
  arm(d: Deadline, start: number, durationMs: number): void {
    if (d.state !== IDLE) this.cancel(d);
    if (!(durationMs >= 0) || durationMs === Infinity) return;
    d.state = ARMED;
    this.armedCount++;
    if (durationMs < 2 * TICK_MS) {
      const remaining = Math.max(0, start + durationMs - timing.now());
      d.native = timing.setTimeout(fireNative, remaining, d, this);
      d.native.unref?.();
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
    } else if (d.list !== undefined) {
      d.list.remove(d);
    }
  }

  /** @internal Called when a native short deadline fired. */
  released(): void {
    this.armedCount--;
  }

  /** Starts the interval if it is not running (or was created by another timer implementation). */
  ensureTicking(): void {
    if (this.ticker !== undefined) {
      if (this.tickerImpl === globalThis.setInterval) return;
      timing.clearInterval(this.ticker);
    }
    this.tickerImpl = globalThis.setInterval;
    this.ticker = timing.setInterval(this.boundTick, TICK_MS);
    this.ticker.unref?.();
  }

  /** Clears the interval and forgets every deadline (used by `destroy()`). */
  stop(): void {
    if (this.ticker !== undefined) timing.clearInterval(this.ticker);
    this.ticker = undefined;
    for (const list of this.lists.values()) {
      for (let d = list.head; d !== undefined; ) {
        const next = d.next;
        d.next = d.prev = d.list = undefined;
        d.state = IDLE;
        d = next;
      }
    }
    this.lists.clear();
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
    if (!ownerBusy && this.armedCount === 0 && this.ticker !== undefined) {
      timing.clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  private flush(): void {
    this.flushPending = false;
    const expired = this.expired;
    this.expired = [];
    const now = timing.now();
    for (const d of expired) {
      // Cancelled or re-armed after collection (e.g. its response arrived during an event-loop stall): skip.
      if (d.state !== EXPIRING) continue;
      d.state = IDLE;
      this.armedCount--;
      d.owner.onDeadline(d.kind, now);
    }
  }
}
