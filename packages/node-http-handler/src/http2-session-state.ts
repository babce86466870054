/** The life of one pooled HTTP/2 session (`Http2SessionEntry.state`): connecting → ready → closing → closed. */

/** TCP, TLS or the server's first SETTINGS still pending. @internal */
export const SESSION_CONNECTING = 0;
/** Established: takes streams up to its limit. @internal */
export const SESSION_READY = 1;
/** Retired: takes no new stream; closes once its streams are done. @internal */
export const SESSION_CLOSING = 2;
/** Gone (its `'close'` handled). @internal */
export const SESSION_CLOSED = 3;

/** @internal */
export type Http2SessionState =
  | typeof SESSION_CONNECTING
  | typeof SESSION_READY
  | typeof SESSION_CLOSING
  | typeof SESSION_CLOSED;
