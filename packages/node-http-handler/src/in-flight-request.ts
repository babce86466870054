/**
 * InFlightRequest: the state of one `handle()` call, from `start()` to its single way out, `finish()`.
 *
 * States and the one way out:
 *
 *   start() ─┬─► dispatched ─'socket'─► assigned ─connect/secureConnect─► connected ─'response'─► responded
 *            │   (Node request created;                                                      │ settle(resolve)
 *            │    queued in agent.requests, or connecting)                                    ▼
 *            └─► gated (queued in the handler's AgentGate: no Node     body streams to the caller
 *                request, body not read) ─slot freed─► dispatched
 *   any state ── error, abort, deadline, body write failure ─► settle(reject)
 *
 *   'close' │ left the gate or the agent queue (abort / timeout while queued) │ handler destroy() │ http.request threw
 *          └──────────────────────────────► finish() ─► finished (terminal)
 *
 * Deadlines and the abort listener are armed at `start()`, so every clock runs from `handle()` whether the request
 * waits in the gate or not; while gated (`req` undefined) each of them still acts and ends it through `finish()`,
 * which unlinks it from the gate in O(1). `connectionTimeout` of a request dispatched at once is armed right after
 * its Node request is created (from the same `beganAt`), and only if the agent did not hand it a free (connected)
 * socket (`req.reusedSocket`): on a warm pool it is never armed.
 *
 * Telemetry: with the handler's monitor on, the request counts itself on it (`TelemetryCore`), from its own phases:
 * started and queued where the gate queues it or at dispatch, acquired at `'socket'`, its body's progress from
 * `'response'`, released and finished in `finish()`. Its fields below are what the monitor's reading reads of it
 * (ages, unread bodies: the runtime walks its live list for them); a socket first seen gets the monitor's
 * `SocketState` (`adoptSocket()`), whose connect this request's own listeners time.
 *
 * `settle()` resolves or rejects the promise once and cancels the deadlines that only matter until then.
 * `finish()` is idempotent and owns every other release: it settles first if needed (a request never ends with its
 * promise pending), cancels every deadline, removes the abort listener and hands the request back to the
 * `RequestHost` (`requestFinished`: idle watch, warning timer, monitor accounting, the one in-flight count). A request
 * that leaves the gate or the agent queue never emits `'close'` (see `agent-queue.ts`), so that path calls `finish()`
 * itself.
 *
 * Allocations per request: this object, the Node options object and path string built by the handler (kept here
 * while gated, with the request function, and dropped at dispatch; the
 * `RequestPlan` is shared, see `request-plan.ts`; the origin string is memoised), one
 * `Deadline` node per configured deadline (up to five; nodes are reused, arming allocates nothing), the promise and
 * its resolvers, and error objects on failure paths only. Node listeners are module-level functions that find the
 * state through a symbol on the request (`this[kState]`); the abort signal gets the state itself as an
 * EventListener object (`handleEvent`). Closures: the promise executor (one per request), one for a legacy signal
 * without `addEventListener` (`onabort`), one error forwarder for a `Readable` body (`write-body.ts`) plus whatever
 * its piping creates. No native timer per request, except in
 * `socketMonitor: "per-request"` mode (upstream's warning timer, on purpose).
 */
