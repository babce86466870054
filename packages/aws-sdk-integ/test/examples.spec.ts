/**
 * Every example program that the docs show (`packages/*\/examples/*.mjs`, copied into the Markdown by
 * `scripts/doc-examples.mjs`) runs as a user would run it: `node <file>` in a fresh process, with the environment a
 * user sets for an emulator (`AWS_ENDPOINT_URL`, credentials, region) pointing at moto. Each must exit 0 on its own
 * (no handle left open), print no error or warning, and print what it says it prints.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { motoEndpoint } from "./support/aws-clients.js";

const PACKAGES = join(__dirname, "..", "..");

/** What each example prints on stdout, line by line (regular expressions, in order). */
const EXPECTED: Record<string, RegExp[]> = {
  "node-http-handler/examples/quick-start.mjs": [
    /^buckets: \d+$/,
    /^pool http:\/\/127\.0\.0\.1:\d+: active \d+, idle \d+, queued 0$/,
  ],
  "node-http-handler/examples/migrate-from-upstream.mjs": [/^buckets: \d+$/],
  "node-http-handler/examples/logger.mjs": [/^tables: \d+$/, /^tables: \d+$/],
  "node-http-handler/examples/agents.mjs": [/^buckets: \d+$/, /^buckets: \d+$/],
  "pool-monitor/examples/standalone.mjs": [/^pool http:\/\/127\.0\.0\.1:\d+: active 0, idle 1, completed 1$/],
  "undici-http-handler/examples/quick-start.mjs": [
    /^buckets: \d+$/,
    /^pool http:\/\/127\.0\.0\.1:\d+: active \d+, idle \d+, queued 0$/,
    /^events: .*request:acquired/,
  ],
};

const EXAMPLES = readdirSync(PACKAGES).flatMap((pkg) => {
  try {
    return readdirSync(join(PACKAGES, pkg, "examples"))
      .filter((file) => file.endsWith(".mjs"))
      .map((file) => `${pkg}/examples/${file}`);
  } catch {
    return [];
  }
});

describe("the docs' example programs", () => {
  it("every example has its expectations here (none runs unchecked)", () => {
    const unchecked = EXAMPLES.filter(
      (example) => !example.startsWith("opentelemetry/") && EXPECTED[example] === undefined
    );
    expect(unchecked).toEqual([]);
  });

  it.each(Object.keys(EXPECTED))("%s runs against moto and prints what it says", async (example) => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(PACKAGES, example)], {
      cwd: join(PACKAGES, example.split("/")[0]),
      timeout: 30_000,
      env: {
        PATH: process.env.PATH,
        AWS_ENDPOINT_URL: motoEndpoint(),
        AWS_ACCESS_KEY_ID: "AKIDSOCKEYETEST",
        AWS_SECRET_ACCESS_KEY: "sockeye-test-secret",
        AWS_REGION: "us-east-1",
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
      },
    });
    expect(stderr).toBe("");
    const lines = stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(EXPECTED[example].length);
    for (const [i, pattern] of EXPECTED[example].entries()) expect(lines[i]).toMatch(pattern);
  });
});
