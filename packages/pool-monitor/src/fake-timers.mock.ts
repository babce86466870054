import { vi } from "vitest";
import { timing } from "./timing";

/**
 * The one `toFake` list the timer specs of the core and the handlers use: everything they touch (timers,
 * immediates, `Date` and `performance` for the clock), never `nextTick`/`queueMicrotask`, which Node's networking
 * needs.
 * Test helper (`*.mock.ts`): not part of the build.
 */
export const FAKE_TIMERS = [
  "setTimeout",
  "clearTimeout",
  "setInterval",
  "clearInterval",
  "setImmediate",
  "clearImmediate",
  "Date",
  "performance",
] as const;

/** Node's own `setImmediate`, captured when a spec imports this file (before any test fakes timers). */
const realSetImmediate = setImmediate;

/**
 * Resolves after Node's own next check phase (a real `setImmediate`, whatever is faked): the scheduler fires the
 * deadlines a stalled wake-up collected from there (`timing.afterPoll`), never from a test's fake immediate.
 */
export function afterPollPhase(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

/**
 * Event-loop blocks under fake timers. A blocked loop runs no timer while the clock moves on; when it turns again,
 * the timers due meanwhile fire late. Fake timers cannot express that (advancing the clock runs every timer due on
 * the way, and `vi.setSystemTime()` moves `Date` but not `performance`), so this stubs `timing.now()` to read the
 * fake clock plus the time spent blocked: after `block(ms)` the deadlines' clock is `ms` ahead of the fake timers,
 * and the next timer to fire is `ms` late on it. Removed by `vi.restoreAllMocks()`.
 */
export function blockableClock(): { block(ms: number): void; readonly blockedMs: number } {
  let blockedMs = 0;
  vi.spyOn(timing, "now").mockImplementation(() => performance.now() + blockedMs);
  return {
    block(ms: number) {
      blockedMs += ms;
    },
    get blockedMs() {
      return blockedMs;
    },
  };
}
