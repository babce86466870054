/**
 * DeadlineScheduler: every deadline of one handler on ONE native, unref'd timer, armed for the earliest expiry.
 *
 * Why: upstream arms 2–5 native `Timeout`s per request (warning, connection, request, socket and keep-alive
 * deferrals). Each costs ~150–280 B of heap, an async id and hook work, and ~160–200 ns to arm and clear, and
 * almost all of them are cancelled before they fire. Here a deadline is a small node the request already owns,
 * and arming or cancelling it is a few field writes. This is the design of Node's own `lib/internal/timers.js`
 * (lists per duration under a priority queue of lists, one native timer), kept per handler so it can be stopped,
 * counted, fake-timer tested and confirmed after the poll phase.
 *
 * Structure:
 *
 *   lists: Map<durationMs, DeadlineList>          heap: DeadlineList[] (min-heap on `expiry`, ≤ one per duration)
 *     1000 ─► [d(at=10.0s)] ⇄ [d(at=10.2s)] ⇄ …      [1000: 10.0s] ─┬─ [5000: 14.1s]
 *     5000 ─► [d(at=14.1s)] ⇄ [d(at=14.3s)]                          └─ [30: 10.03s] …
 *   timer: one native `setTimeout`, unref'd, due at heap[0].expiry
 *
 *   Every node of a list shares one duration and is appended with `at = start + duration`, `start` a monotonic clock
 *   reading taken at arm time. Appends therefore arrive in `at` order and each list stays sorted without ever being
 *   searched (a node armed with an older `start` walks back from the tail; in practice zero steps). A list's heap
 *   key `expiry` is its head's `at`, or EARLIER: cancelling or refreshing a head leaves the key stale (never later
 *   than the truth), as Node does, so cancel stays O(1); a wake-up at a stale key re-keys the list and sleeps again.
 *
 * Costs: arm O(1) when its list exists and is not the earliest (a Map lookup and an append: the common case); O(log
 * L) for a new duration or a new earliest head (L = number of durations, a handful), plus a native re-arm
 * (`clearTimeout` + `setTimeout`) only when the new deadline is earlier than the timer's due time. cancel O(1)
 * (unlink). `refresh` O(1) (move to the tail: the socket idle watch on every byte event). A wake-up O(expired +
 * re-keyed lists × log L). No allocation per arm: the node belongs to the request's state object and is reused
 * for its whole life; a new duration allocates its list once.
 *
 * Native timers: zero per request. The timer is re-armed only when the earliest expiry moves earlier (a new
 * shortest duration, or the first deadline after the heap emptied) and at a wake-up; with deadlines that are
 * cancelled before they fire (the common case), a wake-up at a stale key happens about once per shortest duration,
 * whatever the request rate. When the last deadline is cancelled the timer is left to lapse at its due time (at
 * most the shortest duration in use; it is not re-armed then): clearing it on the request path would cost a new
 * native timer per request for sequential traffic. When the last deadline fires (a flush leaves nothing armed) it
 * is cleared at once.
 *
 * Precision: a deadline fires no earlier than `start + duration` and, like a native timer, as soon as the event
 * loop reaches the timers phase after that (the native delay is rounded up to whole ms), plus one poll phase (see
 * stalls). There is no tick: durations from 1 ms to days are all scheduled the same way.
 *
 * Event-loop stalls: a wake-up only *collects* expired nodes; they are fired from a `setImmediate`, i.e. after the
 * poll phase. A response or `connect` that became ready during a long block is therefore processed first and
 * cancels (or refreshes) its deadline, instead of being failed by a deadline that "expired" while the loop was
 * blocked.
 *
 * Isolation: each expired deadline is fired in its own `try`; an owner that throws cannot keep the other deadlines
 * of the same flush from firing (the first such error is rethrown once the loop is done, so a bug stays visible).
 * Owners route user code (loggers, callbacks) through `guardedWarn` or their own `try`/`catch`, so in practice nothing reaches this `catch`.
 *
 * Owner tick: an owner with periodic work (monitor sampling, see `HandlerRuntime`) passes `onTick` and its period;
 * it is one recurring entry of the same lists (re-armed after each call while `onTick` returns true), started by
 * `ensureTicking()`. It runs in the timers phase, as an interval would (periodic work has no stall to confirm), and
 * is not counted in `size`.
 *
 * `stop()` (handler `destroy()`) forgets every deadline and the tick and clears the timer and a pending
 * confirmation: after it nothing fires, nothing is pending and `size` is 0. The armed count is only ever changed by
 * a transition out of / into IDLE, so it cannot go negative.
 *
 * Fake timers: the timer is recreated if `globalThis.setTimeout` changed since it was created (vitest installing or
 * removing fake timers), and every global is resolved at call time through the shared `timing` seam.
 */
import { timing } from "./timing";

