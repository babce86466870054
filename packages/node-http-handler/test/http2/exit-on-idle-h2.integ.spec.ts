/**
 * An idle process exits: a child makes HTTP/2 requests through the built handler (with requestTimeout,
 * sessionTimeout and connectionTimeout set) and returns without destroy(); it must exit by itself while the parent's
 * server keeps its side of the sessions open.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type H2TestServer, startH2Server } from "./h2-servers";

const DIST = join(__dirname, "..", "..", "dist", "index.js");
let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server();
});
afterAll(async () => {
  await server.close();
});

it("a process with idle pooled sessions and no in-flight stream exits without destroy()", async () => {
  expect(existsSync(DIST)).toBe(true);
  const child = spawn(process.execPath, [join(__dirname, "exit-on-idle-h2-child.mjs")], {
    env: {
      ...process.env,
      H2_PORT: String(server.port),
      H2_CA: join(__dirname, "..", "fixtures", "localhost-cert.pem"),
      HANDLER_DIST: DIST,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const code = await new Promise<number | string>((resolve) => {
    const guard = setTimeout(() => {
      child.kill("SIGKILL");
      resolve("did not exit within 15 s");
    }, 15_000);
    child.on("exit", (c) => {
      clearTimeout(guard);
      resolve(c ?? -1);
    });
  });
  expect(stderr).toBe("");
  expect(code).toBe(0);
  expect(stdout.trim()).toBe("done 10 true");
  // The pooled session is still open on the server side: the child exited because it was unref'd, not closed.
  expect(server.sessionsAccepted).toBeGreaterThanOrEqual(2);
});
