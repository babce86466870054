/**
 * The BUILT package resolves by name from the repository root through both entry points: `require` (CJS,
 * dist/index.js) and `import` (ESM, dist/index.mjs), each exposing the upstream surface AWS SDK clients use:
 * `NodeHttpHandler`, `DEFAULT_REQUEST_TIMEOUT` and `streamCollector`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const REPO_ROOT = join(__dirname, "..", "..", "..");
const DIST = join(__dirname, "..", "dist");

// Runs in a child `node -e` (a CommonJS script) with the repository root as cwd, so the bare specifier resolves the
// workspace package exactly as a consumer would.
const PROBE = `
const describe = (mod) => {
  const Handler = mod.NodeHttpHandler;
  const handler = typeof Handler === "function" ? new Handler() : undefined;
  return {
    NodeHttpHandler: typeof Handler,
    create: typeof Handler?.create,
    checkSocketUsage: typeof Handler?.checkSocketUsage,
    metadata: handler?.metadata,
    DEFAULT_REQUEST_TIMEOUT: mod.DEFAULT_REQUEST_TIMEOUT,
    streamCollector: typeof mod.streamCollector,
  };
};
const cjs = require("@sockeye/node-http-handler");
const cjsPath = require.resolve("@sockeye/node-http-handler");
import("@sockeye/node-http-handler").then((esm) => {
  process.stdout.write(JSON.stringify({
    cjsPath,
    cjs: describe(cjs),
    esm: describe(esm),
    esmIsNamespace: esm[Symbol.toStringTag] === "Module",
  }));
});
`;

const EXPECTED_SURFACE = {
  NodeHttpHandler: "function",
  create: "function",
  checkSocketUsage: "function",
  metadata: { handlerProtocol: "http/1.1" },
  DEFAULT_REQUEST_TIMEOUT: 0,
  streamCollector: "function",
};

describe("package smoke (built dist, resolved by name)", () => {
  it("require() and import() of @sockeye/node-http-handler expose NodeHttpHandler, DEFAULT_REQUEST_TIMEOUT and streamCollector", async () => {
    for (const file of ["index.js", "index.mjs"]) {
      expect(
        existsSync(join(DIST, file)),
        `dist/${file} is missing: run \`npx turbo run build --filter=@sockeye/node-http-handler\``
      ).toBe(true);
    }
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["-e", PROBE], {
      cwd: REPO_ROOT,
      timeout: 10_000,
    });
    expect(stderr).toBe("");
    const result = JSON.parse(stdout);
    expect(result.cjsPath).toBe(join(DIST, "index.js"));
    expect(result.cjs).toEqual(EXPECTED_SURFACE);
    expect(result.esm).toEqual(EXPECTED_SURFACE);
    expect(result.esmIsNamespace).toBe(true);
  });
});
