/**
 * Wraps an undici connector (`buildConnector()` result) so that every connection of one origin is observed from
 * its first byte to its close: attempts, TCP connect time, TLS handshake time, connect errors, socket errors, close
 * reason and age. undici's connector returns the socket synchronously, so listeners are attached before any event.
 *
 * Cost: per CONNECTION (not per request) one small state object, one callback closure and four `once`/`on`
 * listeners; nothing per request.
 */
import type { Socket } from "node:net";
import type { CloseReason } from "@sockeye/pool-monitor";
import { timing } from "@sockeye/pool-monitor/internal";
import type buildConnectorType from "undici/types/connector";
import { CONNECT_ABANDONED } from "./connecting-sockets";
import type { OriginPoolState } from "./origin-pool-state";
import type { UndiciPoolMonitor } from "./undici-pool-monitor";

type Connector = buildConnectorType.connector;
type ConnectorOptions = buildConnectorType.Options;
type ConnectCallback = buildConnectorType.Callback;

const kConn = Symbol("sockeye.connection");

interface ConnectionState {
  monitor: UndiciPoolMonitor;
  o: OriginPoolState;
  tls: boolean;
  startedAt: number;
  tcpAt: number;
  connectedAt: number;
  reason: CloseReason | undefined;
  lifetime: number | undefined;
  /** The connect attempt ended (connected or failed): `o.connecting` no longer counts it. */
  attemptEnded: boolean;
}

function onTcpConnect(this: Socket): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c !== undefined) c.tcpAt = timing.now();
}

function onSocketEnd(this: Socket): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c !== undefined && c.reason === undefined) c.reason = "server_closed";
}

function onSocketError(this: Socket, err: Error & { code?: string }): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c === undefined || c.reason !== undefined) return;
  if (c.connectedAt === 0) {
    if (err === CONNECT_ABANDONED) {
      // Its request went away while connecting (see connecting-sockets.ts): a local close, not a socket error.
      c.reason = "aborted";
      return;
    }
    c.reason = "connect_error";
    c.monitor.connectionError(c.o);
    return;
  }
  // undici closes sockets on purpose with an "informational" error: idle keep-alive expiry, aborts, resets.
  if (err?.code === "UND_ERR_INFO") {
    const message = String(err.message);
    if (message.includes("idle timeout")) c.reason = "idle_timeout";
    else if (message.includes("aborted")) c.reason = "aborted";
    else c.reason = "local";
    return;
  }
  if (err?.code === "UND_ERR_CONNECT_TIMEOUT") {
    c.reason = "connect_error";
  } else {
    c.reason = "error";
  }
  c.monitor.connectionError(c.o);
}

function onSocketClose(this: Socket): void {
  const c: ConnectionState | undefined = (this as any)[kConn];
  if (c === undefined) return;
  (this as any)[kConn] = undefined;
  const o = c.o;
  if (c.connectedAt === 0) {
    if (!c.attemptEnded && o.connecting > 0) o.connecting--;
    if (c.reason !== "aborted") c.reason = "connect_error";
  }
  let reason = c.reason ?? "local";
  const now = timing.now();
  const ageMs = c.connectedAt === 0 ? 0 : now - c.connectedAt;
  if (reason === "local" && c.lifetime !== undefined && ageMs >= c.lifetime) reason = "max_lifetime";
  c.monitor.connectionClosed(o, ageMs, c.connectedAt !== 0, 0, reason);
}

/**
 * Returns a connector for `o`'s pool that delegates to `base` and reports to `monitor`.
 * @param lifetime - `connectionLifetime`, ms: a local close at or after it counts as `max_lifetime`.
 * @internal
 */
export function trackedConnector(
  base: Connector,
  monitor: UndiciPoolMonitor,
  o: OriginPoolState,
  lifetime: number | undefined
): Connector {
  return function connect(options: ConnectorOptions, callback: ConnectCallback) {
    monitor.connectionOpened(o);
    o.connecting++;
    const state: ConnectionState = {
      monitor,
      o,
      tls: options.protocol === "https:",
      startedAt: timing.now(),
      tcpAt: 0,
      connectedAt: 0,
      reason: undefined,
      lifetime,
      attemptEnded: false,
    };
    const socket = base(options, (err, connected) => {
      if (!state.attemptEnded && o.connecting > 0) o.connecting--;
      state.attemptEnded = true;
      if (err === null && connected !== undefined && connected !== null) {
        const now = timing.now();
        state.connectedAt = now;
        o.fresh++;
        const tcpEnd = state.tls && state.tcpAt !== 0 ? state.tcpAt : now;
        const connectMs = tcpEnd - state.startedAt;
        const tlsMs = state.tls && state.tcpAt !== 0 ? now - state.tcpAt : null;
        monitor.connected(o, connectMs);
        monitor.connectionReady(o, connectMs, tlsMs);
      } else if (err === CONNECT_ABANDONED) {
        state.reason = "aborted";
      } else if (state.reason === undefined) {
        state.reason = "connect_error";
        monitor.connectionError(o);
      }
      callback(err as Error & null, connected as any);
    }) as unknown as Socket;
    (socket as any)[kConn] = state;
    if (state.tls) socket.once("connect", onTcpConnect);
    socket.once("end", onSocketEnd);
    socket.on("error", onSocketError);
    socket.once("close", onSocketClose);
    return socket as any;
  } as Connector;
}
