/**
 * Wraps an undici connector so that every connection of one origin is observed from its first byte to its close
 * (connect and TLS times, errors, close reason, age). undici's connector returns the socket synchronously, so
 * listeners are attached before any event. Per connection: one state object, one closure, four shared listeners.
 * The state is found through a `WeakMap`, not a property on the socket: a socket with a property of its own gets a
 * hidden class of its own, which turns Node's and undici's per-request property reads on sockets megamorphic.
 */
import type { Socket } from "node:net";
import { type CloseReasonOf, timing } from "@sockeye/pool-monitor/internal";
import type buildConnectorType from "undici/types/connector";
import { CONNECT_ABANDONED } from "./connecting-sockets";
import type { OriginPoolState } from "./origin-pool-state";
import type { UndiciPoolMonitor } from "./undici-pool-monitor";

type Connector = buildConnectorType.connector;
type SocketError = Error & { code?: string };

/** Each tracked socket's state, until it closes. */
const states = new WeakMap<Socket, ConnectionState>();

/** One connection's telemetry state. */
class ConnectionState {
  readonly begunAt = timing.now();
  tcpDoneAt = 0;
  connectedAt = 0;
  /** What ended the connection first: the server's FIN (`"end"`), an error, or nothing yet. */
  cause: SocketError | "end" | undefined;
  /** The connect attempt ended (connected or failed): `o.attemptsOpen` no longer counts it. */
  attemptEnded = false;

  constructor(
    readonly ownerMonitor: UndiciPoolMonitor,
    readonly o: OriginPoolState,
    readonly isTls: boolean,
    readonly lifetimeMs: number | undefined
  ) {}

  /** Records `err` unless something ended the connection before; a real failure counts as a connection error. */
  noteError(err: SocketError): void {
    if (this.cause !== undefined) return;
    this.cause = err;
    // undici closes connected sockets on purpose with an "informational" error: idle expiry, aborts, resets.
    const onPurpose = err === CONNECT_ABANDONED || (this.connectedAt !== 0 && err?.code === "UND_ERR_INFO");
    if (!onPurpose) this.ownerMonitor.connectionErrored(this.o);
  }
}

/** Whether `cause` is undici's informational close whose message says `what`. */
function infoSays(cause: ConnectionState["cause"], what: string): boolean {
  return typeof cause === "object" && cause?.code === "UND_ERR_INFO" && String(cause.message).includes(what);
}

/**
 * The undici close reasons, tried in key order (first match wins). A `Record` over `CloseReasonOf<"undici">`: a
 * reason `CLOSE_REASONS` lists for undici without its rule, or a rule for a reason it does not list, fails to compile.
 */
const UNDICI_CLOSE_RULES: Readonly<Record<CloseReasonOf<"undici">, (c: ConnectionState, ageMs: number) => boolean>> = {
  aborted: (c) => (c.connectedAt === 0 ? c.cause === CONNECT_ABANDONED : infoSays(c.cause, "aborted")),
  connect_error: (c) =>
    c.connectedAt === 0 || (typeof c.cause === "object" && c.cause?.code === "UND_ERR_CONNECT_TIMEOUT"),
  server_closed: (c) => c.cause === "end",
  idle_timeout: (c) => infoSays(c.cause, "idle timeout"),
  error: (c) => typeof c.cause === "object" && c.cause?.code !== "UND_ERR_INFO",
  max_lifetime: (c, ageMs) => c.lifetimeMs !== undefined && ageMs >= c.lifetimeMs,
  local: () => true,
};

function closeReason(c: ConnectionState, ageMs: number): CloseReasonOf<"undici"> {
  for (const reason in UNDICI_CLOSE_RULES) {
    const r = reason as CloseReasonOf<"undici">;
    if (UNDICI_CLOSE_RULES[r](c, ageMs)) return r;
  }
  return "local";
}

function onTcpConnect(this: Socket): void {
  const c = states.get(this);
  if (c !== undefined) c.tcpDoneAt = timing.now();
}

function onSocketEnd(this: Socket): void {
  const c = states.get(this);
  if (c !== undefined && c.cause === undefined) c.cause = "end";
}

function onSocketError(this: Socket, err: SocketError): void {
  states.get(this)?.noteError(err);
}

function onSocketClose(this: Socket): void {
  const c = states.get(this);
  if (c === undefined) return;
  states.delete(this);
  const o = c.o;
  if (!c.attemptEnded && o.attemptsOpen > 0) o.attemptsOpen--;
  const ageMs = c.connectedAt === 0 ? 0 : timing.now() - c.connectedAt;
  c.ownerMonitor.connectionClosed(o, ageMs, c.connectedAt !== 0, 0, closeReason(c, ageMs));
}

/**
 * A connector for `o`'s pool that delegates to `base` and reports to `monitor`; a local close at or after
 * `lifetime` (`connectionLifetime`, ms) counts as `max_lifetime`. @internal
 */
export function trackedConnector(
  base: Connector,
  monitor: UndiciPoolMonitor,
  o: OriginPoolState,
  lifetime: number | undefined
): Connector {
  return function connect(options, callback) {
    monitor.connectionOpened(o);
    o.attemptsOpen++;
    const state = new ConnectionState(monitor, o, options.protocol === "https:", lifetime);
    const socket = base(options, (err, connected) => {
      if (!state.attemptEnded && o.attemptsOpen > 0) o.attemptsOpen--;
      state.attemptEnded = true;
      if (err === null && connected !== undefined && connected !== null) {
        const now = timing.now();
        state.connectedAt = now;
        o.freshConns++;
        // TLS: the TCP part ends at the socket's `connect`, the handshake's at the connector's callback.
        const tls = state.isTls && state.tcpDoneAt !== 0;
        const tcpEnd = tls ? state.tcpDoneAt : now;
        const connectMs = tcpEnd - state.begunAt;
        monitor.connected(o, connectMs);
        monitor.connectionReady(o, connectMs, tls ? now - tcpEnd : null);
      } else state.noteError(err as SocketError);
      callback(err as Error & null, connected as any);
    }) as unknown as Socket;
    states.set(socket, state);
    if (state.isTls) socket.once("connect", onTcpConnect);
    socket.once("end", onSocketEnd);
    socket.on("error", onSocketError);
    socket.once("close", onSocketClose);
    return socket as any;
  } as Connector;
}
