/**
 * InFlightRequest: one `handle()` call on `RequestCore` (promise, single `finish()`, abort, counting, deadlines),
 * from `start()` to `finish()`.
 *
 *   start() ─┬─► dispatched ─'socket'─► assigned ─connect/secureConnect─► connected ─'response'─► responded
 *            ├─► gated (in the handler's AgentGate: no Node request yet) ─slot freed─► dispatched
 *            └─► refused (the gate key already queues `maxQueuedRequests`) ─► finish() at once
 *   any state ── error, abort, deadline, body write failure ─► reject()
 *   'close' │ left the gate or the agent queue │ handler destroy() │ http.request threw ─► finish() (terminal)
 *
 * Deadlines run from `start()`, gated or not; a request that leaves a queue never emits `'close'` (`agent-queue.ts`).
 *
 * The response body is fed by the `IncomingMessage`'s `push`, replaced by one module-level function
 * (`pushResponse`): a full body returns false so the parser stops reading the socket, and `readMore()` restarts it
 * through `_read`. The end still goes through the message (`'end'` returns the socket to the agent).
 *
 * Allocations per request: this object, the Node options (kept while gated), one `Deadline` node and a small array
 * when a deadline is set, the promise and resolvers. Node listeners are module-level functions that find the state
 * through a symbol. No native timer per request, except in `socketMonitor: "per-request"` mode.
 */
