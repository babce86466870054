/**
 * IdleWatchList: HTTP/1's `socketTimeout`: one pool-monitor `IdleWatch` per watched request, fired `socketTimeout` ms
 * after its socket last moved a byte; stopped watches are reused, so steady traffic allocates none. Node reports
 * socket activity through `socket._unrefTimer()`, wrapped once per socket by a shared hook that writes `lastActive`.
 */
import type { DeadlineScheduler, IdleTarget } from "@sockeye/pool-monitor/internal";
import { IdleWatch, timing as importedTiming } from "@sockeye/pool-monitor/internal";
import type { Socket } from "node:net";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const timing = importedTiming;

/** The target of a spare watch (it holds no request). */
const NO_TARGET: IdleTarget = { onIdle() {} };

/** The watching request's `IdleWatch`, on the socket it watches. */
const kWatch = Symbol("sockeye.idleWatch");
/** The socket's own `_unrefTimer` (Node's activity method), kept when the hook replaces it. */
const kOriginal = Symbol("sockeye.unrefTimer");

interface HookedSocket {
  _unrefTimer?: () => void;
  [kWatch]?: IdleWatch | undefined;
  [kOriginal]?: () => void;
}

/** A watched request: `onIdle` runs when the limit passed with no byte moved; its end unwatches it. @internal */
export interface IdleWatcher extends IdleTarget {
  idleWatch: IdleWatch | undefined;
  idleOn: Socket | undefined;
  /** The inactivity limit, ms. */
  readonly idleLimitMs: number;
}

/** Node's activity method on a hooked socket: note the activity on the watching request's `IdleWatch`, then Node's. */
function onSocketActivity(this: HookedSocket): void {
  const watch = this[kWatch];
  if (watch !== undefined) watch.lastActive = timing.now();
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

/** The handler's `socketTimeout` watches (see the file header). @internal */
export class IdleWatchList {
  private watching = 0;
  /** Stopped watches, for the next requests. */
  private readonly spare: IdleWatch[] = [];

  constructor(private readonly sharedScheduler: DeadlineScheduler) {}

  get empty(): boolean {
    return this.watching === 0;
  }

  /** Starts watching `w` on `socket` from `now`. No-op if already watched. */
  watch(w: IdleWatcher, socket: Socket, now: number): void {
    if (w.idleOn !== undefined) return;
    let watch = this.spare.pop();
    if (watch === undefined) watch = new IdleWatch(this.sharedScheduler, w);
    else watch.target = w;
    w.idleWatch = watch;
    hook(socket as unknown as HookedSocket);
    (socket as unknown as HookedSocket)[kWatch] = watch;
    w.idleOn = socket;
    this.watching++;
    watch.start(w.idleLimitMs, now);
  }

  /** Stops watching `w`. Idempotent. */
  unwatch(w: IdleWatcher): void {
    const socket = w.idleOn as unknown as HookedSocket | undefined;
    if (socket === undefined) return;
    w.idleOn = undefined;
    if (this.watching > 0) this.watching--;
    const watch = w.idleWatch!;
    w.idleWatch = undefined;
    watch.stop();
    watch.target = NO_TARGET;
    if (socket[kWatch] === watch) socket[kWatch] = undefined;
    this.spare.push(watch);
  }

  /** Forgets every watch count and spare (handler `destroy()`, after every request was finished and unwatched). */
  clear(): void {
    this.watching = 0;
    this.spare.length = 0;
  }
}
