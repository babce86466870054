/**
 * Compile-time exhaustiveness check for a `switch` over a union (deadline kinds, close reasons, error kinds): put it
 * in the `default` branch, and a member no `case` handles makes `value` not `never`, so the switch fails to compile.
 * Reaching it at run time is a bug: it throws naming the value.
 * @internal
 */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
