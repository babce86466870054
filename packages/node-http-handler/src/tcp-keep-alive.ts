import type { Agent } from "node:http";
import type { Socket } from "node:net";

const kKeepAliveSet = Symbol("sockeye.keepAliveSet");

/**
 * nodejs/node#47137: a keep-alive agent only enables TCP keep-alive on a socket when it is first pooled, so a long
 * first request runs without it. Upstream arms a 3 s timer per request to set it; here it is set synchronously,
 * once per socket (a symbol on the socket remembers it). No-op for agents without `keepAlive: true`.
 * @internal
 */
export function enableTcpKeepAlive(socket: Socket, agent: Agent): void {
  const a = agent as Agent & { keepAlive?: boolean; keepAliveMsecs?: number };
  if (a.keepAlive !== true || (socket as any)[kKeepAliveSet] === true) return;
  (socket as any)[kKeepAliveSet] = true;
  socket.setKeepAlive(true, a.keepAliveMsecs || 0);
}