import type { Http1PoolMonitor, RequestOutcome } from "@sockeye/pool-monitor";
import {
  agentMaps as importedAgentMaps,
  attachUnpooledRequest,
  bodyOpen as importedBodyOpen,
  closedBeforeResponseError,
  type BodySource,
  type Deadline,
  DeadlineKind as importedDeadlineKind,
  endResponseBody as importedEndResponseBody,
  explainRefusal,
  failSourceBody as importedFailSourceBody,
  guardedWarn,
  handlerDestroyedError,
  type IdleWatch,
  openResponseBody as importedOpenResponseBody,
  type OriginState,
  outcomeOf as importedOutcomeOf,
  pushBody as importedPushBody,
  type PoolLink,
  type QueueNode,
  queueFullError,
  REQUEST_TIMEOUT_HINT,
  RequestCore,
  RequestPhase as importedRequestPhase,
  relabelSocketError,
  type ResponseProgress,
  requestTimeoutMessage,
  type SocketState,
  socketIdleTimeoutError,
  socketStateOf as importedSocketStateOf,
  takeSocket as importedTakeSocket,
  timing as importedTiming,
  type UnpooledRequest,
  unpooledClosed,
  watchBodyRead as importedWatchBodyRead,
  type WireFacts,
  writeBody as importedWriteBody,
} from "@sockeye/pool-monitor/internal";
import { type HttpRequest, HttpResponse as ImportedHttpResponse } from "@smithy/protocol-http";
import type { ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import type { GatedRequest, GateKey } from "./agent-gate";
import { describeAgentQueue, leaveAgentQueue } from "./agent-queue";
import { PACKAGE_PREFIX } from "./constants";
import { getTransformedHeaders } from "./get-transformed-headers";
import type { IdleWatcher } from "./idle-watch-list";
import type { RequestHost } from "./request-host";
import { deadlinePlanOf, type RequestPlan } from "./request-plan";
import { socketAge, stampSocket } from "./socket-lifecycle";
import type { WarnedRequest } from "./socket-usage-warning";
import { enableTcpKeepAlive } from "./tcp-keep-alive";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const agentMaps = importedAgentMaps;
const bodyOpen = importedBodyOpen;
const DeadlineKind = importedDeadlineKind;
const endResponseBody = importedEndResponseBody;
const failSourceBody = importedFailSourceBody;
const openResponseBody = importedOpenResponseBody;
const outcomeOf = importedOutcomeOf;
const pushBody = importedPushBody;
const RequestPhase = importedRequestPhase;
const socketStateOf = importedSocketStateOf;
const takeSocket = importedTakeSocket;
const timing = importedTiming;
const watchBodyRead = importedWatchBodyRead;
const writeBody = importedWriteBody;
type DeadlineKind = importedDeadlineKind;
const HttpResponse = ImportedHttpResponse;

const kState = Symbol("sockeye.inFlightRequest");
/** The request each connecting socket was assigned to, until connected (off the socket: it keeps Node's shape). */
const connectingFor = new WeakMap<Socket, InFlightRequest>();

type Settle = (value: any) => void;

/** What `start()` needs of the Node request options (the rest is passed through to `http.request`). @internal */
export interface NodeRequestOptions {
  /** Host as `http.request` takes it (an IPv6 address without brackets). */
  host: string;
  port?: number | undefined;
  [option: string]: unknown;
}

/** @internal */
export class InFlightRequest
  extends RequestCore<OriginState>
  implements IdleWatcher, WarnedRequest, GatedRequest, ResponseProgress, UnpooledRequest, BodySource
{
  req: ClientRequest | undefined = undefined;
  warningTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  usageWarning: Deadline<DeadlineKind> | undefined = undefined;
  // IdleWatcher fields (the host's idle watch, `socketTimeout`).
  idleWatch: IdleWatch | undefined = undefined;
  idleOn: Socket | undefined = undefined;
  liveNext: InFlightRequest | undefined = undefined;
  livePrev: InFlightRequest | undefined = undefined;
  // GatedRequest fields (the plan's `AgentGate`): the key counted under and, while queued, the FIFO links.
  gateKey: GateKey | undefined = undefined;
  listTag = 0;
  listPrev: QueueNode | undefined = undefined;
  listNext: QueueNode | undefined = undefined;
  /** Kept from `start()` until the Node request is created. */
  private requestFunc: ((options: object) => ClientRequest) | undefined = undefined;
  nodeOptions: NodeRequestOptions | undefined = undefined;
  res: IncomingMessage | undefined = undefined;
  /** The parser was stopped: the body's buffer is full. */
  resPaused = false;
  hasErrored = false;
  /** Why the handler gave up on it (the first reason wins): counted so, not as failed. */
  notedOutcome: "aborted" | "timed_out" | undefined = undefined;
  // Telemetry (see the header): set when the request is first counted; unset = not counted.
  declare monitor: Http1PoolMonitor | undefined;
  declare telemetry: OriginState | undefined;
  /** Its agent name's link in the monitor (the gate key's name), once known. */
  link: PoolLink | undefined = undefined;
  /** Sent on the one-off 100-continue agent: counted in its origin's `unpooled` block only. */
  isUnpooled = false;
  /** Waiting for a socket: in the gate, in `agent.requests`, or dispatched without one yet. */
  isQueued = false;
  /** Counted in its link's `gateQueued` (waiting in the gate). */
  private gateCounted = false;
  /** `timing.now()` ms at its response (-1: none yet). */
  responseAt = -1;
  /** `socket.bytesRead` when the body last made progress, and when that was (the unread-body rule). */
  seenProgress = 0;
  progressAt = 0;
  socketState: SocketState | undefined = undefined;

  constructor(
    readonly host: RequestHost<InFlightRequest>,
    readonly httpRequest: HttpRequest,
    readonly requestPlan: RequestPlan,
    /** `scheme://host:port`, the only request detail telemetry ever sees ("" with telemetry off). */
    readonly originKey: string,
    abortSignal: any
  ) {
    super(deadlinePlanOf(requestPlan, host.hostScheduler), undefined, undefined, abortSignal);
  }

  get errorPrefix(): string {
    return PACKAGE_PREFIX;
  }

  get waitsFor(): "socket" {
    return "socket";
  }

  get originState(): OriginState | undefined {
    return this.telemetry;
  }

  /** Promise executor body: admitted, the core starts (clocks run from now), dispatched or gated. Never throws. */
  start(
    resolve: Settle,
    reject: Settle,
    requestFunc: (options: object) => ClientRequest,
    options: NodeRequestOptions
  ): void {
    this.requestFunc = requestFunc;
    this.nodeOptions = options;
    const now = this.begunAt;
    const admission = this.host.requestStarted(this, now);
    try {
      this.begin(resolve, reject);
      // Upstream's race: send the body on '100 Continue' or after max(6 s, requestTimeout); never on response/error.
      if (admission !== "full") this.armDeadline(DeadlineKind.Continue, now);
    } catch (error) {
      this.finish(error);
      return;
    }
    if (admission === "dispatch") this.dispatch(now);
    else if (admission === "queued") {
      this.armDeadline(DeadlineKind.Connection, now);
      if (this.track()) this.countQueued(now);
    } else {
      if (this.track()) {
        this.countStarted();
        this.monitor!.queueFullRejected(this.telemetry!);
      }
      const plan = this.requestPlan;
      const queued = plan.agentGate!.keyFor(options.host, options.port).nodeCount;
      this.finish(queueFullError(PACKAGE_PREFIX, plan.maxQueued, queued, "socket"));
    }
  }

  dispatchFromGate(): void {
    this.dispatch(timing.now());
  }

  /** Creates the Node request (at `start()`, or when the handler's gate lets it go) and sends it. Never throws. */
  private dispatch(now: number): void {
    const requestFunc = this.requestFunc!;
    const options = this.nodeOptions!;
    this.requestFunc = undefined;
    this.nodeOptions = undefined;
    if (this.isFinished) return;
    const host = this.host;
    host.requestDispatching(this, now);
    let req: ClientRequest;
    try {
      req = requestFunc(options);
    } catch (error) {
      // e.g. a header value with a newline: no Node request, no 'close' will come.
      this.finish(explainRefusal(error, this.httpRequest.headers, PACKAGE_PREFIX));
      return;
    }
    // Node's agent sets `reusedSocket` synchronously in `addRequest()` when it hands over a free (connected) socket.
    if (req.reusedSocket !== true && !this.deadlineArmed(DeadlineKind.Connection))
      this.armDeadline(DeadlineKind.Connection, this.begunAt);
    this.req = req;
    (req as any)[kState] = this;
    try {
      // `on`, not `once`: each of these fires once anyway, and `once` allocates a wrapper per registration.
      req.on("response", onResponse);
      req.on("error", onRequestError);
      req.on("socket", onRequestSocket);
      req.on("close", onRequestClose);
      this.countDispatched(req, now);
      const plan = this.requestPlan;
      if (plan.expectContinue && !plan.callerAgent) {
        req.once("continue", onRequestContinue);
        return;
      }
      this.writeBodyOrFail();
    } catch (error) {
      this.giveUp(error, undefined, false);
    }
  }

  override connectionDetail(): string | undefined {
    if (this.req?.socket) return undefined;
    return `The request was still waiting for a free socket (${this.describeQueue()}).`;
  }

  override describeQueue(): string {
    return describeAgentQueue(this.requestPlan.agent, this.requestPlan.agentGate);
  }

  /** DeadlineOwner: the core's deadline node, or this request's socket-usage window (`SocketUsageWarning`). */
  override onDeadline(kind: DeadlineKind, now: number): void {
    if (kind !== DeadlineKind.Warning) super.onDeadline(kind, now);
    else if (!this.settled && !this.isFinished) this.host.onWarningWindow(this);
  }

  /**
   * A deadline expired: the continue wait sends the body, a request timeout without `throwOnRequestTimeout` only
   * warns, the others reject with their rule's error (acquisition and request timeouts destroy the Node request).
   */
  protected override deadlineExpired(kind: DeadlineKind, ms: number, now: number): void {
    const req = this.req;
    if (kind === DeadlineKind.UnreadBody) {
      // The response is destroyed with the error: it fails the body, and `'close'` finishes the request.
      const res = this.res;
      if (res !== undefined && !res.destroyed) {
        this.notedOutcome ??= "timed_out";
        res.destroy(this.deadlineError(kind, ms, now));
      }
      return;
    }
    if (this.settled || (req === undefined && this.listTag === 0)) return;
    if (kind === DeadlineKind.Continue) {
      if (req !== undefined && !req.destroyed && !this.res) this.writeBodyOrFail();
      return;
    }
    if (kind === DeadlineKind.Request && !this.requestPlan.requestTimeoutThrows) {
      guardedWarn(
        this.requestPlan.logger ?? console,
        `${requestTimeoutMessage(PACKAGE_PREFIX, ms, false)} ${REQUEST_TIMEOUT_HINT}`
      );
      return;
    }
    const error = this.deadlineError(kind, ms, now);
    if (error !== undefined)
      this.giveUp(error, "timed_out", kind === DeadlineKind.Acquire || kind === DeadlineKind.Request);
  }

  fail(error: Error, outcome: RequestOutcome): void {
    this.giveUp(error, outcome === "aborted" || outcome === "timed_out" ? outcome : undefined, false);
  }

  protected wireFacts(): WireFacts {
    const res = this.res;
    const headers = this.httpRequest.headers;
    return {
      scheme: this.requestPlan.isSSL ? "https" : "http",
      method: this.req?.method ?? this.httpRequest.method,
      statusCode: res?.statusCode,
      protocolVersion: "1.1",
      requestBodySize: this.req?.getHeader("content-length") ?? headers["content-length"] ?? headers["Content-Length"],
      responseBodySize: res?.headers["content-length"],
      // After a noted outcome, Node's errors ("socket hang up") follow from the handler's destroy: not named.
      error: this.notedOutcome === undefined ? res?.errored : undefined,
    };
  }

  get idleLimitMs(): number {
    return this.requestPlan.socketIdleMs as number;
  }

  onIdle(): void {
    const req = this.req;
    if (req === undefined || this.isFinished) return;
    const res = this.res;
    if (res?.complete) {
      req.socket?.destroy();
      return;
    }
    const plan = this.requestPlan;
    const error = socketIdleTimeoutError(PACKAGE_PREFIX, plan.socketIdleMs, plan.socketTimeoutIsServiceDefault);
    res?.destroy(error);
    this.giveUp(error, "timed_out", false);
  }

  /** The handler gives up: notes why, leaves the agent queue, destroys, rejects; finishes now if no `'close'` comes. */
  private giveUp(error: unknown, outcome: "aborted" | "timed_out" | undefined, destroyWithError: boolean): void {
    if (outcome !== undefined) this.notedOutcome ??= outcome;
    const req = this.req;
    let noClose = req === undefined;
    if (req !== undefined) {
      noClose = !req.socket && leaveAgentQueue(this.requestPlan.agent, req);
      if (destroyWithError) req.destroy(error as Error);
      else req.destroy();
    }
    this.reject(error);
    if (noClose) this.finish();
  }

  /** Handler `destroy()`: rejects with `HandlerDestroyedError`, finishes now; a queued request opens no connection. */
  destroyByHandler(): void {
    if (this.isFinished) return;
    const req = this.req;
    const queued = req === undefined ? this.listTag !== 0 : !req.socket && leaveAgentQueue(this.requestPlan.agent, req);
    const error = handlerDestroyedError(
      PACKAGE_PREFIX,
      queued ? `while it was waiting for a free socket (${this.describeQueue()})` : "while the request was in flight"
    );
    this.notedOutcome ??= "aborted";
    if (req !== undefined) {
      if (this.res !== undefined) req.socket?.destroy();
      else req.destroy(error);
    }
    this.finish(error);
  }

  /** Rejects once (the core's `rejectWith`); the socket-usage window no longer matters. */
  reject(error: unknown): void {
    if (this.settled) return;
    this.rejectWith(error, "failed");
    this.host.requestSettled(this);
  }

  resolve(value: unknown, now: number): void {
    if (this.settled) return;
    this.resolveWith(value, now);
    this.host.requestSettled(this);
  }

  /** The single way out (idempotent): HTTP/1's own counting, the core's `finish()`, then the host's release. */
  override finish(error?: unknown): void {
    if (this.isFinished) return;
    // The error is built only when it will be used (an error's stack trace is costly).
    const unsettled = this.settled
      ? undefined
      : ((error as Error | undefined) ?? closedBeforeResponseError(PACKAGE_PREFIX));
    const monitor = this.monitor;
    const counted = monitor !== undefined && !monitor.coreDestroyed;
    // One clock reading for the release counted and the socket's expiry (the host's sweep).
    const now = counted || this.requestPlan.swept ? timing.now() : 0;
    if (counted) this.countEnd(now);
    super.finish("failed", unsettled);
    this.host.requestFinished(this, now);
  }

  writeBodyOrFail(): void {
    try {
      const request = this.httpRequest;
      writeBody(this.req!, request.body, request.headers, PACKAGE_PREFIX);
    } catch (error) {
      // Upstream rejects but leaves the request open; destroying it frees the socket too.
      this.giveUp(error, undefined, false);
    }
  }

  /** TCP connected at `now`: the inactivity watch (`socketTimeout`) starts. */
  connected(socket: Socket, now: number): void {
    if (this.requestPlan.socketIdleMs && !this.isFinished && !this.req?.destroyed)
      this.host.watchIdle(this, socket, now);
  }

  readMore(): void {
    if (!this.resPaused) return;
    this.resPaused = false;
    const res = this.res as (IncomingMessage & { _read(size: number): void }) | undefined;
    // IncomingMessage's own `_read`: resumes the socket the parser stopped.
    if (res !== undefined && !res.destroyed) res._read(0);
  }

  /** The caller destroyed the body before its end: so is the response (frees the socket). */
  bodyDestroyed(error: Error | null): void {
    if (!bodyOpen(this)) return;
    const res = this.res as IncomingMessage;
    if (error === null) res.destroy();
    else res.destroy(error);
  }

  protected override releaseCollectedBody(): void {
    this.res?.destroy();
  }

  // Telemetry: the request's phases counted on the handler's monitor.

  /** Counted on the handler's monitor from now on (its first counting site), if telemetry is on. */
  private track(): boolean {
    const monitor = this.host.hostMonitor;
    if (monitor === undefined || monitor.coreDestroyed) return false;
    this.monitor = monitor;
    this.telemetry = this.host.originOf(monitor, this.originKey);
    return true;
  }

  /** Queued in the gate at `start()`: counted as started and queued (under its gate key's agent name). */
  private countQueued(now: number): void {
    this.countStarted();
    const link = this.linkUnder(this.monitor!, this.telemetry!, this.gateKey!.name);
    if (link !== undefined) {
      link.gateQueued++;
      this.gateCounted = true;
    }
    this.markQueued(this.telemetry!, now);
  }

  /** Its Node request was just created: counted now unless gated (then it leaves the gate's count). */
  private countDispatched(req: ClientRequest, now: number): void {
    if (this.monitor !== undefined) {
      if (this.gateCounted) {
        this.gateCounted = false;
        this.link!.gateQueued--;
      }
      return;
    }
    if (!this.track()) return;
    if (this.requestPlan.oneOffAgent) {
      attachUnpooledRequest(this);
      return;
    }
    this.countStarted();
    const key = this.gateKey;
    if (key === undefined) return;
    const o = this.telemetry!;
    const link = this.linkUnder(this.monitor!, o, key.name);
    const queue = link === undefined ? undefined : agentMaps(link.agent).requests[link.name];
    if (queue !== undefined && queue.length !== 0 && queue[queue.length - 1] === req) this.markQueued(o, now);
  }

  /** The origin's link for the agent name `name` (the origin's last one, else looked up or created). */
  private linkUnder(monitor: Http1PoolMonitor, o: OriginState, name: string): PoolLink | undefined {
    const agent = this.requestPlan.agent;
    o.lastAgent = agent;
    const last = o.lastQueueLink;
    const link =
      last !== undefined && last.agent === agent && last.name === name
        ? last
        : monitor.originLinks.link(o, agent, name);
    if (link !== undefined) o.lastQueueLink = link;
    return (this.link = link);
  }

  private markQueued(o: OriginState, now: number): void {
    this.isQueued = true;
    o.queuedTracked++;
    this.enterQueue(now);
  }

  private leaveQueue(o: OriginState): void {
    this.isQueued = false;
    if (this.gateCounted) {
      this.gateCounted = false;
      this.link!.gateQueued--;
    }
    o.queueShrank(--o.queuedTracked);
  }

  /** `'socket'`: acquired after its wait; a socket first seen is adopted by the monitor (connection telemetry). */
  countSocket(monitor: Http1PoolMonitor, socket: Socket, now: number): void {
    if (this.everHeld || monitor.coreDestroyed) return;
    let reused = true;
    if (!this.isUnpooled) {
      const o = this.telemetry!;
      if (this.isQueued) this.leaveQueue(o);
      reused = takeSocket(monitor, o, socket, now, this, this.link, this.requestPlan.agent);
    }
    // An unpooled request is not counted by the core (never `countStarted`): this only times its connect.
    this.countAcquired(now, reused);
  }

  /** Its end, before the core counts it (`finish()`): its outcome, and what only HTTP/1 counts. */
  private countEnd(now: number): void {
    if (this.isUnpooled) {
      this.outcome = unpooledClosed(this);
      return;
    }
    this.outcome = outcomeOf(this);
    if (this.isQueued) this.leaveQueue(this.telemetry!);
    this.countReleased(now);
    const ss = this.socketState;
    if (ss !== undefined) {
      if (ss.link !== undefined) ss.link.linkCompletions++;
      ss.lastOutcome = this.notedOutcome;
      if (ss.current === this) ss.current = undefined;
    }
  }
}

function onResponse(this: ClientRequest, res: IncomingMessage): void {
  const state: InFlightRequest = (this as any)[kState];
  const monitor = state.monitor;
  const lifetime = state.requestPlan.lifetimeMs;
  // One clock reading for telemetry, the socket's age and the deadlines' phase.
  const now = monitor !== undefined || lifetime || state.plan.entries.length !== 0 ? timing.now() : 0;
  state.res = res;
  if (monitor !== undefined && !state.isUnpooled && !monitor.coreDestroyed) {
    state.responseAt = state.progressAt = now;
    state.seenProgress = res.socket?.bytesRead ?? 0;
  }
  const socket = this.socket;
  if (lifetime && socket && socketAge(socket, now) >= lifetime && this.shouldKeepAlive) {
    // Too old to reuse: Node closes it when this response ends instead of returning it to the pool.
    this.shouldKeepAlive = false;
    state.host.socketClosedByLimit(socket, "max_lifetime");
  }
  if (state.settled) return;
  (res as any)[kState] = state;
  res.push = pushResponse;
  res.on("error", onResponseError);
  const body = openResponseBody(state);
  if (state.plan.unreadBodyIndex >= 0) watchBodyRead(body, state);
  const response = new HttpResponse({
    statusCode: res.statusCode || -1,
    reason: res.statusMessage,
    headers: getTransformedHeaders(res.headers),
    body,
  });
  state.resolve({ response }, now);
}

const protoPush = Readable.prototype.push;

/** The parser's `push` (see the header); at the end, the message is ended and read so it emits `'end'`. */
function pushResponse(this: IncomingMessage, chunk: Buffer | null): boolean {
  const state: InFlightRequest = (this as any)[kState];
  if (chunk !== null) {
    if (pushBody(state, chunk)) return true;
    state.resPaused = true;
    return false;
  }
  endResponseBody(state);
  protoPush.call(this, null);
  this.read(0);
  return false;
}

/** The response failed (the socket closed mid-body, a deadline, the handler's `destroy()`): so does the body. */
function onResponseError(this: IncomingMessage, error: Error): void {
  failSourceBody((this as any)[kState], error);
}

function onRequestError(this: ClientRequest, error: NodeJS.ErrnoException): void {
  const state: InFlightRequest = (this as any)[kState];
  state.hasErrored = true;
  if (state.settled) return;
  state.reject(relabelSocketError(error));
}

function onRequestContinue(this: ClientRequest): void {
  const state: InFlightRequest = (this as any)[kState];
  if (!state.deadlineArmed(DeadlineKind.Continue)) return;
  state.endDeadline(DeadlineKind.Continue);
  if (!this.destroyed && !state.res) state.writeBodyOrFail();
}

function onRequestSocket(this: ClientRequest, socket: Socket): void {
  const state: InFlightRequest = (this as any)[kState];
  const plan = state.requestPlan;
  const monitor = state.monitor;
  const connecting = socket.connecting;
  // One clock reading, only if telemetry, the age stamp, the idle watch or a deadline wants one.
  const now =
    monitor !== undefined || plan.lifetimeMs || (!connecting && plan.socketIdleMs) || state.plan.entries.length !== 0
      ? timing.now()
      : 0;
  if (monitor !== undefined) state.countSocket(monitor, socket, now);
  state.enterPhase(RequestPhase.Acquired, now);
  enableTcpKeepAlive(socket, plan.agent);
  if (plan.lifetimeMs) stampSocket(socket, now);
  if (connecting) {
    connectingFor.set(socket, state);
    socket.once("connect", onSocketConnected);
    if (plan.isSSL) socket.once("secureConnect", onSocketSecureConnected);
  } else {
    state.connected(socket, now);
    state.enterPhase(RequestPhase.Connected, now);
  }
}

/** TCP connected: timed for telemetry; the inactivity watch starts (it covers a stalled TLS handshake too). */
function onSocketConnected(this: Socket): void {
  const state = connectingFor.get(this);
  if (state === undefined) return;
  const now = timing.now();
  const monitor = state.monitor;
  if (monitor !== undefined) {
    const ss = socketStateOf(this);
    if (ss !== undefined && ss.core === monitor) ss.onConnect(now);
    else if (state.isUnpooled && !monitor.coreDestroyed)
      state.telemetry!.unpooledCounters?.connect.record(now - state.heldSince);
  }
  if (state.req?.socket !== this) return;
  state.connected(this, now);
  if (!state.requestPlan.isSSL) {
    connectingFor.delete(this);
    state.enterPhase(RequestPhase.Connected, now);
  }
}

function onSocketSecureConnected(this: Socket): void {
  const state = connectingFor.get(this);
  connectingFor.delete(this);
  if (state === undefined) return;
  const now = timing.now();
  const ss = socketStateOf(this);
  if (ss !== undefined && ss.core === state.monitor) ss.onSecureConnect(now);
  if (state.req?.socket === this) state.enterPhase(RequestPhase.Connected, now);
}

/** The Node request closed: the common way out. */
function onRequestClose(this: ClientRequest): void {
  ((this as any)[kState] as InFlightRequest).finish();
}
