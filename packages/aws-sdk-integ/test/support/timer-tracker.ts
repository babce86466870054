/**
 * Tracks every `Timeout` (setTimeout / setInterval, ref'd or unref'd) created while it is enabled, through an
 * `async_hooks` hook: `init` records the creation stack, `destroy` (emitted once a timer fired without being
 * refreshed, or was cleared) forgets it. What remains after a test's client is destroyed is a timer that would
 * still fire later: a leak even when it is unref'd and invisible to `process.getActiveResourcesInfo()`.
 *
 * Cost: one Map entry and one captured stack per timer while enabled; only the hygiene spec enables it.
 */
import { createHook } from "node:async_hooks";
import { setTimeout as sleep } from "node:timers/promises";

/** @internal */
export interface TimerTracker {
  /** Creation stacks of the timers created since `start` that are still alive. */
  alive(): string[];
  /** Resolves when every timer created since `start` is gone; throws with their stacks after `withinMs`. */
  expectAllGone(withinMs?: number): Promise<void>;
  stop(): void;
}

/** Starts recording timers created from now on. @internal */
export function trackTimers(): TimerTracker {
  const live = new Map<number, string>();
  const hook = createHook({
    init(asyncId, type) {
      if (type === "Timeout") live.set(asyncId, new Error("timer created here").stack ?? "");
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  hook.enable();
  const ownPolls = new Set<number>();
  return {
    alive: () => [...live].filter(([id]) => !ownPolls.has(id)).map(([, stack]) => stack),
    async expectAllGone(withinMs = 3_000) {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const remaining = [...live].filter(([id]) => !ownPolls.has(id));
        if (remaining.length === 0) return;
        if (Date.now() > deadline) {
          const stacks = remaining.map(([, s]) => s.split("\n").slice(1, 8).join("\n")).join("\n---\n");
          throw new Error(`${remaining.length} timer(s) still alive ${withinMs} ms after destroy:\n${stacks}`);
        }
        // The poll's own timer fires (and is destroyed) before the next look; destroy hooks run asynchronously.
        const before = new Set(live.keys());
        const wait = sleep(20);
        for (const id of live.keys()) if (!before.has(id)) ownPolls.add(id);
        await wait;
      }
    },
    stop() {
      hook.disable();
    },
  };
}
