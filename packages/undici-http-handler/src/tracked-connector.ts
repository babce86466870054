/**
 * Wraps an undici connector so that every connection of one origin is observed from its first byte to its close
 * (connect and TLS times, errors, close reason, age). undici's connector returns the socket synchronously, so
 * listeners are attached before any event. Per connection: one state object, one closure, four shared listeners.
 */
import type { Socket } from "node:net";
import { type CloseReasonOf, timing } from "@sockeye/pool-monitor/internal";
import type buildConnectorType from "undici/types/connector";
import { CONNECT_ABANDONED } from "./connecting-sockets";
import type { OriginPoolState } from "./origin-pool-state";
import type { UndiciPoolMonitor } from "./undici-pool-monitor";

type Connector = buildConnectorType.connector;
type ConnectorOptions = buildConnectorType.Options;
type ConnectCallback = buildConnectorType.Callback;

const kConn = Symbol("sockeye.connection");

/** One connection's telemetry state. */
class ConnectionState {
  readonly begunAt = timing.now();
  tcpDoneAt = 0;
  connectedAt = 0;
  closeReason: CloseReasonOf<"undici"> | undefined;
  /** The connect attempt ended (connected or failed): `o.attemptsOpen` no longer counts it. */
  attemptEnded = false;

  constructor(
    readonly ownerMonitor: UndiciPoolMonitor,
    readonly o: OriginPoolState,
    readonly isTls: boolean,
    readonly lifetimeMs: number | undefined
  ) {}
}

function onTcpConnect(this: Socket): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c !== undefined) c.tcpDoneAt = timing.now();
}

function onSocketEnd(this: Socket): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c !== undefined && c.closeReason === undefined) c.closeReason = "server_closed";
}

function onSocketError(this: Socket, err: Error & { code?: string }): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c === undefined || c.closeReason !== undefined) return;
  if (c.connectedAt === 0) {
    if (err === CONNECT_ABANDONED) {
      c.closeReason = "aborted";
      return;
    }
    c.closeReason = "connect_error";
    c.ownerMonitor.connectionErrored(c.o);
    return;
  }
  // undici closes sockets on purpose with an "informational" error: idle keep-alive expiry, aborts, resets.
  if (err?.code === "UND_ERR_INFO") {
    const message = String(err.message);
    if (message.includes("idle timeout")) c.closeReason = "idle_timeout";
    else if (message.includes("aborted")) c.closeReason = "aborted";
    else c.closeReason = "local";
    return;
  }
  c.closeReason = err?.code === "UND_ERR_CONNECT_TIMEOUT" ? "connect_error" : "error";
  c.ownerMonitor.connectionErrored(c.o);
}

function onSocketClose(this: Socket): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c === undefined) return;
  (this as any)[kConn] = undefined;
  const o = c.o;
  if (c.connectedAt === 0) {
    if (!c.attemptEnded && o.attemptsOpen > 0) o.attemptsOpen--;
    if (c.closeReason !== "aborted") c.closeReason = "connect_error";
  }
  let reason = c.closeReason ?? "local";
  const now = timing.now();
  const ageMs = c.connectedAt === 0 ? 0 : now - c.connectedAt;
  if (reason === "local" && c.lifetimeMs !== undefined && ageMs >= c.lifetimeMs) reason = "max_lifetime";
  c.ownerMonitor.connectionClosed(o, ageMs, c.connectedAt !== 0, 0, reason);
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
  return function connect(options: ConnectorOptions, callback: ConnectCallback) {
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
        const tlsMs = tls ? now - tcpEnd : null;
        monitor.connected(o, connectMs);
        monitor.connectionReady(o, connectMs, tlsMs);
      } else if (err === CONNECT_ABANDONED) {
        state.closeReason = "aborted";
      } else if (state.closeReason === undefined) {
        state.closeReason = "connect_error";
        monitor.connectionErrored(o);
      }
      callback(err as Error & null, connected as any);
    }) as unknown as Socket;
    (socket as any)[kConn] = state;
    if (state.isTls) socket.once("connect", onTcpConnect);
    socket.once("end", onSocketEnd);
    socket.on("error", onSocketError);
    socket.once("close", onSocketClose);
    return socket as any;
  } as Connector;
}
