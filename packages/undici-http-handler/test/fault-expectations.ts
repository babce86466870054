/**
 * What each handler does in each scenario of the cross-handler fault suite (`fault-scenarios.ts`), keyed by
 * scenario id and handler (and server kind where http and https differ). Outcome shapes are those of
 * `fault-run.ts` (`"Name/code"`, `"200 bodyError=Name/code"`, ...); `messages` are message classes (the start of
 * the message, up to the first variable part).
 *
 * The rows of the three peers are what they do today (upstream's own faults included, e.g. `@smithy/node-http-handler`
 * leaving a queued request hanging after `destroy()`, or crashing on a throwing logger). The `sockeye-undici` rows
 * are `NodeHttpHandler`'s behaviour (the README's promise) wherever the two handlers can behave alike; the column
 * "before" says what Sockeye's undici handler did before issue 22 (defect numbers of that issue in brackets).
 *
 * | scenario                         | Sockeye undici before                   | @smithy undici                        | NodeHttpHandler (both), and Sockeye undici now |
 * |----------------------------------|-----------------------------------------|---------------------------------------|-------------------------------|
 * | reset before response            | TimeoutError/ECONNRESET                 | RequestTimeout/UND_ERR_SOCKET         | TimeoutError/ECONNRESET       |
 * | reset/FIN mid-body, keep-alive   | body: TimeoutError/ECONNRESET (3)       | body: SocketError/UND_ERR_SOCKET      | body: Error/ECONNRESET aborted|
 * | reset/FIN mid-body, conn. close  | body: UND_ERR_RES_CONTENT_LENGTH_MISMATCH (2) | the same                        | body: Error/ECONNRESET aborted|
 * | refused                          | Error/ECONNREFUSED                      | Error/ECONNREFUSED                    | Error/ECONNREFUSED            |
 * | never answers (requestTimeout)   | TimeoutError/ETIMEDOUT, +1 connection   | TimeoutError/UND_ERR_HEADERS_TIMEOUT  | TimeoutError/ETIMEDOUT        |
 * | stalled body (socketTimeout)     | body: TimeoutError                      | body: BodyTimeoutError/UND_ERR_BODY_TIMEOUT | body: TimeoutError      |
 * | abort queued / acquisition t/o   | AbortError / TimeoutError, +1 conn. (6) | AbortError/20, +1 connection          | AbortError / TimeoutError     |
 * | abort in handle()'s turn         | AbortError, no connection               | AbortError/20, 1 connection           | AbortError, no connection     |
 * | abort during TLS handshake       | AbortError, socket left handshaking (7) | settles at the connect timeout        | AbortError, socket closed     |
 * | abort after send                 | AbortError, +1 connection               | AbortError/20, +1 connection          | AbortError                    |
 * | abort after headers, unread      | uncaught AbortError (1), body AbortError (3) | body AbortError/20               | body: Error/ECONNRESET aborted|
 * | abort / destroy() mid-body       | body AbortError / HandlerDestroyedError (3) | AbortError/20 / ClientDestroyedError | body: Error/ECONNRESET aborted |
 * | destroy() in flight and queued   | HandlerDestroyedError × 3               | ClientDestroyedError × 3              | Sockeye: HandlerDestroyedError; @smithy: queued one hangs |
 * | unread body, reset / destroy()   | uncaught exception (1)                  | error on read                         | error on read (Error/ECONNRESET) |
 * | throwing logger                  | nothing                                 | (no logger)                           | Sockeye: nothing; @smithy: uncaught |
 *
 * "+1 connection" after an abort or timeout in flight is undici's own: it reconnects for the aborted request before
 * it notices the abort (a bare undici `Client` does it too). Sockeye's handler-owned pools start no connection
 * attempt that no request waits for (`ConnectingSockets.connector`).
 */
import type { ServerKind } from "../../node-http-handler/test/servers";
import type { Leftovers } from "./fault-run";
import type { HandlerKey } from "./handler-matrix";

