/** Prefix of every error message and log line of this package. @internal */
export const PACKAGE_PREFIX = "@sockeye/undici-http-handler";

/** Connections per origin when neither `httpsAgent`/`httpAgent` nor `dispatcher` sets one (upstream's 50). @internal */
export const DEFAULT_MAX_SOCKETS = 50;

/** Default idle time of a pooled connection before it is closed, ms (undici's and Sockeye's 4 s). @internal */
export const DEFAULT_IDLE_SOCKET_TIMEOUT_MS = 4000;
