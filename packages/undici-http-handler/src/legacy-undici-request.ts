/**
 * LegacyUndiciRequest: the request as undici 7's native handler, for undici 7 dispatchers, which would otherwise
 * wrap a controller-API handler in an adapter allocated per request. The request is its own controller; the logic
 * is `UndiciRequestCore`'s.
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
