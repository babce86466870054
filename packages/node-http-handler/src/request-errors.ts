/**
 * The errors a request rejects with when the handler (not Node) ends it: one builder per way a request can fail on
 * a deadline or on `destroy()`. Messages keep upstream's wording where upstream has the same failure (prefix
 * `@sockeye/node-http-handler`), so log alerts written for upstream still match. Built only on failure paths.
 */
import type { Agent } from "node:http";
import { describeAgentQueue } from "./agent-queue";
import { PACKAGE_PREFIX } from "./constants";
import type { RequestPlan } from "./request-plan";

/**
 * `name` of the error every in-flight or queued request rejects with when the handler is destroyed.
 * @internal
 */
export const HANDLER_DESTROYED_ERROR_NAME = "HandlerDestroyedError";

/**
 * `code` of that error (not a transient code, so SDK retry strategies do not retry it).
 * @internal
 */
export const HANDLER_DESTROYED_ERROR_CODE = "ERR_HANDLER_DESTROYED";

function timeoutError(message: string, code?: string): Error {
  const error = new Error(message) as Error & { code?: string };
  error.name = "TimeoutError";
  if (code !== undefined) error.code = code;
  return error;
}

/** `connectionTimeout` expired; `queued`: the request never got a socket (the message says so). @internal */
export function connectionTimeoutError(plan: RequestPlan, queued: boolean): Error {
  let message = `${PACKAGE_PREFIX} - the request socket did not establish a connection with the server within the configured timeout of ${plan.connectionTimeout} ms.`;
  if (queued)
    message += ` The request was still waiting for a free socket (${describeAgentQueue(plan.agent, plan.gate)}).`;
  return timeoutError(message);
}

/** Upstream's `requestTimeout` text, `[ERROR]` when it throws, `[WARN]` when it only warns. @internal */
export function requestTimeoutMessage(plan: RequestPlan): string {
  const level = plan.throwOnRequestTimeout ? "ERROR" : "WARN";
  return `${PACKAGE_PREFIX} - [${level}] a request has exceeded the configured ${plan.requestTimeout} ms requestTimeout.`;
}

/** `requestTimeout` expired with `throwOnRequestTimeout: true`. @internal */
export function requestTimeoutError(plan: RequestPlan): Error {
  return timeoutError(requestTimeoutMessage(plan), "ETIMEDOUT");
}

/** `socketAcquisitionTimeout` expired after `waitedMs` in the agent's queue. @internal */
export function acquisitionTimeoutError(plan: RequestPlan, waitedMs: number): Error {
  return timeoutError(
    `${PACKAGE_PREFIX} - the request waited ${Math.round(waitedMs)} ms for a free socket (${describeAgentQueue(plan.agent, plan.gate)}) and exceeded the configured socketAcquisitionTimeout of ${plan.socketAcquisitionTimeout} ms. Raise maxSockets, lower concurrency, or make sure response bodies are consumed.`,
    "ETIMEDOUT"
  );
}

/** `socketTimeout` (inactivity) expired. @internal */
export function idleTimeoutError(plan: RequestPlan): Error {
  return timeoutError(
    `${PACKAGE_PREFIX} - the request socket timed out after ${plan.socketTimeout} ms of inactivity (${plan.socketTimeoutIsServiceDefault ? "service default socket timeout" : "configured by client requestHandler"}).`
  );
}

/** The Node request closed (e.g. destroyed by a caller holding it) before any response or error. @internal */
export function closedBeforeResponseError(): Error {
  const error = timeoutError(`${PACKAGE_PREFIX} - the request closed before a response was received.`) as Error & {
    code?: string;
  };
  error.code = "ECONNRESET";
  return error;
}

/**
 * The handler's `destroy()` ended the request: `name` `HandlerDestroyedError`, `code` `ERR_HANDLER_DESTROYED`,
 * message naming where it was (queued for a socket or in flight). @internal
 */
export function handlerDestroyedError(agent: Agent, queued: boolean, gate?: { readonly queued: number }): Error {
  const where = queued
    ? `while it was waiting for a free socket (${describeAgentQueue(agent, gate)})`
    : "while the request was in flight";
  return handlerDestroyedErrorAt(where);
}

/**
 * The handler's `destroy()` ran while `handle()` was still in its first-time setup (resolving the config provider
 * or creating the http agent), before any Node request existed: same `name` and `code` as `handlerDestroyedError`.
 * @internal
 */
export function handlerDestroyedDuringSetupError(): Error {
  return handlerDestroyedErrorAt("while handle() was still resolving the handler config or creating its http agent");
}

/**
 * A `HandlerDestroyedError` (`code` `ERR_HANDLER_DESTROYED`) saying where the request was (`where`, e.g. "while the
 * request was in flight"), its message prefixed with `prefix` (a package name). Shared with
 * `@sockeye/undici-http-handler` through `/internal`. @internal
 */
export function handlerDestroyedErrorAt(where: string, prefix: string = PACKAGE_PREFIX): Error {
  const error = new Error(
    `${prefix} - the handler was destroyed (destroy() was called) ${where}; no new connection is opened for it.`
  ) as Error & { code?: string };
  error.name = HANDLER_DESTROYED_ERROR_NAME;
  error.code = HANDLER_DESTROYED_ERROR_CODE;
  return error;
}
