/**
 * Builds the error a request rejects with when its abort signal fires: always a new, mutable `Error` named
 * `AbortError`. An `Error` reason becomes the `cause` (message "Request aborted"); any other truthy reason becomes
 * the message; otherwise the message is "Request aborted". Same contract as upstream.
 * @internal
 */
export function buildAbortError(abortSignal?: unknown): Error {
  const reason =
    abortSignal && typeof abortSignal === "object" && "reason" in abortSignal
      ? (abortSignal as { reason?: unknown }).reason
      : undefined;
  let error: Error;
  if (reason instanceof Error) {
    error = new Error("Request aborted", { cause: reason });
  } else if (reason) {
    error = new Error(String(reason));
  } else {
    error = new Error("Request aborted");
  }
  error.name = "AbortError";
  return error;
}
