/**
 * Socket lifecycle limits for the handler's agents, with no timer of their own:
 *
 * - `idleSocketTimeout`: a pooled (free) keep-alive socket idle this long is closed before the server's own
 *   keep-alive timeout can close it under a new request (the `ECONNRESET` race, nodejs/node#47130).
 * - `connectionLifetime`: a socket older than this is not reused (the .NET `PooledConnectionLifetime` idea: DNS
 *   changes are picked up). A busy socket is never cut: it is closed when its response ends instead of returning to
 *   the pool.
 *
 * When: `sweepAgent()` runs for the request's agent right before a request is dispatched (at most once per `TICK_MS`
 * per agent, see `sweepDue()`), so an expired socket can never be handed to a new request; and, while requests are
 * in flight, for both agents on one deadline of the handler's shared scheduler armed for the earliest expiry of a
 * free socket (`sweepAgent()` returns that time), so a socket is closed when its limit passes, as precisely as any
 * deadline. An idle handler keeps no timer for its free sockets (Node `unref()`s them; they cost nothing). Applies to the agents the handler created (both the http and
 * the https one) and, only when a limit was set explicitly, to caller-owned agents.
 *
 * Cost: the sweep walks `agent.freeSockets` (at most maxFreeSockets per origin, usually a few), O(free sockets);
 * each socket carries two numbers under symbols (created-at, freed-at), stamped by one shared `'free'` listener per
 * agent and by the request's `'socket'` listener.
 */
import type { Agent } from "node:http";
import type { Socket } from "node:net";
import { TICK_MS } from "@sockeye/pool-monitor/internal";
import { timing as importedTiming } from "@sockeye/pool-monitor/internal";
import { ownedAgents } from "./resolve-handler-config";

// Bound once: in this package's CommonJS build every use of another package's export is a getter call.
const timing = importedTiming;

const kCreatedAt = Symbol("sockeye.socketCreatedAt");
const kFreedAt = Symbol("sockeye.socketFreedAt");
const kLifecycle = Symbol("sockeye.agentLifecycle");

/** Why the handler closed a socket. @internal */
export type LifecycleCloseReason = "idle_timeout" | "max_lifetime";

/** Limits, in ms; `undefined`/0 = off. @internal */
export interface SocketLifecycleLimits {
  idleSocketTimeout: number | undefined;
  connectionLifetime: number | undefined;
  /** Also apply to caller-owned agents (only when the caller set a limit explicitly). */
  externalAgents: boolean;
}

interface AgentLifecycle {
  lastSweepAt: number;
}

function onAgentFree(socket: Socket): void {
  (socket as any)[kFreedAt] = timing.now();
}

/** Stamps a socket's creation time the first time the handler sees it. @internal */
export function stampSocket(socket: Socket, now: number): void {
  if ((socket as any)[kCreatedAt] === undefined) (socket as any)[kCreatedAt] = now;
}

/** Age of a socket in ms since the handler first saw it (0 if never seen). @internal */
export function socketAge(socket: Socket, now: number): number {
  const created = (socket as any)[kCreatedAt] as number | undefined;
  return created === undefined ? 0 : now - created;
}

/**
 * Closes the agent's free sockets that exceeded a limit. `onClose` is told each socket and why, before it is
 * destroyed. Returns when the first free socket left on the agent reaches a limit (monotonic ms; +Infinity if none).
 * @internal
 */
export function sweepAgent(
  agent: Agent,
  limits: SocketLifecycleLimits,
  now: number,
  onClose: (socket: Socket, reason: LifecycleCloseReason) => void
): number {
  // Duck-typed agents (anything with addRequest/destroy) may have no pool maps or events: nothing to manage.
  const none = Number.POSITIVE_INFINITY;
  if (typeof agent.on !== "function" || agent.freeSockets === null || typeof agent.freeSockets !== "object")
    return none;
  if (!limits.externalAgents && !ownedAgents.has(agent)) return none;
  let state = (agent as any)[kLifecycle] as AgentLifecycle | undefined;
  if (state === undefined) {
    state = { lastSweepAt: Number.NEGATIVE_INFINITY };
    (agent as any)[kLifecycle] = state;
    agent.on("free", onAgentFree);
  }
  state.lastSweepAt = now;
  const { idleSocketTimeout, connectionLifetime } = limits;
  let next = Number.POSITIVE_INFINITY;
  const free = agent.freeSockets as Record<string, Socket[] | undefined>;
  for (const key in free) {
    const sockets = free[key];
    if (!sockets) continue;
    for (let i = sockets.length - 1; i >= 0; i--) {
      const socket = sockets[i];
      let freedAt = (socket as any)[kFreedAt] as number | undefined;
      if (freedAt === undefined) freedAt = (socket as any)[kFreedAt] = now;
      let reason: LifecycleCloseReason | undefined;
      if (idleSocketTimeout && now - freedAt >= idleSocketTimeout) reason = "idle_timeout";
      else if (connectionLifetime && socketAge(socket, now) >= connectionLifetime) reason = "max_lifetime";
      if (reason === undefined) {
        next = Math.min(next, socketExpiry(socket, freedAt, limits, now));
        continue;
      }
      onClose(socket, reason);
      socket.destroy();
      // Leave the agent now, through Node's own 'agentRemove' path: it drops the socket from `freeSockets`, lowers
      // `totalSocketCount` and removes the agent's 'close' listener. Taking the socket out of the pool by hand
      // instead left Node's 'close' listener armed, and that listener opens a replacement socket for every queued
      // request, whatever maxSockets says: after an idle sweep, a burst ran on up to twice maxSockets connections.
      socket.emit("agentRemove");
    }
  }
  return next;
}

/**
 * When a socket freed at `freedAt` reaches a limit (monotonic ms; +Infinity with both limits off).
 * @internal
 */
export function socketExpiry(socket: Socket, freedAt: number, limits: SocketLifecycleLimits, now: number): number {
  let at = Number.POSITIVE_INFINITY;
  if (limits.idleSocketTimeout) at = freedAt + limits.idleSocketTimeout;
  if (limits.connectionLifetime) at = Math.min(at, now - socketAge(socket, now) + limits.connectionLifetime);
  return at;
}

/** Whether `agent` is due for a dispatch-time sweep (at most once per tick period). @internal */
export function sweepDue(agent: Agent, now: number): boolean {
  const state = (agent as any)[kLifecycle] as AgentLifecycle | undefined;
  return state === undefined || now - state.lastSweepAt >= TICK_MS;
}
