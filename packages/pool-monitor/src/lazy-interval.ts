/**
 * LazyInterval: one `unref()`'d interval that exists only while a standalone `PoolMonitor` samples; `ensure()`
 * recreates it when `globalThis.setInterval` changed (fake timers installed or removed). @internal
 */
import { timing } from "./timing";

/** @internal */
export class LazyInterval {
  private handle: ReturnType<typeof setInterval> | undefined;
  private impl: unknown;

  constructor(
    private readonly callback: () => void,
    readonly periodMs: number
  ) {}

  get running(): boolean {
    return this.handle !== undefined;
  }

  /** Creates the interval unless it exists under the current timer implementation. */
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

  stop(): void {
    if (this.handle === undefined) return;
    timing.clearInterval(this.handle);
    this.handle = undefined;
    this.impl = undefined;
  }
}
