// =============================================================================
// timer-counter.mjs: count native `Timeout` async resources with async_hooks.
//
// How: an async_hooks hook whose init() counts resources of type "Timeout"
// (setTimeout, setInterval, socket.setTimeout -- every native timer object) and
// whose destroy() retires them, so we also know how many are LIVE at peak.
// Timer objects re-armed with refresh() are not re-initialised, so they count
// once, which is what we want ("how many timer objects were created").
//
// Cost: enabling any init/destroy hook makes EVERY async resource creation run
// JS hook code, so only enable a counter in a dedicated counting pass, never
// around a CPU/latency measurement.
//
// The harness's own timers can be excluded with `counter.suspend()` /
// `counter.resume()` around their creation (see harnessDelay below).
// =============================================================================

import { createHook } from "node:async_hooks";

/**
 * @typedef {object} TimerCounts
 * @property {number} created   Timeout resources initialised while enabled
 * @property {number} livePeak  maximum number alive at once (created while enabled, not yet destroyed)
 * @property {number} liveEnd   still alive when the counter was disabled
 */

export class TimerCounter {
  constructor() {
    this.created = 0;
    this.livePeak = 0;
    /** @type {Set<number>} */
    this.live = new Set();
    this.suspended = 0;
    this.hook = createHook({
      init: (asyncId, type) => {
        if (type !== "Timeout" || this.suspended > 0) return;
        this.created++;
        this.live.add(asyncId);
        if (this.live.size > this.livePeak) this.livePeak = this.live.size;
      },
      destroy: (asyncId) => {
        this.live.delete(asyncId);
      },
    });
  }

  /** Reset the counts and start counting. */
  enable() {
    this.created = 0;
    this.livePeak = 0;
    this.live.clear();
    this.hook.enable();
    return this;
  }

  /** Stop counting. @returns {TimerCounts} */
  disable() {
    this.hook.disable();
    return { created: this.created, livePeak: this.livePeak, liveEnd: this.live.size };
  }

  suspend() {
    this.suspended++;
  }

  resume() {
    this.suspended--;
  }
}

/**
 * A delay whose own Timeout is NOT counted by `counter`.
 * @param {TimerCounter | undefined} counter
 * @param {number} ms
 */
export function harnessDelay(counter, ms) {
  return new Promise((resolve) => {
    counter?.suspend();
    try {
      setTimeout(resolve, ms);
    } finally {
      counter?.resume();
    }
  });
}
