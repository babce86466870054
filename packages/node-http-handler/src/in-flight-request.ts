/**
 * InFlightRequest: the state of one `handle()` call, from the Node request's creation to its `close`.
 *
 * Hot-path shape: the state object is the only per-request allocation of the handler besides what Node and the
 * promise need. Node listeners are module-level functions that find the state through a symbol on the request
 * (`this[kState]`), the abort signal gets the state itself as an EventListener object (`handleEvent`), and every
 * deadline is a `Deadline` node on the handler's shared scheduler, created only for the concerns configured.
 * No closure and no native timer is created per request (except in `socketMonitor: "per-request"` mode, which
 * reproduces upstream's warning timer on purpose).
 *
 * Lifecycle:   handle() ─► start(): listeners, deadlines, body ─► 'socket' ─► connect/secureConnect ─► 'response'
 *              ─► settle (resolve) … body streams to the caller, idle watch still on … 'close' ─► finish()
 */
import type { HttpRequest } from "@smithy/protocol-http";
import { HttpResponse } from "@smithy/protocol-http";
import type { Logger } from "@smithy/types";
import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { buildAbortError } from "./build-abort-error";
import { MIN_CONTINUE_WAIT_MS, NODEJS_TIMEOUT_ERROR_CODES, PACKAGE_PREFIX } from "./constants";
import { Deadline, type DeadlineOwner } from "./deadline-scheduler";
import { getTransformedHeaders } from "./get-transformed-headers";
import type { HandlerRuntime } from "./handler-runtime";
import { socketAge, stampSocket } from "./socket-lifecycle";
import { timing } from "./timing";
import { writeBody } from "./write-body";

const kState = Symbol("sockeye.inFlightRequest");
const kConnectingFor = Symbol("sockeye.connectingFor");
const kKeepAliveSet = Symbol("sockeye.keepAliveSet");

/** Deadline kinds. @internal */
export enum DeadlineKind {
  Connection = 0,
  Request = 1,
  Continue = 2,
  Acquire = 3,
  Warning = 4,
}

type Settle = (value: any) => void;

/** Per-request values resolved by the handler before `start()`. @internal */
export interface RequestPlan {
  agent: Agent;
  /** `scheme://host:port`, the only request detail telemetry ever sees. */
  origin: string;
  isSSL: boolean;
  /** The agent is a one-off 100-continue agent (never monitored). */
  oneOffAgent: boolean;
  expectContinue: boolean;
  connectionTimeout: number | undefined;
  requestTimeout: number | undefined;
  throwOnRequestTimeout: boolean;
  socketTimeout: number | undefined;
  socketTimeoutIsServiceDefault: boolean;
  socketAcquisitionTimeout: number | undefined;
  connectionLifetime: number | undefined;
  logger: Logger | undefined;
  externalAgent: boolean;
}

/** @internal */
export class InFlightRequest implements DeadlineOwner {
  settled = false;
  req: ClientRequest | undefined = undefined;
  res: IncomingMessage | undefined = undefined;
  startedAt = 0;
  private resolveFn: Settle | undefined = undefined;
  private rejectFn: Settle | undefined = undefined;
  private connection: Deadline | undefined = undefined;
  private request: Deadline | undefined = undefined;
  continueWait: Deadline | undefined = undefined;
  acquire: Deadline | undefined = undefined;
  /** Shared-interval socket-usage window (interval mode) or upstream's native timer (per-request mode). */
  warning: Deadline | undefined = undefined;
  warningTimer: NodeJS.Timeout | undefined = undefined;
  // Idle watch (socketTimeout) on the runtime's list; sampled by the shared tick.
  idleNext: InFlightRequest | undefined = undefined;
  idlePrev: InFlightRequest | undefined = undefined;
  idleWatched = false;
  idleExpiring = false;
  /** The pool monitor tracks this request; its events are forwarded from the listeners below. */
  tracked = false;
  idleBytes = 0;
  idleSince = 0;

  constructor(
    readonly runtime: HandlerRuntime,
    readonly httpRequest: HttpRequest,
    readonly plan: RequestPlan,
    readonly abortSignal: any
  ) {}

