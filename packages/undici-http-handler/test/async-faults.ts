/**
 * Shared pieces of the undici request-path specs: a record of the spec file's uncaught exceptions and unhandled
 * rejections (listeners added beside vitest's own in `beforeAll`, removed in `afterAll`; tests clear and assert the
 * arrays), `settle()` (a promise's outcome as a value), `turns()` (lets socket events, timers and next ticks run)
 * and a logger that prints nothing.
 */
import { afterAll, beforeAll } from "vitest";

/** What the spec file's process saw since the last `clear()`. */
export interface AsyncFaults {
  readonly uncaught: unknown[];
  readonly unhandled: unknown[];
  clear(): void;
}

/** Installs the record for the calling spec file (call once, at module level). */
export function recordAsyncFaults(): AsyncFaults {
  const uncaught: unknown[] = [];
  const unhandled: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => {
    process.on("uncaughtException", onUncaught);
    process.on("unhandledRejection", onUnhandled);
  });
  afterAll(() => {
    process.off("uncaughtException", onUncaught);
    process.off("unhandledRejection", onUnhandled);
  });
  return {
    uncaught,
    unhandled,
    clear() {
      uncaught.length = 0;
      unhandled.length = 0;
    },
  };
}

/** The outcome of `p` as a value. */
export async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: any }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Lets socket events, timers and next ticks run: `n` real 10 ms waits. */
export async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A logger that prints nothing. */
export const quiet = { debug() {}, info() {}, error() {}, trace() {}, warn() {} };