/** One handler's expected result in one scenario. */
export interface FaultExpectation {
  outcomes: string[];
  /** Message class per request (a pattern the error message matches), where there is an error. */
  messages?: (RegExp | undefined)[];
  connections: number;
  notes?: Record<string, unknown>;
  /** Leftovers that differ from "nothing" (upstream's known faults). */
  left?: Partial<Leftovers>;
}

type Row = Partial<Record<HandlerKey, FaultExpectation | { http: FaultExpectation; https: FaultExpectation }>>;

// biome-ignore format: one line per handler keeps the table readable
export const FAULT_EXPECTATIONS: Record<string, Row> = {
  "reset-before-response": {
    "sockeye-node": { outcomes: ["TimeoutError/ECONNRESET"], messages: [/^socket hang up/], connections: 1 },
    "sockeye-undici": { outcomes: ["TimeoutError/ECONNRESET"], messages: [/^socket hang up \(other side closed\)/], connections: 1 },
    "smithy-node": { outcomes: ["TimeoutError/ECONNRESET"], messages: [/^socket hang up/], connections: 1 },
    "smithy-undici": { outcomes: ["RequestTimeout/UND_ERR_SOCKET"], messages: [/^other side closed/], connections: 1 },
  },
  "reset-before-response-reused": {
    "sockeye-node": { outcomes: ["200 body=status 200", "TimeoutError/ECONNRESET"], messages: [undefined, /^socket hang up/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 body=status 200", "TimeoutError/ECONNRESET"], messages: [undefined, /^socket hang up \(other side closed\)/], connections: 1 },
    "smithy-node": { outcomes: ["200 body=status 200", "TimeoutError/ECONNRESET"], messages: [undefined, /^socket hang up/], connections: 1 },
    "smithy-undici": { outcomes: ["200 body=status 200", "RequestTimeout/UND_ERR_SOCKET"], messages: [undefined, /^other side closed/], connections: 1 },
  },
  "reset-mid-body-keep-alive": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=SocketError/UND_ERR_SOCKET"], messages: [/^other side closed/], connections: 1 },
  },
  "reset-mid-body-close": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=ResponseContentLengthMismatchError/UND_ERR_RES_CONTENT_LENGTH_MISMATCH"], messages: [/^Response body length does not match content-leng/], connections: 1 },
  },
  "fin-mid-body-keep-alive": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=SocketError/UND_ERR_SOCKET"], messages: [/^other side closed/], connections: 1 },
  },
  "fin-mid-body-close": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=ResponseContentLengthMismatchError/UND_ERR_RES_CONTENT_LENGTH_MISMATCH"], messages: [/^Response body length does not match content-leng/], connections: 1 },
  },
  "refused": {
    "sockeye-node": { outcomes: ["Error/ECONNREFUSED"], messages: [/^connect ECONNREFUSED/], connections: 0 },
    "sockeye-undici": { outcomes: ["Error/ECONNREFUSED"], messages: [/^connect ECONNREFUSED/], connections: 0 },
    "smithy-node": { outcomes: ["Error/ECONNREFUSED"], messages: [/^connect ECONNREFUSED/], connections: 0 },
    "smithy-undici": { outcomes: ["Error/ECONNREFUSED"], messages: [/^connect ECONNREFUSED/], connections: 0 },
  },
  "never-answers": {
    "sockeye-node": { outcomes: ["TimeoutError/ETIMEDOUT"], messages: [/^@sockeye\/node-http-handler - \[ERROR\] a request h/], connections: 1 },
    "sockeye-undici": { outcomes: ["TimeoutError/ETIMEDOUT"], messages: [/^@sockeye\/undici-http-handler - \[ERROR\] a request/], connections: 1 },
    "smithy-node": { outcomes: ["TimeoutError/ETIMEDOUT"], messages: [/^@smithy\/node-http-handler - \[ERROR\] a request ha/], connections: 1 },
    "smithy-undici": { outcomes: ["TimeoutError/UND_ERR_HEADERS_TIMEOUT"], messages: [/^Headers Timeout Error/], connections: 1 },
  },
  "stalled-handshake": {
    "sockeye-node": { outcomes: ["TimeoutError/-"], messages: [/^@sockeye\/node-http-handler - the request socket/], connections: 1 },
    "sockeye-undici": { outcomes: ["TimeoutError/-"], messages: [/^@sockeye\/undici-http-handler - the request socke/], connections: 1 },
    "smithy-node": { outcomes: ["TimeoutError/-"], messages: [/^@smithy\/node-http-handler - the request socket t/], connections: 1 },
    "smithy-undici": { http: { outcomes: ["TimeoutError/UND_ERR_HEADERS_TIMEOUT"], messages: [/^Headers Timeout Error/], connections: 1 }, https: { outcomes: ["TimeoutError/UND_ERR_CONNECT_TIMEOUT"], messages: [/^Connect Timeout Error \(attempted address:/], connections: 1 } },
  },
  "slow-body": {
    "sockeye-node": { outcomes: ["200 body=part-1;part-2"], connections: 1 },
    "sockeye-undici": { outcomes: ["200 body=part-1;part-2"], connections: 1 },
    "smithy-node": { outcomes: ["200 body=part-1;part-2"], connections: 1 },
    "smithy-undici": { outcomes: ["200 body=part-1;part-2"], connections: 1 },
  },
  "stalled-body": {
    "sockeye-node": { outcomes: ["200 bodyError=TimeoutError/-"], messages: [/^@sockeye\/node-http-handler - the request socket/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=TimeoutError/-"], messages: [/^@sockeye\/undici-http-handler - the request socke/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=TimeoutError/-"], messages: [/^@smithy\/node-http-handler - the request socket t/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=BodyTimeoutError/UND_ERR_BODY_TIMEOUT"], messages: [/^Body Timeout Error/], connections: 1 },
  },
  "abort-queued": {
    "sockeye-node": { outcomes: ["200 body=echo GET /delay?ms=150", "AbortError/-", "200 body=status 200"], messages: [undefined, /^Request aborted/, undefined], connections: 1 },
    "sockeye-undici": { outcomes: ["200 body=echo GET /delay?ms=150", "AbortError/-", "200 body=status 200"], messages: [undefined, /^Request aborted/, undefined], connections: 1 },
    "smithy-node": { outcomes: ["200 body=echo GET /delay?ms=150", "AbortError/-", "200 body=status 200"], messages: [undefined, /^Request aborted/, undefined], connections: 1 },
    "smithy-undici": { outcomes: ["200 body=echo GET /delay?ms=150", "AbortError/20", "200 body=status 200"], messages: [undefined, /^This operation was aborted/, undefined], connections: 2 },
  },
  "acquisition-timeout-queued": {
    "sockeye-node": { outcomes: ["200 body=echo GET /delay?ms=200", "TimeoutError/ETIMEDOUT", "200 body=status 200"], messages: [undefined, /^@sockeye\/node-http-handler - the request waited/, undefined], connections: 1 },
    "sockeye-undici": { outcomes: ["200 body=echo GET /delay?ms=200", "TimeoutError/ETIMEDOUT", "200 body=status 200"], messages: [undefined, /^@sockeye\/undici-http-handler - the request waite/, undefined], connections: 1 },
  },
  "abort-connecting": {
    "sockeye-node": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 0 },
    "sockeye-undici": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 0 },
    "smithy-node": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 0 },
    "smithy-undici": { outcomes: ["AbortError/20"], messages: [/^This operation was aborted/], connections: 1 },
  },
  "abort-sent": {
    "sockeye-node": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 1 },
    "smithy-node": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["AbortError/20"], messages: [/^This operation was aborted/], connections: 2 },
  },
  "abort-after-headers-unread": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=AbortError/20"], messages: [/^This operation was aborted/], connections: 2 },
  },
  "abort-mid-body": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=AbortError/20"], messages: [/^This operation was aborted/], connections: 2 },
  },
  "destroy-in-flight-and-queued": {
    "sockeye-node": { outcomes: ["HandlerDestroyedError/ERR_HANDLER_DESTROYED", "HandlerDestroyedError/ERR_HANDLER_DESTROYED", "HandlerDestroyedError/ERR_HANDLER_DESTROYED"], messages: [/^@sockeye\/node-http-handler - the handler was des/, /^@sockeye\/node-http-handler - the handler was des/, /^@sockeye\/node-http-handler - the handler was des/], connections: 1 },
    "sockeye-undici": { outcomes: ["HandlerDestroyedError/ERR_HANDLER_DESTROYED", "HandlerDestroyedError/ERR_HANDLER_DESTROYED", "HandlerDestroyedError/ERR_HANDLER_DESTROYED"], messages: [/^@sockeye\/undici-http-handler - the handler was d/, /^@sockeye\/undici-http-handler - the handler was d/, /^@sockeye\/undici-http-handler - the handler was d/], connections: 1 },
    "smithy-node": { outcomes: ["TimeoutError/ECONNRESET", "TimeoutError/ECONNRESET", "pending"], messages: [/^socket hang up/, /^socket hang up/, undefined], connections: 3, left: { pending: 1, openConnections: 1, abortListeners: 1, refTimers: 1 } },
    "smithy-undici": { outcomes: ["ClientDestroyedError/UND_ERR_DESTROYED", "ClientDestroyedError/UND_ERR_DESTROYED", "ClientDestroyedError/UND_ERR_DESTROYED"], messages: [/^The client is destroyed/, /^The client is destroyed/, /^The client is destroyed/], connections: 1 },
  },
  "destroy-mid-body": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=ClientDestroyedError/UND_ERR_DESTROYED"], messages: [/^The client is destroyed/], connections: 1 },
  },
  "unread-body-reset": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=SocketError/UND_ERR_SOCKET"], messages: [/^other side closed/], connections: 1 },
  },
  "unread-body-destroy": {
    "sockeye-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "sockeye-undici": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-node": { outcomes: ["200 bodyError=Error/ECONNRESET"], messages: [/^aborted/], connections: 1 },
    "smithy-undici": { outcomes: ["200 bodyError=ClientDestroyedError/UND_ERR_DESTROYED"], messages: [/^The client is destroyed/], connections: 1 },
  },
  "throwing-logger": {
    "sockeye-node": { outcomes: ["200 body=echo GET /delay?ms=150"], connections: 1 },
    "sockeye-undici": { outcomes: ["200 body=echo GET /delay?ms=150"], connections: 1 },
    "smithy-node": { outcomes: ["200 body=echo GET /delay?ms=150"], connections: 1, left: { uncaught: ["Error: logger down"] } },
    "smithy-undici": { outcomes: ["200 body=echo GET /delay?ms=150"], connections: 1 },
  },
  "throwing-on-saturation": {
    "sockeye-node": { outcomes: ["200 body=200000 bytes", "200 body=status 200"], connections: 1, notes: { onSaturationCalled: true } },
    "sockeye-undici": { outcomes: ["200 body=200000 bytes", "200 body=status 200"], connections: 1, notes: { onSaturationCalled: true } },
  },
  "abort-tls-handshake": {
    "sockeye-node": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 1, notes: { handshakingLeftOpen: 0 } },
    "sockeye-undici": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 1, notes: { handshakingLeftOpen: 0 } },
    "smithy-node": { outcomes: ["AbortError/-"], messages: [/^Request aborted/], connections: 1, notes: { handshakingLeftOpen: 0 } },
    "smithy-undici": { outcomes: ["TimeoutError/UND_ERR_CONNECT_TIMEOUT"], messages: [/^Connect Timeout Error \(attempted address:/], connections: 1, notes: { handshakingLeftOpen: 0 } },
  },
};

/** The expectation for one run; an unknown one fails its test with a clear message. */
export function expectationFor(id: string, key: HandlerKey, kind: ServerKind): FaultExpectation {
  const entry = FAULT_EXPECTATIONS[id]?.[key];
  if (entry === undefined) return { outcomes: [`no expectation recorded for ${id} / ${key}`], connections: -1 };
  return "http" in entry ? entry[kind] : entry;
}
