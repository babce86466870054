/**
 * A request in flight keeps the process alive as upstream's does, when nothing else would: an `S3Client` `PutObject`
 * of 3 MiB (`Expect: 100-continue`) answered by `nock` or by `msw`, where no socket exists and only the handler's
 * continue wait (6 s, as upstream) stands between the request and its body. Each case is a child process
 * (`fixtures/mocked-upload-child.mjs`) loading the BUILT package, so that nothing of the test runner holds its event
 * loop; upstream `@smithy/node-http-handler` 4.14.2 runs the same program side by side. The four children run at
 * once (about 6 s in all). That an idle handler keeps nothing alive is `exit-on-idle.integ.spec.ts`.
 *
 * `nock` and `msw` intercept node:http only: `NodeHttp2Handler` and `UndiciHttpHandler` have no such mocks (undici's
 * own `MockAgent` replaces the dispatcher, whose replies hold the loop themselves).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { FIXTURES_DIR } from "./servers";

const CHILD = join(FIXTURES_DIR, "mocked-upload-child.mjs");
const ENTRIES = {
  sockeye: join(__dirname, "..", "dist", "index.js"),
  smithy: require.resolve("@smithy/node-http-handler"),
};

interface Outcome {
  code: number | null;
  report: { status?: number; error?: string; received: number; expect: string; waitedMs: number } | undefined;
  stderr: string;
}

function run(entry: string, mock: "nock" | "msw"): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, entry, mock], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    const kill = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("exit", (code) => {
      clearTimeout(kill);
      const line = stdout.split("\n").find((l) => l.startsWith("{"));
      resolve({ code, report: line === undefined ? undefined : JSON.parse(line), stderr });
    });
  });
}

it("a mocked 100-continue upload (nock, msw) completes after the continue wait, as upstream's", async () => {
  const cases = (["sockeye", "smithy"] as const).flatMap((handler) =>
    (["nock", "msw"] as const).map((mock) => ({ handler, mock }))
  );
  const outcomes = await Promise.all(cases.map((c) => run(ENTRIES[c.handler], c.mock)));
  const table = Object.fromEntries(
    cases.map((c, i) => {
      const o = outcomes[i];
      return [`${c.handler} ${c.mock}`, { code: o.code, status: o.report?.status, received: o.report?.received }];
    })
  );
  const done = { code: 0, status: 200, received: 3 * 1024 * 1024 };
  expect(table).toEqual({
    "sockeye nock": done,
    "sockeye msw": done,
    "smithy nock": done,
    "smithy msw": done,
  });
  for (const o of outcomes) {
    expect(o.report?.expect).toBe("100-continue");
    // Sent when the continue wait ran out (6 s), not before and not much after.
    expect(o.report?.waitedMs).toBeGreaterThanOrEqual(5900);
    expect(o.report?.waitedMs).toBeLessThan(9000);
  }
}, 30_000);