export { DeadlineKind } from "./deadline-kind";

/**
 * Default period of an owner's recurring tick on its `DeadlineScheduler` (periodic work such as the undici handler's
 * sampling), and the throttle of dispatch-time free-socket sweeps, in ms. Deadlines do not depend on it: each fires
 * on the scheduler's one native timer, armed for the earliest expiry (see above).
 * @internal
 */
export const TICK_MS = 100;

/** Something that owns deadlines and is told when one fires. @internal */
export interface DeadlineOwner<K = number> {
  /**
   * @param kind - the `kind` the deadline was created with (e.g. a `DeadlineKind`).
   * @param now - `timing.now()` ms at firing time.
   */
  onDeadline(kind: K, now: number): void;
}

/** Lifecycle of a `Deadline` node. @internal */
type DeadlineState = typeof IDLE | typeof ARMED | typeof EXPIRING;
const IDLE = 0;
const ARMED = 1;
/** Collected by a wake-up, to be fired after the poll phase unless cancelled or re-armed before. */
const EXPIRING = 2;

/**
 * One deadline slot. Created once per (request, concern) and re-armed as needed.
 * @internal
 */
export class Deadline<K = number> {
  /** Absolute expiry, monotonic ms. */
  at = 0;
  /** The duration it was last armed with, ms (what `refresh()` re-applies). */
  duration = 0;
  nextSlot: Deadline<any> | undefined;
  prevSlot: Deadline<any> | undefined;
  slotList: DeadlineList | undefined;
  slotState: DeadlineState = IDLE;
  /** The scheduler it was last armed on (lets a shared hook refresh it without a closure). */
  armedOn: DeadlineScheduler | undefined;

  constructor(
    readonly owner: DeadlineOwner<K>,
    readonly kind: K
  ) {}

  /** True while the deadline is armed (and has not fired or been cancelled). */
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

  /** Appends `d` (walking back from the tail only if it expires before the tail: an older `start`). */
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

function onTimer(scheduler: DeadlineScheduler): void {
  scheduler.wake();
}

/** Owner of the owner tick's deadline: never called (`wake()` runs the tick itself, `runTick()`). */
const TICK_OWNER: DeadlineOwner<undefined> = { onDeadline() {} };

/**
 * One handler's deadlines on one native, unref'd timer armed for the earliest expiry.
 * @internal
 */
export class DeadlineScheduler {
  private readonly lists = new Map<number, DeadlineList>();
  private readonly heap: DeadlineList[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Monotonic ms the timer is due at (+Infinity without one). */
  private timerAt = Number.POSITIVE_INFINITY;
  /** The `setTimeout` implementation the timer was created with (fake/real timer swaps). */
  private timerImpl: unknown;
  /** Armed or expiring deadlines, the tick included. */
  private armedCount = 0;
  private expired: Deadline<any>[] = [];
  /** The pending confirmation (`setImmediate`), if any. */
  private flushHandle: ReturnType<typeof setImmediate> | undefined;
  private readonly boundFlush = () => this.flush();
  /** Inside `wake()`: arms do not touch the timer (it is scheduled once, at the end). */
  private waking = false;
  private readonly tick: Deadline<undefined> | undefined;

  /**
   * @param onTick - the owner's periodic work, called with the monotonic time once per `tickPeriodMs` after
   *   `ensureTicking()`; returns true while the owner still needs ticks (e.g. requests in flight to sample).
   * @param tickPeriodMs - the tick period in ms, or a function read at every re-arm (so a reconfigured period
   *   applies at the next tick). Default `TICK_MS` (100 ms).
   */
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

  /** Whether the native timer currently exists. */
  get ticking(): boolean {
    return this.timer !== undefined;
  }

  /** Monotonic ms the native timer is due at (+Infinity without one). For tests and the lateness bench. */
  get dueAt(): number {
    return this.timerAt;
  }

  /**
   * Arms `d` to fire `durationMs` after `start` (a `timing.now()` reading). Re-arming an armed deadline moves it.
   * Non-finite or negative durations are ignored (nothing is armed).
   */
  arm(d: Deadline<any>, start: number, durationMs: number): void {
    if (d.slotState !== IDLE) this.disarm(d);
    if (!(durationMs >= 0) || durationMs === Number.POSITIVE_INFINITY) return;
    const at = start + durationMs;
    d.at = at;
    d.duration = durationMs;
    d.armedOn = this;
    d.slotState = ARMED;
    this.armedCount++;
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
      // `at < list.expiry` first: that load runs on every arm, so it always has type feedback. The other order read
      // `expiry` only when `d` became the head of a list left empty (the first arm of a burst, after every deadline
      // of the last one was cancelled), so optimised callers inlining `arm()` deoptimised at each burst start on an
      // uninitialised load. An earlier head is rare (`at` is later than the stale key unless `start` is older).
      list.expiry = at;
      this.siftUp(list.heapIndex);
    }
    if (this.waking) return;
    if (at < this.timerAt || this.timerImpl !== globalThis.setTimeout) this.schedule(this.heap[0].expiry);
  }

