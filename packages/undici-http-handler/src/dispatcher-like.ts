/**
 * Structural types for what this package needs of an undici dispatcher and of the controller undici hands to a
 * dispatch handler, so that dispatchers of undici 7 and undici 8 (whose classes are distinct types) are accepted,
 * and so is any composed dispatcher with the same shape.
 */

/**
 * An undici `Dispatcher` of undici 7 or 8 (`Agent`, `Pool`, `Client`, `ProxyAgent`, `EnvHttpProxyAgent`, a
 * composed dispatcher…): what the handler calls on it. Handlers are given in undici's controller API
 * (`onRequestStart` / `onResponseStart` / `onResponseData` / `onResponseEnd` / `onResponseError`), which both
 * versions accept.
 * @public
 */
export interface DispatcherLike {
  dispatch(options: any, handler: any): boolean;
  close(): Promise<void>;
  destroy(error?: Error | null): Promise<void>;
}

/**
 * The controller undici 7 and 8 pass to a controller-API handler: abort the exchange, pause / resume the body.
 * `rawHeaders` is the raw header list of the response (both versions set it before `onResponseStart`).
 * @internal
 */
export interface DispatchControllerLike {
  abort(reason: Error): void;
  pause(): void;
  resume(): void;
  readonly rawHeaders?: Buffer[] | string[] | null;
}

/** The dispatch options this package builds (a subset of undici's `Dispatcher.DispatchOptions`). @internal */
export interface DispatchOptionsLike {
  origin: string;
  path: string;
  method: string;
  headers: Record<string, string> | undefined;
  body: unknown;
  headersTimeout: number;
  bodyTimeout: number;
}
