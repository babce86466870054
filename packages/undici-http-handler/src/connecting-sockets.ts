/**
 * ConnectingSockets: the handler's sockets that are still connecting (TCP connect or TLS handshake), so that
 * `destroy()` can end them.
 *
 * Why: undici's `destroy()` only ends connections it already has; a socket whose connect or TLS handshake is still
 * in progress stays open until it completes or undici's connect timeout fires (10 s by default; a server that never
 * answers the ClientHello keeps it that long), after the handler and every request are gone. `NodeHttpHandler`
 * closes such a socket at once, so this one does too.
 *
 * Structure: a `Set` of sockets, added when the connector creates one, removed when its connect callback runs
 * (connected or failed) or it closes. Cost per CONNECTION: one Set insert/delete and one callback closure; nothing
 * per request.
 */
import type { Socket } from "node:net";
import type buildConnectorType from "undici/types/connector";

type Connector = buildConnectorType.connector;

/** @internal */
export class ConnectingSockets {
  private readonly sockets = new Set<Socket>();

  /** Number of sockets still connecting. */
  get size(): number {
    return this.sockets.size;
  }

  /** Returns a connector that records each socket `base` creates until it connected or failed. */
  wrap(base: Connector): Connector {
    const sockets = this.sockets;
    return function connect(options, callback) {
      let done = false;
      let socket: Socket | undefined;
      socket = base(options, (err, connected) => {
        done = true;
        if (socket !== undefined) sockets.delete(socket);
        callback(err as Error & null, connected as any);
      }) as unknown as Socket;
      // The callback may have run synchronously (a connector that fails at once): nothing to track then.
      if (!done && socket !== undefined) {
        const s = socket;
        sockets.add(s);
        s.once("close", () => sockets.delete(s));
      }
      return socket as any;
    } as Connector;
  }

  /** Destroys every socket still connecting with `error` (undici then fails its connect attempt). */
  destroyAll(error: Error): void {
    for (const socket of this.sockets) socket.destroy(error);
    this.sockets.clear();
  }
}
