/**
 * LegacyUndiciRequest: the request as undici 7's native handler (`onConnect` / `onHeaders` / `onData` /
 * `onComplete` / `onError`), used for undici 7 dispatchers (the handler-owned `Agent`, a caller's undici 7
 * instance).
 *
 * Why a second naming of the same request: undici 7 runs a controller-API handler (what undici 8 requires, see
 * `UndiciRequest`) through an adapter that allocates two objects per request and parses the response headers and
 * trailers into objects this handler does not use; measured on raw undici 7.30.2 `Pool.dispatch` (c = 50, 128 B
 * bodies, loopback), that is ~8 % more CPU per request (48.3 → 52.1 µs). The request object is its own controller
 * here (`abort` / `pause` / `resume` over undici's abort and resume functions), so this path allocates nothing more
 * than `UndiciRequest` does on undici 8; the logic is `UndiciRequestCore`'s, shared.
 */
import type { DispatchControllerLike } from "./dispatcher-like";
import { UndiciRequestCore } from "./undici-request";

type AbortFn = (reason?: Error) => void;

/** @internal */
export class LegacyUndiciRequest extends UndiciRequestCore implements DispatchControllerLike {
  rawHeaders: Buffer[] | null = null;
  private abortFn: AbortFn | undefined;
  private resumeFn: (() => void) | undefined;
  private hold = false;

  // ---- undici 7's handler API ----------------------------------------------------------------------------------

  onConnect(abort: AbortFn): void {
    this.abortFn = abort;
    // Throws REQUEST_GONE for a request that already failed: undici 7 then drops it unsent (see UndiciRequestCore).
    this.connectionGiven(this);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText?: string): boolean {
    this.resumeFn = resume;
    this.responseStarted(statusCode, rawHeaders, undefined, statusText);
    return !this.hold;
  }

  onData(chunk: Buffer): boolean {
    this.dataReceived(this, chunk);
    return !this.hold;
  }

  onComplete(_trailers?: unknown): void {
    this.responseEnded();
  }

  onError(error: Error): void {
    this.requestFailed(error);
  }

  // ---- the controller it is to itself --------------------------------------------------------------------------

  abort(reason: Error): void {
    this.abortFn?.(reason);
  }

  pause(): void {
    this.hold = true;
  }

  resume(): void {
    if (!this.hold) return;
    this.hold = false;
    this.resumeFn?.();
  }
}