  /**
   * Restarts an armed `d` from `now` with the duration it was armed with (Node's `timeout.refresh()`): O(1), the node
   * moves to its list's tail. An expired deadline not yet fired (an event-loop stall) is re-armed, so activity seen
   * in the poll phase wins. No-op on an idle deadline.
   */
  refresh(d: Deadline<any>, now: number): void {
    const list = d.slotList;
    if (d.slotState === ARMED && list !== undefined) {
      d.at = now + d.duration;
      if (list.tail !== d) {
        list.dropSlot(d);
        list.insert(d);
      }
      // The list's key may now be earlier than its head: a stale key only costs one early wake-up.
      return;
    }
    if (d.slotState === EXPIRING) this.arm(d, now, d.duration);
  }

  /** Cancels `d` if armed (or collected but not yet fired). O(1). */
  disarm(d: Deadline<any>): void {
    if (d.slotState === IDLE) return;
    this.armedCount--;
    d.slotState = IDLE;
    d.slotList?.dropSlot(d);
  }

  /** Starts the owner tick if it is not armed (and re-creates the timer if the timer implementation changed). */
  ensureTicking(): void {
    const tick = this.tick;
    if (tick !== undefined && tick.slotState === IDLE) this.arm(tick, timing.now(), this.period());
    else if (this.timer !== undefined && this.timerImpl !== globalThis.setTimeout) this.schedule(this.timerAt);
  }

  /** Clears the timer and forgets every deadline and the tick (used by `destroy()`). */
  stop(): void {
    this.clearTimer();
    for (const d of this.expired) d.slotState = IDLE;
    this.expired = [];
    if (this.flushHandle !== undefined) timing.clearImmediate(this.flushHandle);
    this.flushHandle = undefined;
    this.armedCount = 0;
  }

  /** The tick period now, ms. */
  private period(): number {
    const p = this.tickPeriodMs;
    return typeof p === "number" ? p : p();
  }

  /**
   * The tick fired: runs the owner's work; while the owner is still busy (or its work threw), the next tick is one
   * period after the one just due (no drift from the confirmation delay), or after `now` if that one was more than a
   * period late (no catch-up burst).
   */
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

  /**
   * @internal The native timer fired: collect what expired (fired after the poll phase), run the owner tick if it
   * is due (at once, in the timers phase, as an interval would), and sleep until the next expiry.
   */
  wake(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = timing.now();
    const heap = this.heap;
    const tick = this.tick;
    let tickDue = false;
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
            this.expired.push(d);
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
      const expired = this.expired;
      if (expired.length > 0 && this.flushHandle === undefined) {
        this.flushHandle = timing.setImmediate(this.boundFlush);
      }
      // Periodic owner work is not a deadline: no stall to confirm, so it runs now (and re-arms itself).
      if (tickDue) this.runTick(now);
    } finally {
      this.waking = false;
      let expiring = 0;
      for (const d of this.expired) if (d.slotState === EXPIRING) expiring++;
      // Nothing left on the lists (only cancelled heads behind stale keys): drop them, no timer.
      if (this.armedCount === expiring) this.forgetLists();
      else if (heap.length > 0) this.schedule(heap[0].expiry);
    }
  }

  private schedule(at: number): void {
    if (this.timer !== undefined) timing.clearTimeout(this.timer);
    const delay = Math.max(0, Math.ceil(at - timing.now()));
    const timer = timing.setTimeout(onTimer, delay, this);
    (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
    this.timerAt = at;
    this.timerImpl = globalThis.setTimeout;
  }

  private flush(): void {
    this.flushHandle = undefined;
    const expired = this.expired;
    this.expired = [];
    const now = timing.now();
    let failure: { error: unknown } | undefined;
    for (const d of expired) {
      // Cancelled or re-armed after collection (e.g. its response arrived during an event-loop stall): skip.
      if (d.slotState !== EXPIRING) continue;
      d.slotState = IDLE;
      this.armedCount--;
      try {
        d.owner.onDeadline(d.kind, now);
      } catch (error) {
        failure ??= { error };
      }
    }
    // Everything fired and nothing was re-armed: the timer (due for a cancelled deadline) goes now, not at its due time.
    if (this.armedCount === 0) this.clearTimer();
    if (failure !== undefined) throw failure.error;
  }

  private clearTimer(): void {
    if (this.timer !== undefined) timing.clearTimeout(this.timer);
    this.timer = undefined;
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

  // ---- binary min-heap of lists on `expiry` (L = number of durations: a handful) ------------------------------

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
