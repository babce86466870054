/**
 * LazyInterval: one `unref()`'d interval that exists only while its owner needs it.
 *
 * A standalone `PoolMonitor` (one not embedded in a handler, whose sampling is a recurring entry of the handler's
 * deadline scheduler instead) needs a periodic callback that is created on demand (`ensure()`), cleared as soon as
 * the owner finds nothing to do (`stop()`, typically from inside the callback), never keeps the process alive
 * (`unref()`), and survives test frameworks swapping the timer implementation: if `globalThis.setInterval` changed
 * since the interval was created (vitest installing or removing fake timers), `ensure()` clears it and creates a new
 * one with the current implementation.
 *
 * Cost: `ensure()` on a running interval is two field reads and a comparison; no allocation after construction
 * (the callback is bound once). Every timer call goes through the shared `timing` seam.
 *
 * @internal
 */
import { timing } from "./timing";

/** @internal */
export class LazyInterval {
  private handle: ReturnType<typeof setInterval> | undefined;
  private impl: unknown;

  /**
   * @param callback - called on every tick (its `this` is undefined); exceptions propagate as from any timer.
   * @param periodMs - the interval period, ms.
   */
  constructor(
    private readonly callback: () => void,
    readonly periodMs: number
  ) {}

  /** Whether the interval currently exists. */
  get running(): boolean {
    return this.handle !== undefined;
  }

  /** Creates the interval if it does not exist (or was created by another timer implementation). */
  ensure(): void {
    if (this.handle !== undefined) {
      if (this.impl === globalThis.setInterval) return;
      timing.clearInterval(this.handle);
    }
    this.impl = globalThis.setInterval;
    const handle = timing.setInterval(this.callback, this.periodMs);
    (handle as { unref?: () => void }).unref?.();
    this.handle = handle;
  }

  /** Clears the interval if it exists. Idempotent. */
  stop(): void {
    if (this.handle === undefined) return;
    timing.clearInterval(this.handle);
    this.handle = undefined;
    this.impl = undefined;
  }
}
