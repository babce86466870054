/**
 * ConnectingSockets: the handler's sockets that are still connecting (TCP connect or TLS handshake), per origin, so
 * that `destroy()` can end them all and an abandoned connection attempt can be ended at once.
 *
 * Why: undici's `destroy()` only ends connections it already has; a socket whose connect or TLS handshake is still
 * in progress stays open until it completes or undici's connect timeout fires (10 s by default; a server that never
 * answers the ClientHello keeps it that long), after the handler and every request are gone. Likewise a request
 * aborted (or timed out) while its connection is being opened: undici keeps handshaking for nobody. `NodeHttpHandler`
 * closes such a socket at once, so this one does too: `abandon(origin)` ends the origin's connecting sockets when no
 * request of the origin waits for a connection any more (the caller, `UndiciRequest`, knows that from the origin's
 * `OriginGate`). The error it uses (`CONNECT_ABANDONED`) is not one of undici's recoverable socket codes, so undici
 * fails the (already settled) requests queued on that connection instead of reconnecting for them.
 *
 * Structure: a `Map` origin → `Set` of sockets, added when the connector creates one, removed when its connect
 * callback runs (connected or failed) or it closes; an origin's `Set` exists only while it holds a socket (a client
 * of many hosts keeps no entry per host ever reached). Cost per CONNECTION: one Map lookup, one Set insert/delete
 * (a Set and a Map entry for an origin's first socket still connecting) and one callback closure; nothing per
 * request.
 */
import type { Socket } from "node:net";
import type buildConnectorType from "undici/types/connector";

type Connector = buildConnectorType.connector;

/**
 * The error an abandoned connection attempt is destroyed with (recognised by the tracked connector: close reason
 * `aborted`, not a socket error).
 * @internal
 */
export const CONNECT_ABANDONED: Error = Object.assign(
  new Error("@sockeye/undici-http-handler - connection attempt abandoned: no request waits for it any more."),
  { code: "ERR_SOCKEYE_CONNECT_ABANDONED" }
);

/** @internal */
export class ConnectingSockets {
  private readonly byOrigin = new Map<string, Set<Socket>>();
  /**
   * Whether a request of `origin` waits for a connection (the handler's `OriginGate` knows); unset: always.
   * Read by `onlyWhenNeeded` connectors before an attempt starts.
   */
  demand: ((origin: string) => boolean) | undefined;

  /** Returns a connector that records each socket `base` creates for `origin` until it connected or failed. */
  wrap(base: Connector, origin: string): Connector {
    const owner = this;
    return function connect(options, callback) {
      let done = false;
      let socket: Socket | undefined;
      socket = base(options, (err, connected) => {
        done = true;
        if (socket !== undefined) owner.forget(origin, socket);
        callback(err as Error & null, connected as any);
      }) as unknown as Socket;
      // The callback may have run synchronously (a connector that fails at once): nothing to track then.
      if (!done && socket !== undefined) {
        const s = socket;
        owner.track(origin, s);
        s.once("close", () => owner.forget(origin, s));
      }
      return socket as any;
    } as Connector;
  }

  /**
   * Returns a connector that starts no attempt nobody waits for: when `demand` says no request of `origin` waits
   * for a connection, it fails at once with `CONNECT_ABANDONED` (no socket). Why: when a request in flight is
   * aborted, undici destroys its connection and then reconnects for that request (still at the head of its queue)
   * before noticing it was aborted; the new connection (a TLS handshake in production) serves nobody. On
   * `CONNECT_ABANDONED` undici fails the (already settled) requests it still queued for that attempt instead.
   */
  onlyWhenNeeded(connector: Connector, origin: string): Connector {
    const owner = this;
    return function connect(options, callback) {
      const demand = owner.demand;
      if (demand !== undefined && !demand(origin)) {
        callback(CONNECT_ABANDONED as Error & null, null as any);
        return null as any;
      }
      return connector(options, callback);
    } as Connector;
  }

  /** Ends every socket of `origin` still connecting (no request waits for them). */
  abandon(origin: string): void {
    const set = this.byOrigin.get(origin);
    if (set === undefined) return;
    this.byOrigin.delete(origin);
    for (const socket of set) socket.destroy(CONNECT_ABANDONED);
  }

  /** Destroys every socket still connecting with `error` (undici then fails its connect attempt). */
  destroyAll(error: Error): void {
    const sets = [...this.byOrigin.values()];
    this.byOrigin.clear();
    for (const set of sets) for (const socket of set) socket.destroy(error);
  }

  private track(origin: string, socket: Socket): void {
    let set = this.byOrigin.get(origin);
    if (set === undefined) {
      set = new Set();
      this.byOrigin.set(origin, set);
    }
    set.add(socket);
  }

  private forget(origin: string, socket: Socket): void {
    const set = this.byOrigin.get(origin);
    if (set === undefined || !set.delete(socket)) return;
    if (set.size === 0) this.byOrigin.delete(origin);
  }
}
