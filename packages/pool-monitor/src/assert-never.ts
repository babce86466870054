/** In a `switch`'s `default`, makes an unhandled union member a compile error; throws if reached. @internal */
export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
