/**
 * IdleWatchList: HTTP/1's `socketTimeout`: one pool-monitor `IdleWatch` per watched request, fired `socketTimeout` ms
 * after its socket last moved a byte; stopped watches are reused, so steady traffic allocates none. Node reports
 * socket activity through `socket._unrefTimer()`, wrapped once per socket (one closure per socket, none per request)
 * by a hook that writes the current watch's `lastActive`, then calls Node's own method. The current watch is kept
 * off the socket, in a `WeakMap` (pool-monitor's tracking-state.ts says why).
 */
import type { DeadlineScheduler, IdleTarget } from "@sockeye/pool-monitor/internal";
import { IdleWatch, timing as importedTiming } from "@sockeye/pool-monitor/internal";
import type { Socket } from "node:net";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const timing = importedTiming;

/** The target of a spare watch (it holds no request). */
const NO_TARGET: IdleTarget = { onIdle() {} };

/** A hooked socket's current watch (the watching request's `IdleWatch`; `undefined` while none watches). */
interface HookedSocket {
  watch: IdleWatch | undefined;
}

/** Each hooked socket's `HookedSocket`, set once when the hook is installed. */
const hooked = new WeakMap<Socket, HookedSocket>();

/** A watched request: `onIdle` runs when the limit passed with no byte moved; its end unwatches it. @internal */
export interface IdleWatcher extends IdleTarget {
  idleWatch: IdleWatch | undefined;
  idleOn: Socket | undefined;
  /** The inactivity limit, ms. */
  readonly idleLimitMs: number;
}

/**
 * Installs the activity hook on `socket` once, in place of Node's `_unrefTimer`: it notes the activity on the current
 * watch, then calls Node's method. Returns the socket's `HookedSocket` (`undefined`: the socket has no such method).
 */
function hook(socket: Socket & { _unrefTimer?: () => void }): HookedSocket | undefined {
  const existing = hooked.get(socket);
  if (existing !== undefined) return existing;
  const original = socket._unrefTimer;
  if (typeof original !== "function") return undefined;
  const hooks: HookedSocket = { watch: undefined };
  hooked.set(socket, hooks);
  socket._unrefTimer = function onSocketActivity(this: Socket): void {
    const watch = hooks.watch;
    if (watch !== undefined) watch.lastActive = timing.now();
    original.call(this);
  };
  return hooks;
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
    const h = hook(socket);
    if (h !== undefined) h.watch = watch;
    w.idleOn = socket;
    this.watching++;
    watch.start(w.idleLimitMs, now);
  }

  /** Stops watching `w`. Idempotent. */
  unwatch(w: IdleWatcher): void {
    const socket = w.idleOn;
    if (socket === undefined) return;
    w.idleOn = undefined;
    if (this.watching > 0) this.watching--;
    const watch = w.idleWatch!;
    w.idleWatch = undefined;
    watch.stop();
    watch.target = NO_TARGET;
    const h = hooked.get(socket);
    if (h !== undefined && h.watch === watch) h.watch = undefined;
    this.spare.push(watch);
  }

  /** Forgets every watch count and spare (handler `destroy()`, after every request was finished and unwatched). */
  clear(): void {
    this.watching = 0;
    this.spare.length = 0;
  }
}