  /** Promise executor body: creates the Node request and arms everything. */
  start(resolve: Settle, reject: Settle, requestFunc: (options: object) => ClientRequest, options: object): void {
    this.resolveFn = resolve;
    this.rejectFn = reject;
    const plan = this.plan;
    const runtime = this.runtime;
    const now = (this.startedAt = timing.now());
    if (!plan.oneOffAgent) runtime.beforeDispatch(plan.agent, now);
    let req: ClientRequest;
    try {
      req = requestFunc(options);
    } catch (error) {
      this.settle(error, true);
      return;
    }
    this.req = req;
    (req as any)[kState] = this;
    runtime.requestStarted(this);
    // `on`, not `once`: each of these fires once anyway, and `once` allocates a wrapper per registration. The
    // response listener is registered here rather than passed to request() for the same reason.
    req.on("response", onResponse);
    req.on("error", onRequestError);
    req.on("socket", onRequestSocket);
    req.on("close", onRequestClose);

    const signal = this.abortSignal;
    if (signal) {
      if (typeof signal.addEventListener === "function") signal.addEventListener("abort", this, { once: true });
      else signal.onabort = () => this.handleEvent();
    }

    const scheduler = runtime.scheduler;
    if (plan.connectionTimeout) {
      this.connection = new Deadline(this, DeadlineKind.Connection);
      scheduler.arm(this.connection, now, plan.connectionTimeout);
    }
    if (plan.requestTimeout) {
      this.request = new Deadline(this, DeadlineKind.Request);
      scheduler.arm(this.request, now, plan.requestTimeout);
    }
    if (plan.socketAcquisitionTimeout) {
      this.acquire = new Deadline(this, DeadlineKind.Acquire);
      scheduler.arm(this.acquire, now, plan.socketAcquisitionTimeout);
    }
    runtime.armWarning(this, now);

    if (plan.expectContinue && !plan.externalAgent) {
      // Upstream's race: send the body on '100 Continue' or after max(6 s, requestTimeout); never on response/error.
      this.continueWait = new Deadline(this, DeadlineKind.Continue);
      scheduler.arm(
        this.continueWait,
        now,
        Math.max(MIN_CONTINUE_WAIT_MS, plan.requestTimeout ?? MIN_CONTINUE_WAIT_MS)
      );
      req.once("continue", onRequestContinue);
      return;
    }
    this.writeBodyOrFail();
  }

  /** EventListener interface: the abort signal fired. */
  handleEvent(): void {
    this.runtime.noteOutcome(this, "aborted");
    this.req?.destroy();
    this.settle(buildAbortError(this.abortSignal), true);
  }

  onDeadline(kind: number, now: number): void {
    const req = this.req;
    if (req === undefined) return;
    switch (kind) {
      case DeadlineKind.Connection: {
        if (this.settled) return;
        const socket = req.socket;
        let message = `${PACKAGE_PREFIX} - the request socket did not establish a connection with the server within the configured timeout of ${this.plan.connectionTimeout} ms.`;
        if (!socket) {
          message += ` The request was still waiting for a free socket (${describeQueue(this.plan.agent)}).`;
        }
        this.runtime.noteOutcome(this, "timed_out");
        req.destroy();
        this.settle(Object.assign(new Error(message), { name: "TimeoutError" }), true);
        return;
      }
      case DeadlineKind.Request: {
        if (this.settled) return;
        const throwIt = this.plan.throwOnRequestTimeout;
        const message = `${PACKAGE_PREFIX} - [${throwIt ? "ERROR" : "WARN"}] a request has exceeded the configured ${this.plan.requestTimeout} ms requestTimeout.`;
        if (throwIt) {
          const error = Object.assign(new Error(message), { name: "TimeoutError", code: "ETIMEDOUT" });
          this.runtime.noteOutcome(this, "timed_out");
          req.destroy(error);
          this.settle(error, true);
        } else {
          (this.plan.logger ?? console)?.warn?.(
            `${message} Init client requestHandler with throwOnRequestTimeout=true to turn this into an error.`
          );
        }
        return;
      }
      case DeadlineKind.Continue:
        if (!req.destroyed && !this.res) this.writeBodyOrFail();
        return;
      case DeadlineKind.Acquire: {
        if (this.settled || req.socket) return;
        const waited = Math.round(now - this.startedAt);
        const error = Object.assign(
          new Error(
            `${PACKAGE_PREFIX} - the request waited ${waited} ms for a free socket (${describeQueue(this.plan.agent)}) and exceeded the configured socketAcquisitionTimeout of ${this.plan.socketAcquisitionTimeout} ms. Raise maxSockets, lower concurrency, or make sure response bodies are consumed.`
          ),
          { name: "TimeoutError", code: "ETIMEDOUT" }
        );
        this.runtime.noteOutcome(this, "timed_out");
        leaveAgentQueue(this.plan.agent, req);
        req.destroy(error);
        this.settle(error, true);
        return;
      }
      case DeadlineKind.Warning:
        if (!this.settled) this.runtime.onWarningWindow(this);
        return;
    }
  }

