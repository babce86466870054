/**
 * A process that used the handler must exit on its own once its work is done, without `destroy()`: the shared
 * interval and short native timers are unref'd and stop, and pooled keep-alive sockets are unref'd by Node's
 * Agent. A child node process loads the BUILT package (dist/index.js), talks to servers in this (parent) process
 * with long timeouts configured, and returns; it must exit with code 0 shortly after reporting. Upstream runs the
 * same script as a control.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FIXTURES_DIR, startServer, type TestServer } from "./servers";

const PACKAGE_DIR = join(__dirname, "..");
const SOCKEYE_DIST = join(PACKAGE_DIR, "dist", "index.js");
const UPSTREAM_CJS = require.resolve("@smithy/node-http-handler");
const CHILD = join(FIXTURES_DIR, "exit-on-idle-child.mjs");
const CA_PATH = join(FIXTURES_DIR, "localhost-cert.pem");

/** Exit must follow the child's report within this many ms. */
const EXIT_AFTER_REPORT_MS = 3000;
/** Hard limit before the child is killed and the test fails. */
const KILL_AFTER_MS = 10_000;

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  report: { done: boolean; outcomes: { status?: number; bytes?: number; error?: string; code?: string }[] } | undefined;
  reportedAt: number;
  exitedAt: number;
  stderr: string;
}

let httpServer: TestServer;
let httpsServer: TestServer;

beforeAll(async () => {
  httpServer = await startServer("http");
  httpsServer = await startServer("https");
});
afterAll(async () => {
  await httpServer.close();
  await httpsServer.close();
});

function runChild(entry: string): Promise<ChildResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, entry, String(httpServer.port), String(httpsServer.port), CA_PATH], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let reportedAt = Number.NaN;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
      if (Number.isNaN(reportedAt) && stdout.includes("\n")) reportedAt = performance.now();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
    child.on("exit", (code, signal) => {
      clearTimeout(killer);
      const exitedAt = performance.now();
      let report: ChildResult["report"];
      try {
        report = JSON.parse(stdout.split("\n")[0]);
      } catch {
        report = undefined;
      }
      resolve({ code, signal, report, reportedAt, exitedAt, stderr });
    });
  });
}

const EXPECTED_OUTCOMES = [
  { status: 200 },
  { status: 200, bytes: 100000 },
  { status: 200 },
  { error: "AbortError" },
  { error: "TimeoutError", code: "ETIMEDOUT" },
];

describe("exit on idle", () => {
  it.each([
    ["@sockeye/node-http-handler (dist/index.js)", SOCKEYE_DIST],
    ["@smithy/node-http-handler (control)", UPSTREAM_CJS],
  ])("a process that used %s exits on its own without destroy()", async (_name, entry) => {
    expect(
      existsSync(entry),
      `${entry} is missing: run \`npx turbo run build --filter=@sockeye/node-http-handler\``
    ).toBe(true);
    const result = await runChild(entry);
    expect(result.stderr).toBe("");
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    expect(result.report?.done).toBe(true);
    const outcomes = result.report!.outcomes;
    expect(outcomes).toHaveLength(2 * EXPECTED_OUTCOMES.length);
    for (let i = 0; i < outcomes.length; i++) {
      expect(outcomes[i]).toMatchObject(EXPECTED_OUTCOMES[i % EXPECTED_OUTCOMES.length]);
    }
    expect(result.exitedAt - result.reportedAt).toBeLessThan(EXIT_AFTER_REPORT_MS);
  });
});