import type { Http1PoolMonitor } from "@sockeye/pool-monitor";
import {
  acquisitionTimeoutError,
  adoptSocket,
  agentMaps as importedAgentMaps,
  assertNever,
  attachUnpooledRequest,
  buildAbortError,
  closedBeforeResponseError,
  connectionTimeoutError,
  Deadline as ImportedDeadline,
  DeadlineKind as ImportedDeadlineKind,
  type DeadlineOwner,
  explainRefusal,
  type FinishedHttp1Request,
  guardedWarn,
  handlerDestroyedError,
  httpRequestFinishedEvent,
  type OriginState,
  outcomeOf as importedOutcomeOf,
  type PoolLink,
  REQUEST_TIMEOUT_HINT,
  relabelSocketError,
  type ResponseProgress,
  requestFinishedChannel as importedFinishedChannel,
  requestTimeoutError,
  requestTimeoutMessage,
  type SocketState,
  socketIdleTimeoutError,
  socketStateOf as importedSocketStateOf,
  timing as importedTiming,
  type UnpooledRequest,
  unpooledClosed,
  writeBody as importedWriteBody,
} from "@sockeye/pool-monitor/internal";
import { type HttpRequest, HttpResponse as ImportedHttpResponse } from "@smithy/protocol-http";
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { GatedRequest, GateKey } from "./agent-gate";
import { describeAgentQueue, leaveAgentQueue } from "./agent-queue";
import { MIN_CONTINUE_WAIT_MS, PACKAGE_PREFIX } from "./constants";
import { getTransformedHeaders } from "./get-transformed-headers";
import type { IdleWatcher } from "./idle-watch-list";
import type { RequestHost } from "./request-host";
import type { RequestPlan } from "./request-plan";
import { socketAge, stampSocket } from "./socket-lifecycle";
import type { WarnedRequest } from "./socket-usage-warning";
import { enableTcpKeepAlive } from "./tcp-keep-alive";

// Bound once: in this package's CommonJS build every use of another package's export is a getter call.
const Deadline = ImportedDeadline;
type Deadline<K> = ImportedDeadline<K>;
const DeadlineKind = ImportedDeadlineKind;
type DeadlineKind = ImportedDeadlineKind;
const HttpResponse = ImportedHttpResponse;
const agentMaps = importedAgentMaps;
const outcomeOf = importedOutcomeOf;
const requestFinishedChannel = importedFinishedChannel;
const socketStateOf = importedSocketStateOf;
const timing = importedTiming;
const writeBody = importedWriteBody;

