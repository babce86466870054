/**
 * An undici 7 or 8 `Dispatcher` (`Agent`, `Pool`, `ProxyAgent`, a composed dispatcher…): what the handler calls on
 * it, with handlers in undici's controller API, which both versions accept. @public
 */
export interface DispatcherLike {
  dispatch(options: any, handler: any): boolean;
  close(): Promise<void>;
  destroy(error?: Error | null): Promise<void>;
}

/** The controller undici 7 and 8 pass to a handler; both set `rawHeaders` before `onResponseStart`. @internal */
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
