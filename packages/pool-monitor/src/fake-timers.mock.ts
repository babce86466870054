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

/**
 * Fake timers run an immediate created inside a timer callback 1 ms later (Node runs it in the same loop iteration,
 * right after the poll phase). The scheduler confirms an expiry from such an immediate, so under fake timers a
 * deadline's effect is seen `CONFIRM_MS` after its expiry.
 */
export const CONFIRM_MS = 0;
