/**
 * Surgery on an `http.Agent`'s request queue (`agent.requests`). Node keeps a destroyed queued request there until a
 * socket frees up (in a stuck pool, forever), and it never emits `'close'`: a request that gives up while queued
 * leaves the queue itself and is ended by its owner. O(queue length), on failure paths only.
 */
import type { Agent, ClientRequest } from "node:http";

/** Removes `req` from `agent.requests` if queued there; true when it was (then it never emits `'close'`). @internal */
export function leaveAgentQueue(agent: Agent, req: ClientRequest): boolean {
  const requests = agent.requests as Record<string, unknown[] | undefined> | undefined;
  if (requests === null || typeof requests !== "object") return false;
  for (const key in requests) {
    const queue = requests[key];
    const index = Array.isArray(queue) ? queue.indexOf(req) : -1;
    if (index !== -1) {
      queue!.splice(index, 1);
      if (queue!.length === 0) delete requests[key];
      return true;
    }
  }
  return false;
}

/** `maxSockets=<n>, <m> requests queued` for error messages: every agent key, plus the handler's `gate`. @internal */
export function describeAgentQueue(agent: Agent, gate?: { readonly queued: number }): string {
  let queued = gate?.queued ?? 0;
  const requests = agent.requests;
  for (const key in requests) queued += requests[key]?.length ?? 0;
  return `maxSockets=${agent.maxSockets}, ${queued} requests queued`;
}