const kState = Symbol("sockeye.inFlightRequest");
const kConnectingFor = Symbol("sockeye.connectingFor");

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
  implements
    DeadlineOwner<DeadlineKind>,
    IdleWatcher,
    WarnedRequest,
    GatedRequest,
    FinishedHttp1Request,
    ResponseProgress,
    UnpooledRequest
{
  /** The promise has been resolved or rejected. */
  hasSettled = false;
  /** `finish()` ran: nothing of this request is registered anywhere any more. */
  isFinished = false;
  req: ClientRequest | undefined = undefined;
  /** `timing.now()` ms at `start()`. */
  beganAt = 0;
  private resolveFn: Settle | undefined = undefined;
  private rejectFn: Settle | undefined = undefined;
  connection: Deadline<DeadlineKind> | undefined = undefined;
  private request: Deadline<DeadlineKind> | undefined = undefined;
  continueWait: Deadline<DeadlineKind> | undefined = undefined;
  acquireDeadline: Deadline<DeadlineKind> | undefined = undefined;
  usageWarning: Deadline<DeadlineKind> | undefined = undefined;
  warningTimer: ReturnType<typeof setTimeout> | undefined = undefined;
  // IdleWatcher fields (the host's idle watch, `socketTimeout`).
  idleDeadline: Deadline<IdleWatcher> | undefined = undefined;
  idleOn: Socket | undefined = undefined;
  // The host's live list.
  liveNext: InFlightRequest | undefined = undefined;
  livePrev: InFlightRequest | undefined = undefined;
  /** The `onabort` handler installed on a legacy signal (no `addEventListener`); cleared by `finish()`. */
  private legacyOnAbort: (() => void) | undefined = undefined;
  // GatedRequest fields (the plan's `AgentGate`): the key counted under and, while queued, the FIFO links.
  gateKey: GateKey | undefined = undefined;
  inGateQueue = false;
  gatePrev: InFlightRequest | undefined = undefined;
  gateNext: InFlightRequest | undefined = undefined;
  /** Kept from `start()` until the Node request is created (at once, or when the gate dispatches it). */
  private requestFunc: ((options: object) => ClientRequest) | undefined = undefined;
  nodeOptions: NodeRequestOptions | undefined = undefined;
  res: IncomingMessage | undefined = undefined;
  /** The Node request emitted `'error'`. */
  hasErrored = false;
  /** Why the handler gave up on it (the first reason wins): counted so, not as failed. */
  notedOutcome: "aborted" | "timed_out" | undefined = undefined;
  /** The error the promise rejected with (`undefined` while pending or resolved); named by `request:finished`. */
  trackedError: unknown = undefined;
  // Telemetry: what the monitor counts and reads of the request (see the header); `monitor` unset = not counted.
  monitor: Http1PoolMonitor | undefined = undefined;
  originState: OriginState | undefined = undefined;
  /** Its agent name's link in the monitor (the gate key's name), once known. */
  link: PoolLink | undefined = undefined;
  /** Sent on the one-off 100-continue agent: counted in its origin's `unpooled` block only. */
  isUnpooled = false;
  /** Waiting for a socket: in the gate, in `agent.requests`, or dispatched without one yet. */
  isQueued = false;
  /** Counted in its link's `gateQueued` (waiting in the gate). */
  private gateCounted = false;
  /** `timing.now()` ms at its socket and at its response (-1: none yet). */
  acquiredAt = -1;
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
    readonly abortSignal: any
  ) {}

  /** The plan's agent. */
  get agent(): Agent {
    return this.requestPlan.agent;
  }

  /** For `request:finished`: the method (as Node sent it, once the Node request exists). */
  get trackedMethod(): string {
    return this.req?.method ?? this.httpRequest.method;
  }

  /** For `request:finished`: the request's `Content-Length`. */
  get requestBodySize(): unknown {
    const headers = this.httpRequest.headers;
    return this.req?.getHeader("content-length") ?? headers["content-length"] ?? headers["Content-Length"];
  }

  /**
   * Promise executor body: arms the deadlines and the abort listener (the clocks start now, whether or not the request
   * has to wait in the handler's gate), then creates the Node request now or queues it in the gate. Never throws.
   */
  start(
    resolve: Settle,
    reject: Settle,
    requestFunc: (options: object) => ClientRequest,
    options: NodeRequestOptions
  ): void {
    this.resolveFn = resolve;
    this.rejectFn = reject;
    this.requestFunc = requestFunc;
    this.nodeOptions = options;
    const now = (this.beganAt = timing.now());
    const dispatchNow = this.host.requestStarted(this, now);
    try {
      this.arm(now);
    } catch (error) {
      this.finish(error);
      return;
    }
    // `connectionTimeout`: a gated request is timed from now on (from `beganAt`); one dispatched now, by `dispatch()`.
    if (dispatchNow) this.dispatch(now);
    else if (this.requestPlan.connectWaitMs) this.armConnection();
  }

  /** GatedRequest: the handler's gate lets the request go. */
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
      // e.g. a header value with a newline (Node refuses it, worded as every handler words it): no Node request, no
      // 'close' will come.
      this.finish(explainRefusal(error, this.httpRequest.headers, PACKAGE_PREFIX));
      return;
    }
    // `connectionTimeout` of a request dispatched at `start()` is armed now, from `beganAt`, unless the agent handed
    // it one of its free sockets, which are connected: Node's `Agent` sets `reusedSocket` synchronously in
    // `addRequest()` when it does (Node 20–24), so a request that gets a new socket or waits in `agent.requests` is
    // timed as before. An agent that does not set it (its own `addRequest`) or an intercepted `http.request` gets
    // the deadline. `0` or `undefined` means off.
    if (this.requestPlan.connectWaitMs && this.connection === undefined && req.reusedSocket !== true)
      this.armConnection();
    this.req = req;
    (req as any)[kState] = this;
    try {
      // `on`, not `once`: each of these fires once anyway, and `once` allocates a wrapper per registration.
      req.on("response", onResponse);
      req.on("error", onRequestError);
      req.on("socket", onRequestSocket);
      req.on("close", onRequestClose);
      host.requestCreated(this, req);
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

  /**
   * The abort listener and the deadlines, from `start()` (before the Node request exists), but `connectionTimeout`:
   * `start()` arms it for a request the gate queues; for one dispatched now, `dispatch()` arms it right after (the
   * same clock: from `beganAt`) unless the agent handed the request one of its free sockets (connected: the usual
   * case of a warm pool). (Kept out of this function: a branch only the gated requests take would deoptimise it the
   * first time a burst queues.)
   */
  private arm(now: number): void {
    const plan = this.requestPlan;
    const host = this.host;
    const signal = this.abortSignal;
    if (signal) {
      if (typeof signal.addEventListener === "function") signal.addEventListener("abort", this, { once: true });
      else signal.onabort = this.legacyOnAbort = () => this.handleEvent();
    }

    const scheduler = host.hostScheduler;
    if (plan.requestMs) {
      this.request = new Deadline(this, DeadlineKind.Request);
      scheduler.arm(this.request, now, plan.requestMs);
    }
    if (plan.acquireMs) {
      this.acquireDeadline = new Deadline(this, DeadlineKind.Acquire);
      scheduler.arm(this.acquireDeadline, now, plan.acquireMs);
    }
    if (plan.expectContinue && !plan.callerAgent) {
      // Upstream's race: send the body on '100 Continue' or after max(6 s, requestTimeout); never on response/error.
      this.continueWait = new Deadline(this, DeadlineKind.Continue);
      scheduler.arm(this.continueWait, now, Math.max(MIN_CONTINUE_WAIT_MS, plan.requestMs ?? MIN_CONTINUE_WAIT_MS));
    }
  }

  /** EventListener interface: the abort signal fired. */
  handleEvent(): void {
    if (this.isFinished) return;
    this.giveUp(buildAbortError(this.abortSignal), "aborted", false);
  }

  onDeadline(kind: DeadlineKind, now: number): void {
    // `req` is undefined while the request waits in the handler's gate (every deadline acts then too).
    const req = this.req;
    if (this.isFinished || (req === undefined && !this.inGateQueue)) return;
    switch (kind) {
      case DeadlineKind.Connection:
        if (!this.hasSettled) {
          const plan = this.requestPlan;
          const detail = req?.socket
            ? undefined
            : `The request was still waiting for a free socket (${describeAgentQueue(plan.agent, plan.agentGate)}).`;
          this.giveUp(connectionTimeoutError(PACKAGE_PREFIX, plan.connectWaitMs, detail), "timed_out", false);
        }
        return;
      case DeadlineKind.Request:
        if (this.hasSettled) return;
        if (this.requestPlan.requestTimeoutThrows) {
          this.giveUp(requestTimeoutError(PACKAGE_PREFIX, this.requestPlan.requestMs), "timed_out", true);
        } else {
          guardedWarn(
            this.requestPlan.logger ?? console,
            `${requestTimeoutMessage(PACKAGE_PREFIX, this.requestPlan.requestMs, false)} ${REQUEST_TIMEOUT_HINT}`
          );
        }
        return;
      case DeadlineKind.Continue:
        if (req !== undefined && !req.destroyed && !this.res) this.writeBodyOrFail();
        return;
      case DeadlineKind.Acquire:
        if (!this.hasSettled && !req?.socket) {
          const plan = this.requestPlan;
          const error = acquisitionTimeoutError(
            PACKAGE_PREFIX,
            plan.acquireMs,
            now - this.beganAt,
            "socket",
            describeAgentQueue(plan.agent, plan.agentGate)
          );
          this.giveUp(error, "timed_out", true);
        }
        return;
      case DeadlineKind.Warning:
        if (!this.hasSettled) this.host.onWarningWindow(this);
        return;
      case DeadlineKind.SocketIdle:
      case DeadlineKind.StreamIdle:
        return; // Not armed by HTTP/1.1.
      default:
        assertNever(kind);
    }
  }

  /** IdleWatcher: the `socketTimeout` limit, ms. */
  get idleLimitMs(): number {
    return this.requestPlan.socketIdleMs as number;
  }

  /** IdleWatcher: `socketTimeout` expired with no byte moved on the socket. */
  onIdleTimeout(): void {
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

  /**
   * The handler gives up on the request: tells telemetry why, takes it out of the agent queue if it is still there
   * (a request still in the handler's gate has no Node request: `finish()` unlinks it),
   * destroys it (`destroyWithError`: the error is also the Node request's, as upstream), rejects the promise (no-op
   * if already settled), and finishes it now when no `'close'` will come.
   */
  private giveUp(error: unknown, outcome: "aborted" | "timed_out" | undefined, destroyWithError: boolean): void {
    if (outcome !== undefined) this.notedOutcome ??= outcome;
    const req = this.req;
    let noClose = req === undefined;
    if (req !== undefined) {
      noClose = !req.socket && leaveAgentQueue(this.requestPlan.agent, req);
      if (destroyWithError) req.destroy(error as Error);
      else req.destroy();
    }
    this.settle(error, true);
    if (noClose) this.finish();
  }

  /**
   * Handler `destroy()`: rejects with `HandlerDestroyedError` (unless settled) and finishes now. A queued request
   * leaves the agent queue first, so Node never opens a connection for it; a response body still streaming fails
   * as upstream's does when its agent is destroyed (the socket is destroyed; the body stream errors).
   */
  destroyByHandler(): void {
    if (this.isFinished) return;
    const req = this.req;
    const queued = req === undefined ? this.inGateQueue : !req.socket && leaveAgentQueue(this.requestPlan.agent, req);
    const error = handlerDestroyedError(
      PACKAGE_PREFIX,
      queued
        ? `while it was waiting for a free socket (${describeAgentQueue(this.requestPlan.agent, this.requestPlan.agentGate)})`
        : "while the request was in flight"
    );
    this.notedOutcome ??= "aborted";
    if (req !== undefined) {
      if (this.res !== undefined) req.socket?.destroy();
      else req.destroy(error);
    }
    this.finish(error);
  }

  /** Resolves or rejects once; cancels every deadline that only matters until settlement. */
  settle(value: unknown, isError: boolean): void {
    if (this.hasSettled) return;
    this.hasSettled = true;
    this.cancelDeadlines();
    this.host.requestSettled(this);
    if (isError) this.trackedError = value;
    const fn = isError ? this.rejectFn : this.resolveFn;
    this.resolveFn = this.rejectFn = undefined;
    fn?.(value);
  }

  /**
   * The single way out (idempotent): settles if still pending (with `error`, or "closed before a response"),
   * removes the abort listener (on a legacy signal: clears `onabort` if it is still the one `arm()` installed, so the
   * signal does not keep this request alive) and releases everything the host holds for the request.
   */
  finish(error?: unknown): void {
    if (this.isFinished) return;
    this.isFinished = true;
    if (!this.hasSettled) this.settle(error ?? closedBeforeResponseError(PACKAGE_PREFIX), true);
    else this.cancelDeadlines();
    const signal = this.abortSignal;
    if (signal) {
      if (typeof signal.removeEventListener === "function") signal.removeEventListener("abort", this);
      const legacy = this.legacyOnAbort;
      if (legacy !== undefined) {
        this.legacyOnAbort = undefined;
        if (signal.onabort === legacy) signal.onabort = null;
      }
    }
    this.host.requestFinished(this);
  }

  private cancelDeadlines(): void {
    const scheduler = this.host.hostScheduler;
    if (this.connection) scheduler.disarm(this.connection);
    if (this.request) scheduler.disarm(this.request);
    if (this.acquireDeadline) scheduler.disarm(this.acquireDeadline);
    if (this.continueWait) scheduler.disarm(this.continueWait);
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

  /**
   * The socket is connected at the TCP level: start the inactivity watch (`socketTimeout`) from `now` (the caller's
   * `timing.now()` reading at the event, if it took one).
   */
  connected(socket: Socket, now?: number): void {
    if (this.requestPlan.socketIdleMs && !this.isFinished && !this.req?.destroyed) {
      this.host.watchIdle(this, socket, now ?? timing.now());
    }
  }

  /** Arms `connectionTimeout` from `beganAt` (the clock runs from `handle()` wherever it is armed). */
  armConnection(): void {
    const d = (this.connection ??= new Deadline(this, DeadlineKind.Connection));
    this.host.hostScheduler.arm(d, this.beganAt, this.requestPlan.connectWaitMs as number);
  }

  /** The connection is established (TCP, plus TLS for https): `connectionTimeout` no longer applies. */
  socketReady(): void {
    if (this.connection) this.host.hostScheduler.disarm(this.connection);
  }

  // ---- Telemetry: the request's phases counted on the handler's monitor -------------------------------------

  /** Queued in the gate under `name` at `start()`: counted as started and queued (under its agent name's link). */
  countQueued(monitor: Http1PoolMonitor, o: OriginState, name: string): void {
    this.monitor = monitor;
    this.originState = o;
    monitor.started(o);
    const link = this.linkUnder(monitor, o, name);
    if (link !== undefined) {
      link.gateQueued++;
      this.gateCounted = true;
    }
    this.markQueued(monitor, o);
  }

  /**
   * Its Node request `req` was just created: counted from now on if the gate did not queue it (queued if the agent
   * queued it, as it does when other users of a shared agent hold its sockets); it leaves the gate's count if it did.
   */
  countDispatched(monitor: Http1PoolMonitor, o: OriginState, req: ClientRequest): void {
    if (this.monitor !== undefined) {
      if (this.gateCounted) {
        this.gateCounted = false;
        this.link!.gateQueued--;
      }
      return;
    }
    this.monitor = monitor;
    this.originState = o;
    if (this.requestPlan.oneOffAgent) {
      this.isUnpooled = true;
      attachUnpooledRequest(this);
      return;
    }
    monitor.started(o);
    const key = this.gateKey;
    if (key === undefined) return;
    const link = this.linkUnder(monitor, o, key.name);
    const queue = link === undefined ? undefined : agentMaps(link.agent).requests[link.name];
    if (queue !== undefined && queue.length !== 0 && queue[queue.length - 1] === req) this.markQueued(monitor, o);
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

  private markQueued(monitor: Http1PoolMonitor, o: OriginState): void {
    this.isQueued = true;
    o.queuedTracked++;
    monitor.enqueued(o);
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
    if (this.acquiredAt >= 0 || monitor.coreDestroyed) return;
    this.acquiredAt = now;
    if (this.isUnpooled) return;
    const o = this.originState!;
    const wasQueued = this.isQueued;
    if (wasQueued) this.leaveQueue(o);
    let ss = socketStateOf(socket);
    let reused = true;
    if (ss === undefined) {
      ss = adoptSocket(monitor, o, socket, now);
      reused = !ss.opened;
      ss.link = this.link ?? monitor.originLinks.learnSocket(o, this.requestPlan.agent, socket);
    }
    if (ss.core === monitor) {
      ss.requests++;
      ss.current = this;
      this.socketState = ss;
    }
    monitor.acquired(o, now - this.beganAt, reused, wasQueued);
  }

  /** Its end (from `finish()`, `now`: the runtime's reading): released, finished, `request:finished`. */
  countClosed(now: number): void {
    const monitor = this.monitor!;
    if (monitor.coreDestroyed) return;
    if (monitor.wants(requestFinishedChannel)) monitor.emit(httpRequestFinishedEvent(this), requestFinishedChannel);
    if (this.isUnpooled) {
      unpooledClosed(this);
      return;
    }
    const o = this.originState!;
    if (this.isQueued) this.leaveQueue(o);
    monitor.finished(o, outcomeOf(this));
    if (this.acquiredAt < 0) return;
    monitor.released(o, now - this.acquiredAt);
    const ss = this.socketState;
    if (ss !== undefined) {
      if (ss.link !== undefined) ss.link.linkCompletions++;
      ss.lastOutcome = this.notedOutcome;
      if (ss.current === this) ss.current = undefined;
    }
  }
}

// ---- Node listeners: shared functions, `this` is the emitter ------------------------------------------------

function onResponse(this: ClientRequest, res: IncomingMessage): void {
  const state: InFlightRequest = (this as any)[kState];
  const monitor = state.monitor;
  const lifetime = state.requestPlan.lifetimeMs;
  // One clock reading for telemetry and the socket's age.
  const now = monitor !== undefined || lifetime ? timing.now() : 0;
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
  if (state.hasSettled) return;
  const response = new HttpResponse({
    statusCode: res.statusCode || -1,
    reason: res.statusMessage,
    headers: getTransformedHeaders(res.headers),
    body: res,
  });
  state.settle({ response }, false);
}

function onRequestError(this: ClientRequest, error: NodeJS.ErrnoException): void {
  const state: InFlightRequest = (this as any)[kState];
  state.hasErrored = true;
  if (state.hasSettled) return;
  // ECONNRESET / EPIPE / ETIMEDOUT become TimeoutErrors, as upstream relabels them.
  state.settle(relabelSocketError(error), true);
}

function onRequestContinue(this: ClientRequest): void {
  const state: InFlightRequest = (this as any)[kState];
  const deadline = state.continueWait;
  if (deadline === undefined || !deadline.armed) return;
  state.host.hostScheduler.disarm(deadline);
  if (!this.destroyed && !state.res) state.writeBodyOrFail();
}

function onRequestSocket(this: ClientRequest, socket: Socket): void {
  const state: InFlightRequest = (this as any)[kState];
  const plan = state.requestPlan;
  const monitor = state.monitor;
  const connecting = socket.connecting;
  // One clock reading for whatever wants one here: telemetry, the socket's age stamp, a connected socket's idle watch.
  const now = monitor !== undefined || plan.lifetimeMs || (!connecting && plan.socketIdleMs) ? timing.now() : 0;
  if (monitor !== undefined) state.countSocket(monitor, socket, now);
  const acquire = state.acquireDeadline;
  if (acquire) state.host.hostScheduler.disarm(acquire);
  enableTcpKeepAlive(socket, plan.agent);
  if (plan.lifetimeMs) stampSocket(socket, now);
  if (connecting) {
    (socket as any)[kConnectingFor] = state;
    socket.once("connect", onSocketConnected);
    if (plan.isSSL) socket.once("secureConnect", onSocketSecureConnected);
  } else {
    state.connected(socket, now);
    state.socketReady();
  }
}

/**
 * TCP connected: timed for telemetry; bytes can move, so the inactivity timeout starts (it covers a stalled TLS
 * handshake too).
 */
function onSocketConnected(this: Socket): void {
  const state: InFlightRequest | undefined = (this as any)[kConnectingFor];
  if (state === undefined) return;
  const now = timing.now();
  const monitor = state.monitor;
  if (monitor !== undefined) {
    const ss = socketStateOf(this);
    if (ss !== undefined && ss.core === monitor) ss.onConnect(now);
    else if (state.isUnpooled && !monitor.coreDestroyed)
      state.originState!.unpooledCounters?.connect.record(now - state.acquiredAt);
  }
  if (state.req?.socket !== this) return;
  state.connected(this, now);
  if (!state.requestPlan.isSSL) {
    (this as any)[kConnectingFor] = undefined;
    state.socketReady();
  }
}

/** TLS handshake done: the connection is established. */
function onSocketSecureConnected(this: Socket): void {
  const state: InFlightRequest | undefined = (this as any)[kConnectingFor];
  (this as any)[kConnectingFor] = undefined;
  const ss = socketStateOf(this);
  if (ss !== undefined && state !== undefined && ss.core === state.monitor) ss.onSecureConnect(timing.now());
  if (state !== undefined && state.req?.socket === this) state.socketReady();
}

/** The Node request closed: the common way out. */
function onRequestClose(this: ClientRequest): void {
  ((this as any)[kState] as InFlightRequest).finish();
}
