/**
 * DeadlineScheduler: every deadline of one handler on ONE native timer, armed for the earliest expiry.
 *
 * Why: upstream arms 2–5 native `Timeout`s per request (warning, connection, request, socket and keep-alive
 * deferrals). Each costs ~150–280 B of heap, an async id and hook work, and ~160–200 ns to arm and clear, and
 * almost all of them are cancelled before they fire. Here a deadline is a small node the request already owns,
 * and arming or cancelling it is a few field writes. This is the design of Node's own `lib/internal/timers.js`
 * (lists per duration under a priority queue of lists, one native timer), kept per handler so it can be stopped,
 * counted and driven by a test's fake timers.
 *
 * Structure:
 *
 *   lists: Map<durationMs, DeadlineList>          heap: DeadlineList[] (min-heap on `expiry`, ≤ one per duration)
 *     1000 ─► [d(at=10.0s)] ⇄ [d(at=10.2s)] ⇄ …      [1000: 10.0s] ─┬─ [5000: 14.1s]
 *     5000 ─► [d(at=14.1s)] ⇄ [d(at=14.3s)]                          └─ [30: 10.03s] …
 *   timer: one native `setTimeout`, due at heap[0].expiry (ref'd only while a request-scoped deadline is armed)
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
 * native timer per request for sequential traffic. When the last deadline fires it is not re-armed.
 *
 * Keeping the process alive: the timer is ref'd exactly while a deadline that holds the loop is armed (`holdsLoop()`
 * of its kind: the request-scoped waits, whose native timers upstream leaves ref'd), and unref'd otherwise. A request
 * in flight with no socket of its own (a test's `nock` or `msw` answering a `100 Continue` upload) is then waited
 * for, as upstream waits; an idle handler, inactivity watches and the owner tick keep nothing alive. Toggling the
 * ref is two field writes unless it changes the process-wide count of ref'd timers between 0 and 1.
 *
 * Precision: a deadline fires in the timers phase in which the timer reaches it, as a native timer armed at the same
 * moment would: the wake-up takes the timer's own due time as "now" when the clock reads a hair earlier (Node starts
 * a timer from the loop's cached time), so no deadline waits for a second wake-up or an extra event-loop turn. There
 * is no tick: durations from 1 ms to days are all scheduled the same way.
 *
 * Event-loop stalls: a deadline collected more than `STALL_CONFIRM_MS` after it was due (the loop was blocked, not
 * merely busy) is fired from Node's own `setImmediate`, after the poll phase: a response or `connect` that became
 * ready during the block is processed first and cancels (or refreshes) it, instead of being failed by a deadline
 * that "expired" while the loop could not run.
 *
 * Isolation: each fired deadline runs in its own `try`; an owner that throws cannot keep the other deadlines of the
 * same wake-up from firing (the first such error is rethrown once the loop is done, so a bug stays visible). Owners
 * route user code (loggers, callbacks) through `guardedWarn` or their own `try`/`catch`, so in practice nothing
 * reaches this `catch`.
 *
 * Owner tick: an owner with periodic work (monitor sampling, see `HandlerRuntime`) passes `onTick` and its period;
 * it is one recurring entry of the same lists (re-armed after each call while `onTick` returns true), started by
 * `ensureTicking()`, run after the deadlines of its wake-up, and not counted in `size`.
 *
 * `stop()` (handler `destroy()`) forgets every deadline and the tick and clears the timer and a pending
 * confirmation: after it nothing fires, nothing is pending and `size` is 0. The armed count is only ever changed by
 * a transition out of / into IDLE, so it cannot go negative.
 *
 * Fake timers (vitest's `useFakeTimers()`, `@sinonjs/fake-timers`), whatever they fake: globals are resolved at call
 * time through the shared `timing` seam; the timer is recreated when `globalThis.setTimeout` changed since it was
 * created; a timer of a replaced implementation that still fires is recognised by its generation and ignored, and
 * `timing` clears each handle with the implementation that made it. A tick of exactly a deadline's duration fires
 * it: the fake clock reads the due time (so no stall confirmation), and with only `setTimeout` faked the timer's due
 * time stands in for the clock.
 */
import { holdsLoop } from "./deadline-kind";
import { timing } from "./timing";

export { DeadlineKind } from "./deadline-kind";

/**
 * A deadline collected this long (ms) after it was due is fired after the poll phase instead of at once: the loop
 * was blocked, and I/O that completed meanwhile (a response, a `connect`) is handled first and cancels it. Busy but
 * turning loops are late by less (a native timer's p90 under CPU load: tens of ms, `docs/perf/lateness.md`).
 * @internal
 */
