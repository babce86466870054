/**
 * What each handler does in the retry suite (`sdk-retries.spec.ts`), per fault mode. The oracle is upstream
 * `@smithy/node-http-handler` with the clients' default retry settings: every fault below is transient for the SDK,
 * so a transient fault succeeds at the 2nd attempt and a persistent one fails after the client's default
 * `maxAttempts` (DynamoDB 4, S3 3), each attempt one request at the proxy.
 *
 * Sockeye's handlers must match the oracle (attempts, success or failure, and the final error's shape as
 * `NodeHttpHandler` gives it), both of them in every mode.
 * `@smithy/undici-http-handler` 3.2.4 is recorded as it is: it does not retry an error in the response body
 * (`SocketError` / `ResponseContentLengthMismatchError`: not transient for the SDK), so a mid-body fault ends its
 * call at the 1st attempt.
 *
 * | fault                               | NodeHttpHandler (both)   | Sockeye undici                                         | @smithy undici                                  |
 * |-------------------------------------|--------------------------|--------------------------------------------------------|-------------------------------------------------|
 * | reset before response               | retried; TimeoutError/ECONNRESET | the same                                       | retried; Error/ECONNRESET                       |
 * | reset / FIN mid-body, keep-alive    | retried; Error/ECONNRESET | the same (issue 22 defect 3: was TimeoutError)        | not retried; SocketError/UND_ERR_SOCKET (a reset on Node 24: retried; Error/ECONNRESET) |
 * | reset / FIN mid-body, Conn. close   | retried; Error/ECONNRESET | the same (issue 22 defect 2: was not retried)         | not retried; the same                           |
 * | refused (persistent only)           | retried; Error/ECONNREFUSED | the same                                            | the same                                        |
 * | stall (socketTimeout 300 ms)        | retried; TimeoutError    | the same                                               | retried; TimeoutError/UND_ERR_HEADERS_TIMEOUT   |
 */
import type { HandlerKey } from "../../../undici-http-handler/test/handler-matrix.js";
import type { ProxyMode } from "./fault-proxy.js";

/** A fault of the retry suite: a proxy mode, or a refused connection. @internal */
export type RetryFault = Exclude<ProxyMode, "pass"> | "refuse";

/** How one SDK call ended. @internal */
export interface RetryOutcome {
  ok: boolean;
  /** `$metadata.attempts`. */
  attempts: number;
  /** `Name/code` of the final error. */
  error?: string;
}

/** @internal */
export type RetryExpectation = RetryOutcome;

/** The clients' default `maxAttempts`. */
const DEFAULT_ATTEMPTS = { dynamodb: 4, s3: 3 } as const;

/** The running Node.js major version (the peer's behaviour differs by it). */
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

const MID_BODY = new Set<RetryFault>([
  "reset-mid-body-keep-alive",
  "reset-mid-body-close",
  "fin-mid-body-keep-alive",
  "fin-mid-body-close",
]);

/** The final error of a persistent fault, as `NodeHttpHandler` (Sockeye's and upstream's) gives it. */
function nodeError(fault: RetryFault): string {
  if (fault === "reset-before-response") return "TimeoutError/ECONNRESET";
  if (fault === "refuse") return "Error/ECONNREFUSED";
  if (fault === "stall") return "TimeoutError/-";
  return "Error/ECONNRESET";
}

/** The expectation for one test. @internal */
export function retryExpectation(
  fault: RetryFault,
  persistence: "transient" | "persistent",
  key: HandlerKey,
  service: "dynamodb" | "s3"
): RetryExpectation {
  const oracle: RetryOutcome =
    persistence === "transient"
      ? { ok: true, attempts: 2 }
      : { ok: false, attempts: DEFAULT_ATTEMPTS[service], error: nodeError(fault) };
  if (key === "smithy-undici") {
    // On Node 24 a reset mid-body on a kept-alive connection reaches undici as the socket's own ECONNRESET, which
    // the SDK retries; on Node 20 and 22 undici reports its own SocketError first, which the SDK does not.
    if (fault === "reset-mid-body-keep-alive" && NODE_MAJOR >= 24) {
      return oracle.ok ? oracle : { ...oracle, error: "Error/ECONNRESET" };
    }
    if (MID_BODY.has(fault)) {
      const error = fault.endsWith("-close")
        ? "ResponseContentLengthMismatchError/UND_ERR_RES_CONTENT_LENGTH_MISMATCH"
        : "SocketError/UND_ERR_SOCKET";
      return { ok: false, attempts: 1, error };
    }
    if (oracle.ok) return oracle;
    if (fault === "reset-before-response") return { ...oracle, error: "Error/ECONNRESET" };
    if (fault === "stall") return { ...oracle, error: "TimeoutError/UND_ERR_HEADERS_TIMEOUT" };
    return oracle;
  }
  // Sockeye's undici handler: upstream's attempts and final error in every mode (issue 22, defects 2 and 3).
  return oracle;
}
