/**
 * A recording undici `Dispatcher` for the fake-timer specs: a deadline can only be tested deterministically if the
 * network does nothing on its own, so this one only records `dispatch()` calls and lets the spec drive the handler
 * callbacks (undici's controller API: `onRequestStart`, `onResponseStart`, …) itself. The real undici path is
 * covered by the integration suite.
 * Test helper (`*.mock.ts`): not part of the build.
 */
import type { Dispatcher } from "undici";

export interface StubController {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
  rawHeaders: Buffer[] | null;
}

export interface RecordedDispatch {
  options: Dispatcher.DispatchOptions;
  handler: {
    onRequestStart(controller: StubController, context?: unknown): void;
    onResponseStart(controller: StubController, status: number, headers: object, text?: string): void;
    onResponseData(controller: StubController, chunk: Buffer): void;
    onResponseEnd(controller: StubController, trailers: object): void;
    onResponseError(controller: StubController | undefined, error: Error): void;
  };
  /** Reasons passed to the controller's `abort`. */
  aborts: unknown[];
  /** The controller given in `onRequestStart` (by `connect()`). */
  controller: StubController;
}

export function stubDispatcher(): Dispatcher & { calls: RecordedDispatch[]; destroyed: boolean } {
  const calls: RecordedDispatch[] = [];
  const stub = {
    calls,
    destroyed: false,
    dispatch(options: Dispatcher.DispatchOptions, handler: RecordedDispatch["handler"]) {
      const call = { options, handler, aborts: [] } as unknown as RecordedDispatch;
      call.controller = {
        abort(reason) {
          call.aborts.push(reason);
          // undici errors the request synchronously when it is aborted.
          call.handler.onResponseError(call.controller, reason ?? new Error("aborted"));
        },
        pause() {},
        resume() {},
        rawHeaders: null,
      };
      calls.push(call);
      return true;
    },
    close: async () => {},
    destroy: async () => {
      stub.destroyed = true;
    },
  };
  return stub as unknown as Dispatcher & { calls: RecordedDispatch[]; destroyed: boolean };
}

/**
 * Connects `call` (undici calls `onRequestStart` when it hands the request a connection). Returns what undici would
 * do with it: `"sent"`, or `"dropped"` when the handler threw (undici then drops the request unsent, keeping the
 * connection).
 */
export function connect(call: RecordedDispatch): "sent" | "dropped" {
  try {
    call.handler.onRequestStart(call.controller, null);
    return "sent";
  } catch (error) {
    call.handler.onResponseError(call.controller, error as Error);
    return "dropped";
  }
}

/** Response headers as undici hands them: `rawHeaders` on the controller, parsed ones as the argument. */
export function respond(call: RecordedDispatch, status: number, raw: Buffer[], text?: string): void {
  call.controller.rawHeaders = raw;
  const parsed: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) parsed[raw[i].toString().toLowerCase()] = raw[i + 1].toString();
  call.handler.onResponseStart(call.controller, status, parsed, text);
}