  /** Idle timeout (socketTimeout) expired with no byte moved on the socket. */
  onIdleTimeout(): void {
    const req = this.req;
    if (req === undefined) return;
    const res = this.res;
    if (res?.complete) {
      req.socket?.destroy();
      return;
    }
    const error = Object.assign(
      new Error(
        `${PACKAGE_PREFIX} - the request socket timed out after ${this.plan.socketTimeout} ms of inactivity (${this.plan.socketTimeoutIsServiceDefault ? "service default socket timeout" : "configured by client requestHandler"}).`
      ),
      { name: "TimeoutError" }
    );
    this.runtime.noteOutcome(this, "timed_out");
    res?.destroy(error);
    req.destroy();
    this.settle(error, true);
  }

  /** Resolves or rejects once; cancels every deadline that only matters until settlement. */
  settle(value: unknown, isError: boolean): void {
    if (this.settled) return;
    this.settled = true;
    const scheduler = this.runtime.scheduler;
    if (this.connection) scheduler.cancel(this.connection);
    if (this.request) scheduler.cancel(this.request);
    if (this.acquire) scheduler.cancel(this.acquire);
    if (this.continueWait) scheduler.cancel(this.continueWait);
    this.runtime.requestSettled(this);
    const fn = isError ? this.rejectFn : this.resolveFn;
    this.resolveFn = this.rejectFn = undefined;
    fn?.(value);
  }

  writeBodyOrFail(): void {
    const req = this.req!;
    try {
      writeBody(req, this.httpRequest.body);
    } catch (error) {
      // Upstream rejects but leaves the request open; destroying it frees the socket too.
      req.destroy();
      this.settle(error, true);
    }
  }

  /** The socket is connected at the TCP level: start the inactivity watch (`socketTimeout`). */
  connected(socket: Socket): void {
    if (this.plan.socketTimeout && !this.idleWatched && !this.req?.destroyed) this.runtime.watchIdle(this, socket);
  }

  /** The connection is established (TCP, plus TLS for https): `connectionTimeout` no longer applies. */
  socketReady(): void {
    if (this.connection) this.runtime.scheduler.cancel(this.connection);
  }
}

/**
 * Node keeps a destroyed queued request in `agent.requests` until a socket frees up; remove it now so the queue
 * (and every gauge built on it) reflects only live requests. O(queue length), on the timeout path only.
 */
function leaveAgentQueue(agent: Agent, req: ClientRequest): void {
  const requests = agent.requests;
  for (const key in requests) {
    const queue = requests[key];
    const index = queue ? queue.indexOf(req as any) : -1;
    if (index !== -1) {
      queue!.splice(index, 1);
      if (queue!.length === 0) delete (requests as Record<string, unknown>)[key];
      return;
    }
  }
}

function describeQueue(agent: Agent): string {
  let queued = 0;
  const requests = agent.requests;
  for (const key in requests) queued += requests[key]?.length ?? 0;
  return `maxSockets=${agent.maxSockets}, ${queued} requests queued`;
}

