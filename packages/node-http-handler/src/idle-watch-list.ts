/**
 * IdleWatchList: the `socketTimeout` inactivity watch of every request of one handler, without a timer per request.
 *
 * `socketTimeout` is an inactivity timeout that stays armed through the response body: it fires `socketTimeout` ms
 * after the last byte the socket moved. Upstream calls `socket.setTimeout()` per request (a native `Timeout` plus a
 * bound function each time on Node 20). Here each watched request has one `Deadline` on the handler's shared
 * `DeadlineScheduler` (its own state object's node, created once per request), and activity restarts it.
 *
 * Activity, per socket and allocation-free: Node itself reports every activity of a socket through one method,
 * `socket._unrefTimer()` (called for every read — `onStreamRead` calls it through the `kUpdateTimer` getter, which
 * returns `this._unrefTimer` — for every write dispatched, in `_writeGeneric`, and for every write completed). It is
 * exactly what refreshes Node's own `socket.setTimeout()` timer, so "inactivity" here means what it means upstream.
 * The first time a socket is watched, its `_unrefTimer` is replaced by ONE shared module function (an own property
 * on the socket; the original is kept under a symbol and still called, so Node's own socket timeouts keep working).
 * While a request watches the socket, `socket[kWatch]` is the request's `Deadline`, and the hook restarts it
 * (`DeadlineScheduler.refresh`, O(1): the node moves to its list's tail). Sockets are reused across requests
 * (keep-alive), so the hook is installed once per connection, never per request; a socket no request watches pays
 * one property read per event.
 *
 * Cost: watch/unwatch O(1) (arm/cancel a deadline, two field writes). Per socket event (a read, a write dispatched,
 * a write completed) while watched: one `performance.now()` and a list move; on a socket nobody watches, one property
 * read. No allocation. Nothing walks the watched requests, so the watch costs nothing per tick however many are in
 * flight.

 * Precision: the deadline fires `socketTimeout` after the last byte moved, no earlier, on the scheduler's native
 * timer (see `deadline-scheduler.ts`), i.e. as late as a native `socket.setTimeout()` would.
 *
 * Event-loop stalls: an expiry collected more than `STALL_CONFIRM_MS` late is fired after the poll phase (see the
 * scheduler); bytes read during such a block call the hook, which re-arms the deadline, so the request is not failed.
 */
import type { DeadlineOwner, DeadlineScheduler } from "@sockeye/pool-monitor/internal";
import { Deadline, timing as importedTiming } from "@sockeye/pool-monitor/internal";
import type { Socket } from "node:net";

/** The watching request's `Deadline`, on the socket it watches. */
// Bound once: in this package's CommonJS build every use of another package's export is a getter call.
const timing = importedTiming;

const kWatch = Symbol("sockeye.idleWatch");
/** The socket's own `_unrefTimer` (Node's activity method), kept when the hook replaces it. */
const kOriginal = Symbol("sockeye.unrefTimer");

interface HookedSocket {
  _unrefTimer?: () => void;
  [kWatch]?: Deadline<IdleWatcher> | undefined;
  [kOriginal]?: () => void;
}

/** What the list needs from a watched request. @internal */
export interface IdleWatcher {
  /** The watch's deadline, created on first watch and reused (its `kind` is the watcher). */
  idleDeadline: Deadline<IdleWatcher> | undefined;
  /** The socket being watched (`undefined` when not watched). */
  idleOn: Socket | undefined;
  /** The inactivity limit, ms. */
  readonly idleLimitMs: number;
  /** Called once when the limit passed with no byte moved; the watcher is already unwatched. */
  onIdleTimeout(): void;
}

/** Node's activity method on a hooked socket: restart the watching request's deadline, then Node's own. */
function onSocketActivity(this: HookedSocket): void {
  const d = this[kWatch];
  if (d !== undefined) d.armedOn?.refresh(d, timing.now());
  this[kOriginal]?.call(this);
}

/** Installs the activity hook on `socket` once (a no-op after the first call for the same socket). */
function hook(socket: HookedSocket): void {
  if (socket._unrefTimer === onSocketActivity) return;
  const original = socket._unrefTimer;
  if (typeof original !== "function") return;
  socket[kOriginal] = original;
  socket._unrefTimer = onSocketActivity;
}

/** @internal */
export class IdleWatchList implements DeadlineOwner<IdleWatcher> {
  private watching = 0;

  constructor(private readonly sharedScheduler: DeadlineScheduler) {}

  /** Whether no request is watched. */
  get empty(): boolean {
    return this.watching === 0;
  }

  /** Starts watching `w` on `socket` from `now`. No-op if already watched. */
  watch(w: IdleWatcher, socket: Socket, now: number): void {
    if (w.idleOn !== undefined) return;
    const d = (w.idleDeadline ??= new Deadline<IdleWatcher>(this, w));
    hook(socket as unknown as HookedSocket);
    (socket as unknown as HookedSocket)[kWatch] = d;
    w.idleOn = socket;
    this.watching++;
    this.sharedScheduler.arm(d, now, w.idleLimitMs);
  }

  /** Stops watching `w`. Idempotent. */
  unwatch(w: IdleWatcher): void {
    const socket = w.idleOn as unknown as HookedSocket | undefined;
    if (socket === undefined) return;
    w.idleOn = undefined;
    if (this.watching > 0) this.watching--;
    const d = w.idleDeadline!;
    this.sharedScheduler.disarm(d);
    if (socket[kWatch] === d) socket[kWatch] = undefined;
  }

  /** Forgets every watch count (handler `destroy()`, after every request was finished and unwatched). */
  clear(): void {
    this.watching = 0;
  }

  /** DeadlineOwner: `w`'s limit passed with no byte moved (after the poll phase if the loop was blocked). */
  onDeadline(w: IdleWatcher): void {
    if (w.idleOn === undefined) return;
    this.unwatch(w);
    w.onIdleTimeout();
  }
}
