/**
 * Building blocks shared with Sockeye's other handlers (`@sockeye/undici-http-handler`), published as the subpath
 * `@sockeye/node-http-handler/internal` so that one implementation serves every handler. Not part of the public API:
 * names and signatures may change in any release.
 * @internal
 */
export { buildAbortError } from "./build-abort-error";
export { buildQueryString } from "./build-query-string";
export { TICK_MS } from "./constants";
export { Deadline, type DeadlineOwner, DeadlineScheduler } from "./deadline-scheduler";
export { invalidOption, normalizeOptions } from "./normalize-options";
export { handlerDestroyedErrorAt } from "./request-errors";
export { resolveSocketMonitorMode } from "./socket-monitor-mode";
export { writeBody } from "./write-body";
