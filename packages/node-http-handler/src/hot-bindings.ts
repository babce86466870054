/**
 * The bindings of other packages that the HTTP/1.1 request path uses on every request, read once at module load.
 *
 * Why: Node loads this package's CommonJS build (for `require` and `import` alike), where esbuild compiles each use
 * of a binding imported from another package to a read of that package's exports object. For an esbuild-built
 * package (`@sockeye/pool-monitor`, `@smithy/core` behind `@smithy/protocol-http`) that property is a getter whose
 * generic `from[key]` read is megamorphic: about 290 executed instructions per use, ~15 uses per request at c = 50
 * (`npm run bench:instr`, callgrind; ~2.4 % of the request). These are constants (classes, functions, the shared
 * `timing` seam, whose functions still resolve the clock and timers at call time), so a copy read here changes
 * nothing but the cost. The request path's modules import them from here; cold paths (errors) keep the direct imports.
 * @internal
 */
import {
  Deadline as PoolDeadline,
  DeadlineKind as PoolDeadlineKind,
  noteRequestOutcome as poolNoteRequestOutcome,
  requestClosed as poolRequestClosed,
  requestDispatched as poolRequestDispatched,
  requestError as poolRequestError,
  requestResponse as poolRequestResponse,
  requestSocket as poolRequestSocket,
  timing as poolTiming,
  trackQueued as poolTrackQueued,
  trackStarted as poolTrackStarted,
  validateRequest as poolValidateRequest,
  writeBody as poolWriteBody,
} from "@sockeye/pool-monitor/internal";
import { HttpResponse as SmithyHttpResponse } from "@smithy/protocol-http";

/** `Deadline` of `@sockeye/pool-monitor/internal`. @internal */
export const Deadline = PoolDeadline;
/** @internal */
export type Deadline<K = number> = PoolDeadline<K>;
/** `DeadlineKind` of `@sockeye/pool-monitor/internal`. @internal */
export const DeadlineKind = PoolDeadlineKind;
/** @internal */
export type DeadlineKind = PoolDeadlineKind;
/** The shared `timing` seam of `@sockeye/pool-monitor/internal`. @internal */
export const timing = poolTiming;
/** `validateRequest` of `@sockeye/pool-monitor/internal`. @internal */
export const validateRequest = poolValidateRequest;
/** `writeBody` of `@sockeye/pool-monitor/internal`. @internal */
export const writeBody = poolWriteBody;
/**
 * The monitor's per-request functions (`request-listeners.ts` of `@sockeye/pool-monitor`), fed from the handler's own
 * request object and listeners (`trackUnpooled`, for the rare 100-continue request, is imported directly).
 * @internal
 */
export const trackStarted = poolTrackStarted;
/** @internal */
export const trackQueued = poolTrackQueued;
/** @internal */
export const requestDispatched = poolRequestDispatched;
/** @internal */
export const requestSocket = poolRequestSocket;
/** @internal */
export const requestResponse = poolRequestResponse;
/** @internal */
export const requestError = poolRequestError;
/** @internal */
export const requestClosed = poolRequestClosed;
/** @internal */
export const noteRequestOutcome = poolNoteRequestOutcome;
/** `HttpResponse` of `@smithy/protocol-http`. @internal */
export const HttpResponse = SmithyHttpResponse;
