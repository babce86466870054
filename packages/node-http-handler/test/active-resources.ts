/**
 * Counts the process's ref'd resources (`process.getActiveResourcesInfo()`): ref'd `Timeout`s (unref'd timers are
 * not listed) and other ref'd handles (sockets, servers). Immediates and fs callbacks are left out (they come and
 * go with every turn). Suites compare a count after a run with one taken before it.
 */

/** Ref'd timers and other ref'd handles right now. */
export function activeResources(): { timers: number; handles: number } {
  let timers = 0;
  let handles = 0;
  for (const type of process.getActiveResourcesInfo()) {
    if (type === "Timeout") timers++;
    else if (type !== "Immediate" && type !== "FSReqCallback") handles++;
  }
  return { timers, handles };
}
