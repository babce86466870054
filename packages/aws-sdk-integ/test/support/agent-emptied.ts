/**
 * Waits until an `http.Agent` holds no socket at all. `agent.destroy()` destroys its sockets at once, but they
 * leave `agent.sockets` / `agent.freeSockets` only on their `close` event, a little later.
 */
import type http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

function count(map: NodeJS.ReadOnlyDict<readonly unknown[]>): number {
  let n = 0;
  for (const key in map) n += map[key]?.length ?? 0;
  return n;
}

/** Resolves once `agent` has no sockets in use and none free; throws with the counts after `withinMs`. @internal */
export async function expectAgentEmptied(agent: http.Agent, withinMs = 3_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const inUse = count(agent.sockets);
    const free = count(agent.freeSockets);
    if (inUse === 0 && free === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`agent still holds ${inUse} socket(s) in use and ${free} free ${withinMs} ms after destroy`);
    }
    await sleep(10);
  }
}
