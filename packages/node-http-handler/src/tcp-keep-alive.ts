import type { Agent } from "node:http";
import type { Socket } from "node:net";

const kKeepAliveSet = Symbol("sockeye.keepAliveSet");

/**
 * A keep-alive agent only enables TCP keep-alive on a socket when it is first pooled, so a long first request runs
 * without it. Set here synchronously, once per socket (no timer per request). No-op without `keepAlive: true`.
 * @internal
 */
export function enableTcpKeepAlive(socket: Socket, agent: Agent): void {
  const a = agent as Agent & { keepAlive?: boolean; keepAliveMsecs?: number };
  if (a.keepAlive !== true || (socket as any)[kKeepAliveSet] === true) return;
  (socket as any)[kKeepAliveSet] = true;
  socket.setKeepAlive(true, a.keepAliveMsecs || 0);
}
