/**
 * Building blocks shared by the handlers, published as `@sockeye/pool-monitor/internal`. Not public API: names and
 * signatures may change in any release. The public entry re-exports its runtime values from here, so the code is
 * built once. @internal
 */
export { type Admission, AdmissionQueue, type GatedNode, type QueueNode } from "./admission-queue";
export { buildQueryString } from "./build-query-string";
export { DeadlineKind } from "./deadline-kind";
export { IdleWatch, type IdleTarget } from "./idle-watch";
export { type AbortSignalLike, RequestCore } from "./request-core";
export { DeadlinePlan } from "./request-core-plan";
export { RequestPhase } from "./request-core-phase";
export { Deadline, type DeadlineOwner, DeadlineScheduler, TICK_MS } from "./deadline-scheduler";
export { CHANNEL_NAMES } from "./diagnostics";
export { formatSaturationMessage, type SaturationTerms } from "./format-saturation-message";
export { describeValue, invalidOption } from "./invalid-option";
export {
  applyOptionRules,
  BOOLEAN,
  COUNT,
  LOGGER,
  MS,
  type OptionRules,
  type OptionSchema,
  objectRule,
  type ResolvedOptions,
  resolveOptions,
} from "./option-rules";
export { normalizeOrigin } from "./normalize-origin";
export { unusableBody } from "./validate-body";
export { declaredLength, explainRefusal } from "./validate-headers";
export { validateRequest } from "./validate-request";
export { Http1PoolMonitor } from "./http1-pool-monitor";
export {
  addActiveAge,
  addUnreadResponse,
  agentMaps,
  type Http1Requests,
  OriginState,
  outcomeOf,
  PoolLink,
  type ResponseProgress,
  SocketState,
  socketStateOf,
  takeSocket,
} from "./tracking-state";
export { attachUnpooledRequest, type UnpooledRequest, unpooledClosed } from "./unpooled-request";
export { PoolMonitor } from "./pool-monitor";
export {
  emptyPoolStats,
  type GetStatsOptions,
  OVERFLOW_ORIGIN,
  type PoolTelemetry,
  TelemetryCore,
  UNREAD_WHILE_QUEUED_SAMPLES,
} from "./telemetry-core";
export {
  type DetectorTuning,
  emptyCloseCounts,
  OriginTelemetry,
} from "./origin-telemetry";
export { PoolReading, SampleEvidence, type UnreadBody, type UnreadWatch } from "./pool-reading";
export { type CloseReasonOf, HTTP2_CLOSE_REASONS } from "./pool-stats";
export { httpRequestFinishedEvent, schemeOf, type WireFacts } from "./request-finished";
export { POOL_MONITOR_DEFAULTS, SATURATION_OPTION_KEYS } from "./pool-monitor-options";
export {
  bodyAbortedError,
  bodyClosedEarlyError,
  bodyDestroyedError,
  buildAbortError,
  closedBeforeResponseError,
  connectionTimeoutError,
  contentLengthMismatchError,
  handlerDestroyedError,
  http2DestroyedError,
  http2FrameError,
  http2NoResponseError,
  http2SessionClosedError,
  http2StreamAbortedError,
  isUnreadBodyError,
  queueFullError,
  REQUEST_TIMEOUT_HINT,
  relabelSocketError,
  requestTimeoutMessage,
  sessionConnectTimeoutError,
  socketHangUpError,
  socketIdleTimeoutError,
  streamIdleTimeoutError,
  unusableBodyError,
} from "./request-errors";
export {
  checkHandlerUpdate,
  handlerMonitorOptions,
  resolveDefaultSocketTimeout,
  withUpdate,
} from "./resolve-shared-options";
export { guardedWarn } from "./guarded-warn";
export { SOCKET_MONITOR_ENV } from "./socket-monitor-mode";
export {
  ALL_HANDLERS_OPTIONS,
  type AllSharedOptions,
  DEFAULT_IDLE_SOCKET_TIMEOUT_MS,
  type Http2SharedOption,
  type ResolvedSharedOptions,
  SHARED_OPTIONS,
} from "./shared-handler-options";
export {
  isConnectionResetError,
  isHandlerDestroyedError,
  isQueueFullError,
  isSockeyeAbortError,
  isSockeyeTimeoutError,
  sockeyeErrorKind,
} from "./sockeye-error-kind";
export { timing } from "./timing";
export {
  type BodySource,
  bodyOf,
  bodyOpen,
  endResponseBody,
  failSourceBody,
  openResponseBody,
  pushBody,
} from "./response-body";
export { watchBodyRead } from "./watch-body-read";
export { type BodyLengthSink, closedEarly, pipeBody, writeBody } from "./write-body";
