/**
 * Captures `uncaughtException` and `unhandledRejection` for a spec file, so that a handler's crash is an assertion
 * of the test that caused it (and `it.fails` can mark a known one) instead of an error that fails the whole run.
 *
 * While installed, the capture REPLACES the listeners already registered for both events (vitest's own) and puts
 * them back on `uninstall()`: anything thrown asynchronously during the file, the test's own bugs included, lands
 * in `take()`, which every test asserts empty (or equal to what it expects).
 */

/** What a capture saw since the last `take()`. */
export interface CapturedFaults {
  uncaught: string[];
  unhandled: string[];
}

/** A process-wide capture; one per spec file, installed in `beforeAll`, uninstalled in `afterAll`. */
export interface ProcessFaultCapture {
  install(): void;
  uninstall(): void;
  /** Returns and forgets what was captured since the last call. */
  take(): CapturedFaults;
}

function describeReason(reason: unknown): string {
  if (reason instanceof Error) {
    const code = (reason as { code?: unknown }).code;
    return `${reason.name}${code === undefined ? "" : `/${String(code)}`}: ${reason.message}`;
  }
  return String(reason);
}

/** Creates a capture (not yet installed). */
export function processFaultCapture(): ProcessFaultCapture {
  let uncaught: string[] = [];
  let unhandled: string[] = [];
  const onUncaught = (error: unknown) => uncaught.push(describeReason(error));
  const onUnhandled = (reason: unknown) => unhandled.push(describeReason(reason));
  let saved: { uncaught: NodeJS.UncaughtExceptionListener[]; unhandled: NodeJS.UnhandledRejectionListener[] } | null =
    null;
  return {
    install() {
      if (saved !== null) return;
      saved = {
        uncaught: process.listeners("uncaughtException"),
        unhandled: process.listeners("unhandledRejection"),
      };
      process.removeAllListeners("uncaughtException");
      process.removeAllListeners("unhandledRejection");
      process.on("uncaughtException", onUncaught);
      process.on("unhandledRejection", onUnhandled);
    },
    uninstall() {
      if (saved === null) return;
      process.off("uncaughtException", onUncaught);
      process.off("unhandledRejection", onUnhandled);
      for (const listener of saved.uncaught) process.on("uncaughtException", listener);
      for (const listener of saved.unhandled) process.on("unhandledRejection", listener);
      saved = null;
    },
    take() {
      const out = { uncaught, unhandled };
      uncaught = [];
      unhandled = [];
      return out;
    },
  };
}
