/**
 * vitest globalSetup for the `aws` project: starts moto's standalone server (one process for the whole run),
 * hands its endpoint to the test files through `project.provide("motoEndpoint", url)` and stops it in teardown.
 *
 * - moto (run through `scripts/moto-server.py`) comes from the project-local virtualenv made by `bash scripts/setup-moto.sh` (`.cache/moto-venv`, or
 *   `$MOTO_VENV`). If it is missing the run FAILS with the install command; it never skips.
 * - The server binds 127.0.0.1 port 0 (the kernel picks a free port, so there is no probe-then-bind race); the
 *   port is read from werkzeug's "Running on http://127.0.0.1:PORT" line, then we poll until it answers HTTP.
 * - Its stdout/stderr are drained continuously (a full pipe would block the server); only the last lines are kept,
 *   for error messages.
 * - The child is killed in teardown (which vitest runs even when tests fail), on process exit, and, through the
 *   stdin pipe watched by `scripts/moto-server.py`, even when this process dies without running any handler.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Base URL of the moto server, e.g. `http://127.0.0.1:40123` (no trailing slash). */
    motoEndpoint: string;
  }
}

const REPO_ROOT = path.resolve(import.meta.dirname, "../../..");
const WRAPPER = path.join(REPO_ROOT, "scripts", "moto-server.py");
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;
const LOG_LINES_KEPT = 40;
const INSTALL_HINT = "Install it with: bash scripts/setup-moto.sh (from the repository root; needs python3 >= 3.10)";

/**
 * Starts moto, provides `motoEndpoint`, returns the teardown.
 * @internal
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const venv = process.env.MOTO_VENV ?? path.join(REPO_ROOT, ".cache", "moto-venv");
  const bin = path.join(venv, "bin", "moto_server");
  const python = path.join(venv, "bin", "python");
  if (!existsSync(bin) || !existsSync(python)) {
    throw new Error(`aws-sdk-integ: moto_server not found at ${bin}. ${INSTALL_HINT}`);
  }

  const log: string[] = [];
  // scripts/moto-server.py runs moto in-process and exits when its stdin (a pipe we hold) closes, so even a
  // SIGKILLed test run leaves no orphaned server behind.
  const child = spawn(python, [WRAPPER, "--host", "127.0.0.1", "--port", "0"], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, PYTHONUNBUFFERED: "1", NO_COLOR: "1" },
  });
  const killOnExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killOnExit);

  try {
    const endpoint = await waitForListeningLine(child, log);
    await waitUntilAnswering(endpoint, child, log);
    project.provide("motoEndpoint", endpoint);
  } catch (error) {
    await stop(child);
    process.removeListener("exit", killOnExit);
    throw error;
  }

  return async () => {
    await stop(child);
    process.removeListener("exit", killOnExit);
  };
}

function describeFailure(what: string, log: readonly string[]): Error {
  const tail = log.length > 0 ? `\n--- moto_server output (last ${log.length} lines) ---\n${log.join("\n")}` : "";
  return new Error(`aws-sdk-integ: ${what}. ${INSTALL_HINT}${tail}`);
}

/** Resolves with `http://127.0.0.1:PORT` once moto prints its listening line; keeps draining output afterwards. */
function waitForListeningLine(child: ChildProcess, log: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settle(describeFailure(`moto_server did not report a listening port within ${START_TIMEOUT_MS} ms`, log));
    }, START_TIMEOUT_MS);
    function settle(result: string | Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.removeListener("exit", onExit);
      child.removeListener("error", onError);
      if (typeof result === "string") resolve(result);
      else reject(result);
    }
    function onExit(code: number | null, signal: NodeJS.Signals | null): void {
      settle(describeFailure(`moto_server exited during startup (code ${code}, signal ${signal})`, log));
    }
    function onError(error: Error): void {
      settle(describeFailure(`could not start moto_server: ${error.message}`, log));
    }
    child.once("exit", onExit);
    child.once("error", onError);
    const onData = (chunk: Buffer): void => {
      for (const line of chunk.toString("utf8").split(/\r?\n/)) {
        if (line.trim() === "") continue;
        log.push(line);
        if (log.length > LOG_LINES_KEPT) log.shift();
        const match = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (match) settle(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
  });
}

/** Polls `GET /moto-api/` until moto answers any HTTP status. */
async function waitUntilAnswering(endpoint: string, child: ChildProcess, log: readonly string[]): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw describeFailure(`moto_server exited (code ${child.exitCode})`, log);
    if (await answers(`${endpoint}/moto-api/`)) return;
    if (Date.now() > deadline) throw describeFailure(`moto_server at ${endpoint} did not answer HTTP in time`, log);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.once("end", () => resolve(true));
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(false));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), STOP_TIMEOUT_MS);
  });
  if ((await Promise.race([exited, timedOut])) === "timeout") {
    child.kill("SIGKILL");
    await exited;
  }
  clearTimeout(timer);
}
