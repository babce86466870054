// =============================================================================
// timer-counter.mjs: count native `Timeout` async resources with async_hooks.
//
// An init() hook counts resources of type "Timeout" (setTimeout, setInterval, socket.setTimeout: every native timer
// object) and destroy() retires them, so the peak of live ones is known too. A timer re-armed with refresh() is not
// re-initialised, so it counts once. Any init/destroy hook makes every async resource creation run JS, so a counter
// is only ever enabled in a counting pass, never around a CPU measurement.
// =============================================================================

import { createHook } from "node:async_hooks";

/** Counts the `Timeout`s created, and the most alive at once, between `enable()` and `disable()`. */
export class TimerCounter {
  created = 0;
  livePeak = 0;
  /** @type {Set<number>} */
  live = new Set();
  hook = createHook({
    init: (asyncId, type) => {
      if (type !== "Timeout") return;
      this.created++;
      this.live.add(asyncId);
      if (this.live.size > this.livePeak) this.livePeak = this.live.size;
    },
    destroy: (asyncId) => {
      this.live.delete(asyncId);
    },
  });

  /** Reset the counts and start counting. */
  enable() {
    this.created = 0;
    this.livePeak = 0;
    this.live.clear();
    this.hook.enable();
    return this;
  }

  /** Stop counting. @returns {{ created: number, livePeak: number }} */
  disable() {
    this.hook.disable();
    return { created: this.created, livePeak: this.livePeak };
  }
}
