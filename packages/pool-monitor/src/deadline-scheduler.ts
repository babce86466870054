/**
 * DeadlineScheduler: every deadline of one handler on ONE native timer, armed for the earliest expiry, as Node's
 * `lib/internal/timers.js`. A deadline is a node its request owns: arming or cancelling it is a few field writes.
 *
 *   lists: Map<durationMs, DeadlineList>          heap: DeadlineList[] (min-heap on `expiry`, ≤ one per duration)
 *     1000 ─► [d(at=10.0s)] ⇄ [d(at=10.2s)] ⇄ …      [1000: 10.0s] ─┬─ [5000: 14.1s]
 *     5000 ─► [d(at=14.1s)] ⇄ [d(at=14.3s)]                          └─ [30: 10.03s] …
 *   timer: one native `setTimeout`, due at heap[0].expiry
 *
 * Nodes of a list share one duration and are appended with `at = start + duration` on a monotonic clock, so a list
 * stays sorted unsearched. A list's `expiry` is its head's `at` or EARLIER (cancelling a head leaves it stale, so
 * cancel stays O(1); a wake-up at a stale key re-keys and sleeps). Costs: arm O(1), O(log L) for a new duration or
 * earliest head (L = durations), a native re-arm only when the earliest expiry moves earlier; cancel O(1).
 *
 * The timer is ref'd exactly while a deadline whose kind `holdsLoop()` is armed. A deadline collected more than
 * `STALL_CONFIRM_MS` late fires after the poll phase, so I/O that completed while the loop was blocked cancels it
 * first. The owner's periodic `onTick` is one recurring entry, not counted in `size`. Fake timers: the timer is
 * recreated when `globalThis.setTimeout` changed; a replaced timer is recognised by its generation.
 */
import { holdsLoop } from "./deadline-kind";
import { timing } from "./timing";

export { DeadlineKind } from "./deadline-kind";

/** A deadline collected this long (ms) after it was due fires after the poll phase. @internal */
export const STALL_CONFIRM_MS = 100;

/** Default period of an owner's tick, and the throttle of dispatch-time free-socket sweeps, ms. @internal */
export const TICK_MS = 100;

/** Something that owns deadlines and is told when one fires. @internal */
export interface DeadlineOwner<K = number> {
  /** `now`: `timing.now()` ms at firing time. */
  onDeadline(kind: K, now: number): void;
}

type DeadlineState = typeof IDLE | typeof ARMED | typeof EXPIRING;
const IDLE = 0;
const ARMED = 1;
/** Collected by a wake-up, to be fired after the poll phase unless cancelled or re-armed before. */
const EXPIRING = 2;

/** One deadline slot, created once per (request, concern) and re-armed as needed. @internal */
export class Deadline<K = number> {
  at = 0;
  nextSlot: Deadline<any> | undefined;
  prevSlot: Deadline<any> | undefined;
  slotList: DeadlineList | undefined;
  slotState: DeadlineState = IDLE;
  readonly holds: boolean;

  constructor(
    readonly owner: DeadlineOwner<K>,
    readonly kind: K
  ) {
    this.holds = holdsLoop(kind);
  }

  /** True while armed (or collected and not yet fired). */
  get armed(): boolean {
    return this.slotState !== IDLE;
  }
}

/** Intrusive doubly linked list of deadlines of one duration, and its slot in the scheduler's heap. @internal */
class DeadlineList {
  firstSlot: Deadline<any> | undefined;
  tail: Deadline<any> | undefined;
  /** Heap key: the head's `at`, or earlier (stale after a cancel); meaningful while `heapIndex >= 0`. */
  expiry = 0;
  heapIndex = -1;

  constructor(readonly duration: number) {}

  /** Appends `d`, walking back from the tail only when armed with an older `start`. */
  insert(d: Deadline<any>): void {
    d.slotList = this;
    let after = this.tail;
    while (after !== undefined && after.at > d.at) after = after.prevSlot;
    const before = after === undefined ? this.firstSlot : after.nextSlot;
    d.prevSlot = after;
    d.nextSlot = before;
    if (after !== undefined) after.nextSlot = d;
    else this.firstSlot = d;
    if (before !== undefined) before.prevSlot = d;
    else this.tail = d;
  }

  dropSlot(d: Deadline<any>): void {
    if (d.prevSlot) d.prevSlot.nextSlot = d.nextSlot;
    else this.firstSlot = d.nextSlot;
    if (d.nextSlot) d.nextSlot.prevSlot = d.prevSlot;
    else this.tail = d.prevSlot;
    d.nextSlot = d.prevSlot = d.slotList = undefined;
  }
}

function onTimer(scheduler: DeadlineScheduler, generation: number): void {
  scheduler.wake(generation);
}

/** Never called: `wake()` runs the tick itself. */
const TICK_OWNER: DeadlineOwner<undefined> = { onDeadline() {} };

