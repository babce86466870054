/**
 * Every deadline kind a request can arm, declared once: which transports arm it, at which `RequestPhase` it starts
 * and ends, whether activity restarts it, and its error. `RequestCore` acts from these rules alone; a transport gives
 * durations (`DeadlinePlan`) and reports phases. Both are `Record`s over the kinds: a missing kind does not compile.
 */
import { type PhaseOf, RequestPhase } from "./request-core-phase";
import {
  acquisitionTimeoutError,
  connectionTimeoutError,
  requestTimeoutError,
  socketIdleTimeoutError,
  streamIdleTimeoutError,
  unreadBodyTimeoutError,
} from "./request-errors";

export { RequestPhase } from "./request-core-phase";

/** What a request's deadline stands for (a string union: tables and `switch`es over it are exhaustive). @internal */
export const DeadlineKind = {
  /** `connectionTimeout`: from `handle()` until the socket is connected (TLS included). */
  Connection: "connection",
  /** `requestTimeout`: from `handle()` until the response headers. */
  Request: "request",
  /** Upstream's `100 Continue` wait: send the body anyway after max(6 s, requestTimeout). */
  Continue: "continue",
  /** `socketAcquisitionTimeout`: from `handle()` until the request is given a socket. */
  Acquire: "acquire",
  /** The socket-usage warning window (`socketMonitor: "interval"` without telemetry). */
  Warning: "warning",
  /** undici's `socketTimeout`: inactivity from the connection to the end of the body (paused while unread). */
  SocketIdle: "socket_idle",
  /** HTTP/2's `requestTimeout`: inactivity of the stream, from `handle()` to its close. */
  StreamIdle: "stream_idle",
  /** `unreadBodyTimeout`: from the response handed out until the caller first reads its body (`bodyReadStarted`). */
  UnreadBody: "unread_body",
} as const;

/** @internal */
export type DeadlineKind = (typeof DeadlineKind)[keyof typeof DeadlineKind];

/** The transports of Sockeye. @internal */
export type Transport = "http1" | "http2" | "undici";

/** What a deadline context offers the error builders (implemented by `RequestCore`). @internal */
export interface DeadlineContext {
  /** The package name errors start with. */
  readonly errorPrefix: string;
  /** `timing.now()` at `handle()`, ms. */
  readonly begunAt: number;
  /** The queue the request waits in, e.g. `maxSockets=50, 3 queued`. */
  describeQueue(): string;
  /** A sentence added to a connection timeout (where the request still was), or `undefined`. */
  connectionDetail(): string | undefined;
  /** What the request waits for in its queue: a node:http agent's `"socket"`, an undici pool's `"connection"`. */
  readonly waitsFor: "socket" | "connection";
}

/** One deadline kind's rule. @internal */
export interface DeadlineRule {
  /** The transports that arm it. */
  readonly on: readonly Transport[];
  /** The phase that arms it; `null`: armed by the transport (`RequestCore.armDeadline`), e.g. only for some requests. */
  readonly armAt: PhaseOf | null;
  /** The phase that cancels it (the transport may also cancel it earlier: `RequestCore.endDeadline`). */
  readonly endAt: PhaseOf;
  /** Activity restarts it (`RequestCore.lastActive`): it fires `ms` after the last activity. */
  readonly idle: boolean;
  /** The rejection when it fires (`ms`: its duration; `now`: `timing.now()`); `undefined`: it only tells the transport. */
  error(r: DeadlineContext, ms: number, now: number): Error | undefined;
}

// Read once, so that the table below is a pure literal a bundle drops when nothing reads it.
const { Created, Acquired, Connected, Headers, Done } = RequestPhase;

/** The one table of deadline kinds (see the header); a rule's order is the firing order of deadlines due together. */
export const DEADLINE_RULES = {
  connection: {
    on: ["http1", "undici"],
    armAt: Created,
    endAt: Connected,
    idle: false,
    error: (r, ms) => connectionTimeoutError(r.errorPrefix, ms, r.connectionDetail()),
  },
  acquire: {
    on: ["http1", "undici"],
    armAt: Created,
    endAt: Acquired,
    idle: false,
    error: (r, ms, now) => acquisitionTimeoutError(r.errorPrefix, ms, now - r.begunAt, r.waitsFor, r.describeQueue()),
  },
  request: {
    on: ["http1", "undici"],
    armAt: Created,
    endAt: Headers,
    idle: false,
    error: (r, ms) => requestTimeoutError(r.errorPrefix, ms),
  },
  continue: {
    on: ["http1", "http2"],
    armAt: null,
    endAt: Headers,
    idle: false,
    error: () => undefined,
  },
  warning: {
    on: ["http1"],
    armAt: null,
    endAt: Done,
    idle: false,
    error: () => undefined,
  },
  socket_idle: {
    on: ["undici"],
    armAt: Connected,
    endAt: Done,
    idle: true,
    error: (r, ms) => socketIdleTimeoutError(r.errorPrefix, ms, false),
  },
  stream_idle: {
    on: ["http2"],
    armAt: Created,
    endAt: Done,
    idle: true,
    error: (_r, ms) => streamIdleTimeoutError(ms),
  },
  unread_body: {
    on: ["http1", "http2", "undici"],
    armAt: Headers,
    endAt: Done,
    idle: false,
    error: (r, ms) => unreadBodyTimeoutError(r.errorPrefix, ms),
  },
} as const satisfies Record<DeadlineKind, DeadlineRule>;

/** The deadline kinds transport `T` arms. @internal */
export type DeadlineKindOf<T extends Transport> = {
  [K in DeadlineKind]: T extends (typeof DEADLINE_RULES)[K]["on"][number] ? K : never;
}[DeadlineKind];

const KINDS: ReadonlySet<unknown> = new Set(Object.values(DeadlineKind));

/** Whether an armed `kind` holds the process: every `DeadlineKind` does; idle watches and ticks do not. @internal */
export function holdsLoop(kind: unknown): boolean {
  return KINDS.has(kind);
}
