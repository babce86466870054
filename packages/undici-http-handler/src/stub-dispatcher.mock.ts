/**
 * A recording undici `Dispatcher` for the fake-timer specs: a deadline can only be tested deterministically if the
 * network does nothing on its own, so this one only records `dispatch()` calls and lets the spec drive the handler
 * callbacks (`onConnect`, `onHeaders`, …) itself. The real undici path is covered by the integration suite.
 * Test helper (`*.mock.ts`): not part of the build.
 */
import type { Dispatcher } from "undici";

export interface RecordedDispatch {
  options: Dispatcher.DispatchOptions;
  handler: {
    onConnect(abort: (reason?: Error) => void): void;
    onHeaders(status: number, raw: Buffer[], resume: () => void, text?: string): boolean;
    onData(chunk: Buffer): boolean;
    onComplete(trailers: Buffer[]): void;
    onError(error: Error): void;
  };
  /** Reasons passed to the abort function given in `onConnect`. */
  aborts: unknown[];
}

export function stubDispatcher(): Dispatcher & { calls: RecordedDispatch[]; destroyed: boolean } {
  const calls: RecordedDispatch[] = [];
  const stub = {
    calls,
    destroyed: false,
    dispatch(options: Dispatcher.DispatchOptions, handler: RecordedDispatch["handler"]) {
      calls.push({ options, handler, aborts: [] });
      return true;
    },
    close: async () => {},
    destroy: async () => {
      stub.destroyed = true;
    },
  };
  return stub as unknown as Dispatcher & { calls: RecordedDispatch[]; destroyed: boolean };
}

/** Connects `call` (undici would call `onConnect` when it hands the request a connection). */
export function connect(call: RecordedDispatch): void {
  call.handler.onConnect((reason) => {
    call.aborts.push(reason);
    // undici errors the request synchronously when it is aborted.
    call.handler.onError(reason ?? new Error("aborted"));
  });
}