/** One handler's deadlines on one native timer armed for the earliest expiry. @internal */
export class DeadlineScheduler {
  private readonly lists = new Map<number, DeadlineList>();
  private readonly heap: DeadlineList[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Monotonic ms the timer is due at (+Infinity without one). */
  private timerAt = Number.POSITIVE_INFINITY;
  /** The `setTimeout` that made the timer (fake/real timer swaps). */
  private timerImpl: unknown;
  /** Bumped whenever the timer is replaced or cleared; a timer firing with an older number is ignored. */
  private timerGeneration = 0;
  /** Armed or expiring deadlines, the tick included. */
  private armedCount = 0;
  /** Armed or expiring deadlines that keep the process alive (`Deadline.holds`): the timer is ref'd while > 0. */
  private holding = 0;
  /** Collected after a stall, fired after the poll phase (`flush`). */
  private expired: Deadline<any>[] = [];
  private readonly due: Deadline<any>[] = [];
  private flushHandle: ReturnType<typeof setImmediate> | undefined;
  private readonly boundFlush = () => this.flush();
  /** Inside `wake()`: arms do not touch the timer (it is scheduled once, at the end). */
  private waking = false;
  private readonly tick: Deadline<undefined> | undefined;

  /** `onTick` runs every `tickPeriodMs` (ms, or read at each re-arm; default `TICK_MS`) while it returns true. */
  constructor(
    private readonly onTick?: (now: number) => boolean,
    private readonly tickPeriodMs: number | (() => number) = TICK_MS
  ) {
    if (onTick !== undefined) this.tick = new Deadline(TICK_OWNER, undefined);
  }

  /** Number of deadlines currently armed (or expired and not yet fired); the owner tick is not counted. */
  get size(): number {
    return this.armedCount - (this.tick !== undefined && this.tick.slotState !== IDLE ? 1 : 0);
  }

  get ticking(): boolean {
    return this.timer !== undefined;
  }

  /** Whether the native timer keeps the process alive. */
  get holdingLoop(): boolean {
    return this.timer !== undefined && this.holding > 0;
  }

  /** Monotonic ms the native timer is due at (+Infinity without one). For tests and the lateness bench. */
  get dueAt(): number {
    return this.timerAt;
  }

  /** Arms (or moves) `d` to fire `durationMs` after `start`; a negative or infinite duration arms nothing. */
  arm(d: Deadline<any>, start: number, durationMs: number): void {
    if (d.slotState !== IDLE) this.disarm(d);
    if (!(durationMs >= 0) || durationMs === Number.POSITIVE_INFINITY) return;
    const at = start + durationMs;
    d.at = at;
    d.slotState = ARMED;
    this.armedCount++;
    if (d.holds && this.holding++ === 0) this.refTimer(true);
    let list = this.lists.get(durationMs);
    if (list === undefined) {
      list = new DeadlineList(durationMs);
      this.lists.set(durationMs, list);
    }
    list.insert(d);
    if (list.heapIndex < 0) {
      list.expiry = at;
      this.heapPush(list);
    } else if (at < list.expiry && list.firstSlot === d) {
      // `at < list.expiry` first: that load runs on every arm and keeps type feedback (no deopt at a burst's start).
      list.expiry = at;
      this.siftUp(list.heapIndex);
    }
    if (this.waking) return;
    if (at < this.timerAt || this.timerImpl !== globalThis.setTimeout) this.schedule(this.heap[0].expiry, timing.now());
  }

  /** Cancels `d` if armed (or collected but not yet fired). O(1). */
  disarm(d: Deadline<any>): void {
    if (d.slotState === IDLE) return;
    this.armedCount--;
    if (d.holds && --this.holding === 0) this.refTimer(false);
    d.slotState = IDLE;
    d.slotList?.dropSlot(d);
  }

  /** Starts the owner tick if it is not armed (and re-creates the timer if the timer implementation changed). */
  ensureTicking(): void {
    const tick = this.tick;
    if (tick !== undefined && tick.slotState === IDLE) this.arm(tick, timing.now(), this.period());
    else if (this.timer !== undefined && this.timerImpl !== globalThis.setTimeout)
      this.schedule(this.timerAt, timing.now());
  }

  /** Clears the timer and forgets every deadline and the tick (used by `destroy()`). */
  stop(): void {
    this.clearTimer();
    for (const d of this.expired) d.slotState = IDLE;
    this.expired = [];
    for (const d of this.due) d.slotState = IDLE;
    this.due.length = 0;
    timing.clearImmediate(this.flushHandle);
    this.flushHandle = undefined;
    this.armedCount = 0;
    this.holding = 0;
  }

  private period(): number {
    const p = this.tickPeriodMs;
    return typeof p === "number" ? p : p();
  }

  /** Runs the owner's work and re-arms the tick without drift, or from `now` when more than a period late. */
  private runTick(now: number): void {
    let busy = true;
    try {
      busy = this.onTick!(now);
    } finally {
      const tick = this.tick!;
      if (busy && tick.slotState === IDLE) {
        const period = this.period();
        this.arm(tick, now - tick.at < period ? tick.at : now, period);
      }
    }
  }

  /** @internal The native timer fired; one of an older `generation` (replaced or cleared) is ignored. */
  wake(generation: number): void {
    if (generation !== this.timerGeneration) return;
    const dueAt = this.timerAt;
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    // The timer reached `dueAt` even if `timing.now()` reads earlier (cached loop time, or only `setTimeout` faked).
    const now = Math.max(timing.now(), dueAt);
    const heap = this.heap;
    const tick = this.tick;
    const due = this.due;
    let tickDue = false;
    let failure: { error: unknown } | undefined;
    this.waking = true;
    try {
      while (heap.length > 0) {
        const list = heap[0];
        let d = list.firstSlot;
        while (d !== undefined && d.at <= now) {
          const next = d.nextSlot;
          list.dropSlot(d);
          if (d === tick) {
            d.slotState = IDLE;
            this.armedCount--;
            tickDue = true;
          } else {
            d.slotState = EXPIRING;
            if (now - d.at > STALL_CONFIRM_MS) this.expired.push(d);
            else due.push(d);
          }
          d = next;
        }
        if (d === undefined) {
          this.heapRemoveTop();
          if (this.lists.get(list.duration) === list) this.lists.delete(list.duration);
          continue;
        }
        // Re-key (the key only ever grows here); stop once the top's key is exact and in the future.
        list.expiry = d.at;
        this.siftDown(0);
        if (heap[0] === list) break;
      }
      if (this.expired.length > 0 && this.flushHandle === undefined) {
        this.flushHandle = timing.afterPoll(this.boundFlush);
      }
      failure = this.fire(due, now);
      if (tickDue) this.runTick(now);
    } finally {
      this.waking = false;
      due.length = 0;
      let expiring = 0;
      for (const d of this.expired) if (d.slotState === EXPIRING) expiring++;
      // Nothing left on the lists (only cancelled heads behind stale keys): drop them, no timer.
      if (this.armedCount === expiring) this.forgetLists();
      else if (heap.length > 0) this.schedule(heap[0].expiry, now);
    }
    if (failure !== undefined) throw failure.error;
  }

  private schedule(at: number, now: number): void {
    if (this.timer !== undefined) timing.clearTimeout(this.timer);
    const delay = Math.max(0, Math.ceil(at - now));
    const timer = timing.setTimeout(onTimer, delay, this, ++this.timerGeneration);
    if (this.holding === 0) (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
    this.timerAt = at;
    this.timerImpl = globalThis.setTimeout;
  }

  private refTimer(hold: boolean): void {
    const timer = this.timer as { ref?: () => void; unref?: () => void } | undefined;
    if (timer === undefined) return;
    if (hold) timer.ref?.();
    else timer.unref?.();
  }

  /** Fires the deadlines of `list` still collected, each in its own `try`; returns the first error. */
  private fire(list: Deadline<any>[], now: number): { error: unknown } | undefined {
    let failure: { error: unknown } | undefined;
    for (let i = 0; i < list.length; i++) {
      const d = list[i];
      // Cancelled or re-armed after collection (by a deadline fired before it, or I/O during a stall): skip.
      if (d.slotState !== EXPIRING) continue;
      d.slotState = IDLE;
      this.armedCount--;
      if (d.holds && --this.holding === 0) this.refTimer(false);
      try {
        d.owner.onDeadline(d.kind, now);
      } catch (error) {
        failure ??= { error };
      }
    }
    return failure;
  }

  private flush(): void {
    this.flushHandle = undefined;
    const expired = this.expired;
    this.expired = [];
    const failure = this.fire(expired, timing.now());
    if (this.armedCount === 0) this.clearTimer();
    if (failure !== undefined) throw failure.error;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) timing.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerGeneration++;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.timerImpl = undefined;
    this.forgetLists();
  }

  /** Drops every list (they hold no armed deadline: only cancelled ones left their stale keys behind). */
  private forgetLists(): void {
    for (const list of this.lists.values()) forget(list);
    this.lists.clear();
    this.heap.length = 0;
  }

  private heapPush(list: DeadlineList): void {
    list.heapIndex = this.heap.length;
    this.heap.push(list);
    this.siftUp(list.heapIndex);
  }

  private heapRemoveTop(): void {
    const heap = this.heap;
    heap[0].heapIndex = -1;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    last.heapIndex = 0;
    this.siftDown(0);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    const item = heap[i];
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent].expiry <= item.expiry) break;
      heap[i] = heap[parent];
      heap[i].heapIndex = i;
      i = parent;
    }
    heap[i] = item;
    item.heapIndex = i;
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const item = heap[i];
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child + 1].expiry < heap[child].expiry) child++;
      if (heap[child].expiry >= item.expiry) break;
      heap[i] = heap[child];
      heap[i].heapIndex = i;
      i = child;
    }
    heap[i] = item;
    item.heapIndex = i;
  }
}

/** Unlinks every node of `list` and marks it idle, without touching the armed count. */
function forget(list: DeadlineList): void {
  for (let d = list.firstSlot; d !== undefined; ) {
    const next = d.nextSlot;
    d.nextSlot = d.prevSlot = d.slotList = undefined;
    d.slotState = IDLE;
    d = next;
  }
  list.firstSlot = list.tail = undefined;
  list.heapIndex = -1;
}
