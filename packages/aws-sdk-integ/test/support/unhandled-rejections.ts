/**
 * Registers, for the enclosing spec file, a `process.on("unhandledRejection")` collector and asserts in `afterAll`
 * that nothing was collected: an abort, a timeout or a destroy must never leave a rejected promise nobody awaits.
 */
import { afterAll, beforeAll, expect } from "vitest";

/** Call once at the top level of a spec file. Returns the live list (for tests that want to look mid-way). @internal */
export function failOnUnhandledRejections(): readonly unknown[] {
  const seen: unknown[] = [];
  const collect = (reason: unknown): void => {
    seen.push(reason);
  };
  beforeAll(() => {
    process.on("unhandledRejection", collect);
  });
  afterAll(async () => {
    // Give rejections created by the last test a turn of the event loop to surface.
    await new Promise((resolve) => setImmediate(resolve));
    process.off("unhandledRejection", collect);
    expect(seen.map((r) => (r instanceof Error ? `${r.name}: ${r.message}` : String(r)))).toEqual([]);
  });
  return seen;
}
