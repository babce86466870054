/**
 * The one `toFake` list every timer spec of this package uses: everything the handler touches (timers, immediates,
 * `Date` and `performance` for the clock), never `nextTick`/`queueMicrotask`, which Node's networking needs.
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
