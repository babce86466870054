/**
 * Leak checks by counting: `process.getActiveResourcesInfo()` lists one entry per live libuv handle / ref'd timer
 * (`"Timeout"` per ref'd timer, `"TCPSocketWrap"` per open TCP socket). A test takes a snapshot before it builds a
 * client and, after `client.destroy()`, waits until the counts are back to (at most) the snapshot.
 *
 * Unref'd timers are not listed by Node, so this catches exactly the timers that would keep a process alive.
 * Counts are compared, not names, because vitest and earlier tests own resources of their own.
 */
import { setTimeout as sleep } from "node:timers/promises";

/** @internal */
export interface ResourceCounts {
  /** ref'd timers (`setTimeout` / `setInterval`). */
  readonly timeouts: number;
  /** open TCP sockets (client and accepted server sockets alike). */
  readonly tcpSockets: number;
}

/** Counts the process's active timers and TCP sockets right now. @internal */
export function resourceCounts(): ResourceCounts {
  let timeouts = 0;
  let tcpSockets = 0;
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === "Timeout") timeouts++;
    else if (kind === "TCPSocketWrap") tcpSockets++;
  }
  return { timeouts, tcpSockets };
}

/**
 * Resolves once both counts are back to at most `before` (sockets close asynchronously after `destroy()`), or
 * throws after `withinMs` with both snapshots and the full resource list. Polls every 10 ms; the poll's own timer
 * has fired (and is gone) whenever a count is taken.
 * @internal
 */
export async function expectResourcesBackTo(before: ResourceCounts, withinMs = 3_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = resourceCounts();
    if (now.timeouts <= before.timeouts && now.tcpSockets <= before.tcpSockets) return;
    if (Date.now() > deadline) {
      throw new Error(
        `leaked resources: before ${JSON.stringify(before)}, ${withinMs} ms after destroy ${JSON.stringify(now)}; ` +
          `active: ${JSON.stringify(process.getActiveResourcesInfo())}`
      );
    }
    await sleep(10);
  }
}
