/**
 * Socket lifecycle limits for the handler's agents (its own; caller-owned ones only for a limit set explicitly):
 * - `idleSocketTimeout`: a free keep-alive socket idle this long is closed before the server's keep-alive timeout can
 *   close it under a new request (the `ECONNRESET` race, nodejs/node#47130).
 * - `connectionLifetime`: an older socket is not reused (DNS changes are picked up).
 * `sweepAgent()` runs before a dispatch (`sweepDue()`) and on the runtime's sweep deadline: O(free sockets). Each
 * socket's two stamps (created-at, freed-at) are kept off the socket, in one `WeakMap`.
 */
import type { Agent } from "node:http";
import type { Socket } from "node:net";
import { TICK_MS, timing as importedTiming } from "@sockeye/pool-monitor/internal";
import { ownedAgents } from "./resolve-handler-config";

// Bound once: in the CommonJS build (what Node loads), each read of another package's export is a getter call.
const timing = importedTiming;

/** A socket's stamps, monotonic ms: when the handler first saw it, when it last went back to its agent's free list. */
interface SocketStamps {
  createdAt: number | undefined;
  freedAt: number | undefined;
}

const stamps = new WeakMap<Socket, SocketStamps>();

function stampsOf(socket: Socket): SocketStamps {
  let s = stamps.get(socket);
  if (s === undefined) stamps.set(socket, (s = { createdAt: undefined, freedAt: undefined }));
  return s;
}
const kLifecycle = Symbol("sockeye.agentLifecycle");

/** Why the handler closed a socket. @internal */
export type LifecycleCloseReason = "idle_timeout" | "max_lifetime";

/** Limits, in ms; `undefined`/0 = off. @internal */
export interface SocketLifecycleLimits {
  idleSocketTimeout: number | undefined;
  connectionLifetime: number | undefined;
  /** Also apply to caller-owned agents (only when the caller set a limit explicitly). */
  lifecycleForExternalAgents: boolean;
}

interface AgentLifecycle {
  lastSweepAt: number;
}

function onAgentFree(socket: Socket): void {
  stampsOf(socket).freedAt = timing.now();
}

/** Stamps a socket's creation time the first time the handler sees it. @internal */
export function stampSocket(socket: Socket, now: number): void {
  const s = stampsOf(socket);
  if (s.createdAt === undefined) s.createdAt = now;
}

/** Age of a socket in ms since the handler first saw it (0 if never seen). @internal */
export function socketAge(socket: Socket, now: number): number {
  const created = stamps.get(socket)?.createdAt;
  return created === undefined ? 0 : now - created;
}

/** Closes free sockets past a limit; returns when the next reaches one (monotonic ms; +Infinity: none). @internal */
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
  if (!limits.lifecycleForExternalAgents && !ownedAgents.has(agent)) return none;
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
      const s = stampsOf(socket);
      const freed = s.freedAt ?? (s.freedAt = now);
      let reason: LifecycleCloseReason | undefined;
      if (idleSocketTimeout && now - freed >= idleSocketTimeout) reason = "idle_timeout";
      else if (connectionLifetime && socketAge(socket, now) >= connectionLifetime) reason = "max_lifetime";
      if (reason === undefined) {
        next = Math.min(next, socketExpiry(socket, freed, limits, now));
        continue;
      }
      onClose(socket, reason);
      socket.destroy();
      // Leave through Node's own 'agentRemove' path: removed by hand, the agent's 'close' listener stays armed and
      // opens a replacement socket per queued request, beyond maxSockets.
      socket.emit("agentRemove");
    }
  }
  return next;
}

/** When a socket freed at `freedAt` reaches a limit (monotonic ms; +Infinity with both limits off). @internal */
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