export const STALL_CONFIRM_MS = 100;

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
  /** While armed, it keeps the process alive (`holdsLoop` of its kind). */
  readonly holds: boolean;

  constructor(
    readonly owner: DeadlineOwner<K>,
    readonly kind: K
  ) {
    this.holds = holdsLoop(kind);
  }

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

function onTimer(scheduler: DeadlineScheduler, generation: number): void {
  scheduler.wake(generation);
}

/** Owner of the owner tick's deadline: never called (`wake()` runs the tick itself, `runTick()`). */
const TICK_OWNER: DeadlineOwner<undefined> = { onDeadline() {} };

/**
 * One handler's deadlines on one native timer armed for the earliest expiry.
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
  /** Bumped whenever the timer is replaced or cleared; a timer that fires with an older number is not ours any more. */
  private timerGeneration = 0;
  /** Armed or expiring deadlines, the tick included. */
  private armedCount = 0;
  /** Armed or expiring deadlines that keep the process alive (`Deadline.holds`): the timer is ref'd while > 0. */
  private holding = 0;
  /** Collected by a wake-up that came after a stall: fired after the poll phase (`flush`). */
  private expired: Deadline<any>[] = [];
  /** Collected by a wake-up and fired before it returns (reused). */
  private readonly due: Deadline<any>[] = [];
  /** The pending confirmation of `expired`, if any. */
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

  /** Whether the native timer keeps the process alive (a deadline that holds the loop is armed). */
  get holdingLoop(): boolean {
    return this.timer !== undefined && this.holding > 0;
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
      // `at < list.expiry` first: that load runs on every arm, so it always has type feedback. The other order read
      // `expiry` only when `d` became the head of a list left empty (the first arm of a burst, after every deadline
      // of the last one was cancelled), so optimised callers inlining `arm()` deoptimised at each burst start on an
      // uninitialised load. An earlier head is rare (`at` is later than the stale key unless `start` is older).
      list.expiry = at;
      this.siftUp(list.heapIndex);
    }
    if (this.waking) return;
    if (at < this.timerAt || this.timerImpl !== globalThis.setTimeout) this.schedule(this.heap[0].expiry, timing.now());
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

  /** The tick period now, ms. */
  private period(): number {
    const p = this.tickPeriodMs;
    return typeof p === "number" ? p : p();
  }

  /**
   * The tick fired: runs the owner's work; while the owner is still busy (or its work threw), the next tick is one
   * period after the one just due (no drift), or after `now` if that one was more than a period late (no catch-up
   * burst).
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
   * @internal The native timer fired: fire what is due (after the poll phase instead if it is `STALL_CONFIRM_MS`
   * overdue), run the owner tick if it is due, and sleep until the next expiry. `generation` identifies the timer:
   * one replaced or cleared since (by an implementation that could not clear it) is ignored.
   */
  wake(generation: number): void {
    if (generation !== this.timerGeneration) return;
    const dueAt = this.timerAt;
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    // The timer fired, so its clock reached `dueAt`: what is due by then fires now, even when `timing.now()` reads a
    // little earlier (Node starts a timer from the loop's cached time; a test may fake `setTimeout` but not
    // `performance`).
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
      // Periodic owner work, after the deadlines (it samples what they left).
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

  /**
   * Creates the timer for `at`, `now` being the current time on the deadlines' clock, ref'd only while a deadline
   * that holds the loop is armed.
   */
  private schedule(at: number, now: number): void {
    if (this.timer !== undefined) timing.clearTimeout(this.timer);
    const delay = Math.max(0, Math.ceil(at - now));
    const timer = timing.setTimeout(onTimer, delay, this, ++this.timerGeneration);
    if (this.holding === 0) (timer as { unref?: () => void }).unref?.();
    this.timer = timer;
    this.timerAt = at;
    this.timerImpl = globalThis.setTimeout;
  }

  /** Refs or unrefs the timer as the first holding deadline is armed or the last one goes. */
  private refTimer(hold: boolean): void {
    const timer = this.timer as { ref?: () => void; unref?: () => void } | undefined;
    if (timer === undefined) return;
    if (hold) timer.ref?.();
    else timer.unref?.();
  }

  /** Fires the deadlines of `list` still collected, each in its own `try`; returns the first error thrown. */
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

  /** The confirmation after a stall: fires what was collected and is still expiring. */
  private flush(): void {
    this.flushHandle = undefined;
    const expired = this.expired;
    this.expired = [];
    const failure = this.fire(expired, timing.now());
    // Everything fired and nothing was re-armed: the timer (due for a cancelled deadline) goes now, not at its due time.
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
