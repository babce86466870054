/**
 * How every package reports a bad option: one line naming the package, the option with its path, the value and what
 * was expected:
 *
 *   @sockeye/node-http-handler - invalid option saturation.sampleIntervalMs: 50; expected a number from 100 to 60000 (milliseconds).
 *
 * The value is described, never dumped (strings cut, objects and functions named by kind), so the line stays short.
 */

/** Longest string value quoted in a message, in characters; a longer one is cut there and ends with `…`. */
export const MAX_SHOWN_CHARS = 40;

/** A value as an error message shows it: strings quoted and cut; objects and functions by kind. @internal */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    return JSON.stringify(value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value);
  }
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  return String(value);
}

/**
 * The error for a bad option: `<prefix> - invalid option <name>: <value>; expected <expected>.`
 * @param prefix - the package name, e.g. `@sockeye/node-http-handler`.
 * @param name - the option's name with its path (`saturation.windowSamples`).
 * @param expected - what would have been accepted, e.g. `a boolean (true or false)`.
 * @param ErrorType - `TypeError` (default) or `RangeError` (a number of the right type out of its range).
 * @internal
 */
export function invalidOption(
  prefix: string,
  name: string,
  value: unknown,
  expected: string,
  ErrorType: ErrorConstructor = TypeError
): Error {
  return new ErrorType(`${prefix} - invalid option ${name}: ${describeValue(value)}; expected ${expected}.`);
}
