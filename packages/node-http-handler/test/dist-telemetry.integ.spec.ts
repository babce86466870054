/**
 * The BUILT packages agree on the names of the pool monitor's per-request fields. `NodeHttpHandler`'s request object
 * (`InFlightRequest`) carries the monitor's `RequestState` fields and `@sockeye/pool-monitor`'s functions read and
 * link them (queue list, open responses, socket state); each package's dist renames members of its own
 * (`scripts/mangle-props.mjs`), so a name renamed on one side only would break telemetry in the dist while every
 * spec on the sources passes. A child process loads the dist by name (as a consumer would) and reports the
 * monitor's figures for requests queued in the handler's gate and in a shared agent's `agent.requests`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const REPO_ROOT = join(__dirname, "..", "..", "..");
const CHILD = join(__dirname, "fixtures", "dist-telemetry-child.cjs");

describe("telemetry through the built dist", () => {
  it("queued requests (handler gate, agent queue) are counted, aged and released as on the sources", async () => {
    for (const dir of [join(__dirname, "..", "dist"), join(REPO_ROOT, "packages", "pool-monitor", "dist")]) {
      expect(existsSync(join(dir, "index.js")), `${dir} is missing: run \`npm run build\``).toBe(true);
    }
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CHILD], {
      cwd: REPO_ROOT,
      timeout: 20_000,
    });
    expect(stderr).toBe("");
    const out = JSON.parse(stdout);
    // Two of three waiting in the gate, the oldest aged from handle(); then all completed on one connection.
    expect(out.gated).toMatchObject({ active: 1, queued: 2, inFlight: 3, created: 1 });
    expect(out.gated.oldestQueuedMs).toBeGreaterThanOrEqual(20);
    // Aborted while in the gate: request:finished carries the handler's error, the method and the time in queue.
    expect(out.abortedError).toBe("AbortError");
    expect(out.abortedEvent).toMatchObject({ method: "GET", outcome: "aborted", errorType: "AbortError" });
    expect(out.abortedEvent.queuedMs).toBeGreaterThanOrEqual(0);
    expect(out.gatedStatus).toEqual([200, 200, 200]);
    expect(out.gatedAfter).toMatchObject({
      active: 0,
      queued: 0,
      inFlight: 0,
      oldestQueuedMs: 0,
      created: 1,
      requests: { started: 4, completed: 3, failed: 0, aborted: 1, timedOut: 0, queueFull: 0 },
    });
    // In agent.requests behind another user's request: counted as queued there, then completed.
    expect(out.agentRequests).toBe(1);
    expect(out.agentQueued).toMatchObject({ queued: 1, inFlight: 1 });
    expect(out.agentQueued.oldestQueuedMs).toBeGreaterThanOrEqual(20);
    expect(out.agentStatus).toBe(200);
    expect(out.agentAfter).toMatchObject({
      queued: 0,
      inFlight: 0,
      requests: { started: 1, completed: 1, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 },
    });
  });
});
