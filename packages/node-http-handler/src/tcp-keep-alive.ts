import type { Agent } from "node:http";
import type { Socket } from "node:net";

/** Sockets whose keep-alive is set (kept off the socket, which keeps Node's shape). */
const keepAliveSet = new WeakSet<Socket>();

/**
 * A keep-alive agent only enables TCP keep-alive on a socket when it is first pooled, so a long first request runs
 * without it. Set here synchronously, once per socket (no timer per request). No-op without `keepAlive: true`.
 * @internal
 */
export function enableTcpKeepAlive(socket: Socket, agent: Agent): void {
  const a = agent as Agent & { keepAlive?: boolean; keepAliveMsecs?: number };
  if (a.keepAlive !== true || keepAliveSet.has(socket)) return;
  keepAliveSet.add(socket);
  socket.setKeepAlive(true, a.keepAliveMsecs || 0);
}