// ---- Node listeners: shared functions, `this` is the emitter ------------------------------------------------

function onResponse(this: ClientRequest, res: IncomingMessage): void {
  const state: InFlightRequest = (this as any)[kState];
  if (state.tracked) state.runtime.monitor?.requestResponse(this, res);
  state.res = res;
  const lifetime = state.plan.connectionLifetime;
  const socket = this.socket;
  if (lifetime && socket && socketAge(socket, timing.now()) >= lifetime && this.shouldKeepAlive) {
    // Too old to reuse: Node closes it when this response ends instead of returning it to the pool.
    this.shouldKeepAlive = false;
    state.runtime.socketClosedByLimit(socket, "max_lifetime");
  }
  if (state.settled) return;
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
  if (state.tracked) state.runtime.monitor?.requestError(this);
  if (state.settled) return;
  if (error && NODEJS_TIMEOUT_ERROR_CODES.includes(error.code as string)) {
    state.settle(Object.assign(error, { name: "TimeoutError" }), true);
  } else {
    state.settle(error, true);
  }
}

function onRequestContinue(this: ClientRequest): void {
  const state: InFlightRequest = (this as any)[kState];
  const deadline = state.continueWait;
  if (deadline === undefined || !deadline.armed) return;
  state.runtime.scheduler.cancel(deadline);
  if (!this.destroyed && !state.res) state.writeBodyOrFail();
}

function onRequestSocket(this: ClientRequest, socket: Socket): void {
  const state: InFlightRequest = (this as any)[kState];
  if (state.tracked) state.runtime.monitor?.requestSocket(this, socket);
  const acquire = state.acquire;
  if (acquire) state.runtime.scheduler.cancel(acquire);
  // nodejs/node#47137: the agent only enables TCP keep-alive when a socket is first pooled, so a long first
  // request runs without it. Upstream arms a 3 s timer per request to set it; once per socket is enough.
  const agent = state.plan.agent as Agent & { keepAlive?: boolean; keepAliveMsecs?: number };
  if (agent.keepAlive === true && (socket as any)[kKeepAliveSet] !== true) {
    (socket as any)[kKeepAliveSet] = true;
    socket.setKeepAlive(true, agent.keepAliveMsecs || 0);
  }
  if (state.plan.connectionLifetime) stampSocket(socket, timing.now());
  if (socket.connecting) {
    (socket as any)[kConnectingFor] = state;
    socket.once("connect", onSocketConnected);
    if (state.plan.isSSL) socket.once("secureConnect", onSocketSecureConnected);
  } else {
    state.connected(socket);
    state.socketReady();
  }
}

/** TCP connected: bytes can move, so the inactivity timeout starts (it covers a stalled TLS handshake too). */
function onSocketConnected(this: Socket): void {
  const state: InFlightRequest | undefined = (this as any)[kConnectingFor];
  if (state === undefined || state.req?.socket !== this) return;
  state.connected(this);
  if (!state.plan.isSSL) {
    (this as any)[kConnectingFor] = undefined;
    state.socketReady();
  }
}

/** TLS handshake done: the connection is established. */
function onSocketSecureConnected(this: Socket): void {
  const state: InFlightRequest | undefined = (this as any)[kConnectingFor];
  (this as any)[kConnectingFor] = undefined;
  if (state !== undefined && state.req?.socket === this) state.socketReady();
}

function onRequestClose(this: ClientRequest): void {
  const state: InFlightRequest = (this as any)[kState];
  if (state.tracked) state.runtime.monitor?.requestClosed(this);
  const signal = state.abortSignal;
  if (signal && typeof signal.removeEventListener === "function") signal.removeEventListener("abort", state);
  state.runtime.requestClosed(state);
  if (!state.settled) {
    // Destroyed without an 'error' (e.g. by a caller holding the request): never leave the promise hanging.
    state.settle(
      Object.assign(new Error(`${PACKAGE_PREFIX} - the request closed before a response was received.`), {
        code: "ECONNRESET",
        name: "TimeoutError",
      }),
      true
    );
  }
}
