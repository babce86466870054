/** Prefix of every error message and log line of this package. @internal */
export const PACKAGE_PREFIX = "@sockeye/undici-http-handler";

/** Connections per origin when neither `httpsAgent`/`httpAgent` nor `dispatcher` sets one (upstream's 50). @internal */
export const DEFAULT_MAX_SOCKETS = 50;
