/**
 * ConnectingSockets: the handler's sockets still connecting (`Map` origin → `Set`), so `destroy()` and an abandoned
 * attempt end them at once (undici's `destroy()` leaves a handshake running). `CONNECT_ABANDONED` is not recoverable
 * for undici, so it does not reconnect. Cost per connection: a Map lookup, a Set insert and delete, one closure.
 */
import type { Socket } from "node:net";
import type buildConnectorType from "undici/types/connector";

type Connector = buildConnectorType.connector;

/** The error an abandoned connection attempt is destroyed with (close reason `aborted`, not `error`). @internal */
export const CONNECT_ABANDONED: Error = Object.assign(
  new Error("@sockeye/undici-http-handler - connection attempt abandoned: no request waits for it any more."),
  { code: "ERR_SOCKEYE_CONNECT_ABANDONED" }
);

/** @internal */
export class ConnectingSockets {
  private readonly byOrigin = new Map<string, Set<Socket>>();
  /** Whether a request of `origin` waits for a connection (the handler's `OriginGate` knows); unset: always. */
  demand: ((origin: string) => boolean) | undefined;

  /**
   * Wraps `base` for `origin`: each socket it creates is recorded until it connected or failed, and an attempt
   * fails at once with `CONNECT_ABANDONED` when no request of `origin` waits (after an abort, undici reconnects for
   * the aborted request, still at the head of its queue, before noticing it).
   */
  connector(base: Connector, origin: string): Connector {
    const owner = this;
    return function connect(options, callback) {
      if (owner.demand !== undefined && !owner.demand(origin)) {
        callback(CONNECT_ABANDONED as Error & null, null as any);
        return null as any;
      }
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
