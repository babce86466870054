/**
 * The idle-socket sweep must never let a burst run with more than `maxSockets` connections.
 *
 * The defect this guards against: the sweep took expired sockets out of `agent.freeSockets` itself and then destroyed
 * them. Node's agent only learns that a socket is gone from its `'close'` event, a turn later; by then the burst had
 * already opened `maxSockets` new connections and queued the rest, and Node's `'close'` handler opens a replacement for
 * every closed socket while requests are queued, without checking the limit: up to twice `maxSockets` at once (100 with
 * the default 50), and `totalSocketCount` left too high for good. Upstream never sweeps, so it stays at `maxSockets`.
 *
 * Real sockets and servers; only the handler's clock (`performance`, read through `timing`) is faked, so the pool can
 * idle past the default `idleSocketTimeout` (4 s) without the test waiting.
 */
import { once } from "node:events";
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { NodeHttpHandler as UpstreamHandler } from "@smithy/node-http-handler";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NodeHttpHandler } from "../src/node-http-handler";
import { CA, KEY, readAll, requestTo, type ServerKind, waitFor } from "./servers";

const MAX_SOCKETS = 5;
const BURST = 8 * MAX_SOCKETS;
/** The handler's default `idleSocketTimeout`. */
const IDLE_MS = 4000;

interface PeakServer {
  protocol: "http:" | "https:";
  hostname: string;
  port: number;
  /** Most requests the server was handling at the same time so far. */
  peakRequests: number;
  /** TCP connections accepted so far. */
  accepted: number;
  close(): Promise<void>;
}

/**
 * A server that answers every request after `holdMs`, so a burst keeps every socket busy; counts the connections it
 * accepted and the most requests it handled at once. (Its count of open connections cannot be the measure: it drops
 * a connection on `'close'`, which Node emits in a later loop phase than the `'connection'` of a socket the client
 * opened right after closing the old one.)
 */
async function startPeakServer(kind: ServerKind, holdMs: number): Promise<PeakServer> {
  const state = { peakRequests: 0, accepted: 0, handling: 0 };
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    state.handling++;
    state.peakRequests = Math.max(state.peakRequests, state.handling);
    res.on("close", () => state.handling--);
    req.resume();
    req.on("end", () => setTimeout(() => res.end("ok"), holdMs));
  };
  const server =
    kind === "https" ? https.createServer({ key: KEY, cert: CA }, onRequest) : http.createServer(onRequest);
  const open = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    state.accepted++;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    protocol: kind === "https" ? "https:" : "http:",
    hostname: "127.0.0.1",
    port: (server.address() as net.AddressInfo).port,
    get peakRequests() {
      return state.peakRequests;
    },
    get accepted() {
      return state.accepted;
    },
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Handler = NodeHttpHandler | UpstreamHandler;

function agentOf(handler: Handler, kind: ServerKind): http.Agent {
  const config = (handler as any).config as { httpAgent: http.Agent; httpsAgent: http.Agent };
  return kind === "https" ? config.httpsAgent : config.httpAgent;
}

/**
 * Counts the requests that reached `agent` (from its `addRequest` to the request's `'close'`); `peak` is the most at
 * once. With Sockeye's handler-side queue it can never exceed `maxSockets`, whatever the sweep does to the pool.
 */
function watchRequestsAtAgent(agent: http.Agent): { readonly peak: number } {
  let live = 0;
  let peak = 0;
  const add = (agent as any).addRequest as (...args: unknown[]) => void;
  (agent as any).addRequest = function (this: http.Agent, req: http.ClientRequest, ...rest: unknown[]): void {
    live++;
    peak = Math.max(peak, live);
    req.once("close", () => live--);
    add.call(this, req, ...rest);
  };
  return {
    get peak() {
      return peak;
    },
  };
}

/**
 * Watches every socket `agent` creates from now on; `peak` is the most sockets of the agent that were not yet
 * destroyed when a new one was created (the client's own count of connections it holds open).
 */
function watchLiveSockets(agent: http.Agent): { readonly peak: number } {
  const live = new Set<net.Socket>();
  let peak = 0;
  const create = (agent as any).createConnection as (...args: unknown[]) => net.Socket;
  (agent as any).createConnection = function (this: http.Agent, ...args: unknown[]): net.Socket {
    for (const socket of live) if (socket.destroyed) live.delete(socket);
    const socket = create.apply(this, args);
    live.add(socket);
    peak = Math.max(peak, live.size);
    return socket;
  };
  return {
    get peak() {
      return peak;
    },
  };
}

function count(map: NodeJS.ReadOnlyDict<unknown[]>): number {
  let n = 0;
  for (const key in map) n += map[key]?.length ?? 0;
  return n;
}

async function send(handler: Handler, server: PeakServer, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async () => {
      const { response } = await handler.handle(requestTo(server, { path: "/" }));
      await readAll(response.body);
      expect(response.statusCode).toBe(200);
    })
  );
}

describe.each<ServerKind>(["http", "https"])("idle sweep then a burst over %s", (kind) => {
  let server: PeakServer | undefined;
  let handler: Handler | undefined;

  afterEach(async () => {
    vi.useRealTimers();
    handler?.destroy();
    handler = undefined;
    await server?.close();
    server = undefined;
  });

  it.each(["sockeye", "upstream"] as const)(
    "%s never has more than maxSockets connections open, and the agent's socket count stays true",
    async (impl) => {
      vi.useFakeTimers({ toFake: ["performance"] });
      server = await startPeakServer(kind, 20);
      const agentOptions = { maxSockets: MAX_SOCKETS, keepAlive: true, ca: CA };
      handler =
        impl === "sockeye"
          ? new NodeHttpHandler({ httpAgent: agentOptions, httpsAgent: agentOptions })
          : new UpstreamHandler({ httpAgent: agentOptions, httpsAgent: agentOptions });

      // Warm the pool: every socket busy once, then all of them back in the pool.
      await send(handler, server, MAX_SOCKETS);
      const agent = agentOf(handler, kind);
      await waitFor(() => count(agent.freeSockets) === MAX_SOCKETS, "the warm sockets back in the pool");
      expect(server.accepted).toBe(MAX_SOCKETS);

      // The pool idles past idleSocketTimeout (the handler's clock only), then a burst far larger than the pool.
      const live = watchLiveSockets(agent);
      const atAgent = watchRequestsAtAgent(agent);
      vi.advanceTimersByTime(IDLE_MS + 1);
      await send(handler, server, BURST);

      expect(live.peak).toBeLessThanOrEqual(MAX_SOCKETS);
      // By construction: Sockeye's gate never lets more than maxSockets requests reach the agent (so a misbehaving
      // sweep could not make it open more); upstream hands the agent the whole burst.
      expect(atAgent.peak).toBe(impl === "sockeye" ? MAX_SOCKETS : BURST);
      expect(server.peakRequests).toBe(MAX_SOCKETS);
      // Sockeye replaced the expired sockets (MAX_SOCKETS new ones); upstream reused them.
      expect(server.accepted).toBe(impl === "sockeye" ? 2 * MAX_SOCKETS : MAX_SOCKETS);
      // Node's own count agrees with the sockets it holds (a leaked count would block maxTotalSockets for good).
      await waitFor(() => count(agent.sockets) === 0, "every socket freed");
      expect((agent as http.Agent & { totalSocketCount: number }).totalSocketCount).toBe(count(agent.freeSockets));
    }
  );
});
