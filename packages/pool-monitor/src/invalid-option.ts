/**
 * How every package reports a bad option, in one line:
 *   @sockeye/node-http-handler - invalid option saturation.sampleIntervalMs: 50; expected a number from 100 to 60000 (milliseconds).
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

/** The error for a bad option `name` (with its path); `ErrorType`: `RangeError` for a number out of range. @internal */
export function invalidOption(
  prefix: string,
  name: string,
  value: unknown,
  expected: string,
  ErrorType: ErrorConstructor = TypeError
): Error {
  return new ErrorType(`${prefix} - invalid option ${name}: ${describeValue(value)}; expected ${expected}.`);
}
