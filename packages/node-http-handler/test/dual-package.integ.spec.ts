/**
 * One implementation per published package, whichever way it is loaded (the dual-package hazard).
 *
 * Each package's `exports` map sends Node to ONE build for both `import` and `require` (the CommonJS one; Node's ESM
 * loader finds its named exports), and bundlers to the ESM build through the `module` condition, again for both. So:
 *
 * - in Node, an ESM app and a CommonJS dependency of it (the AWS SDK's own `dist-cjs`, say) get the same class, and
 *   the handler's state (pools, monitors, the set of agents it owns) is never split between two copies;
 * - in a bundle of an ESM app that aliases `@smithy/node-http-handler` to Sockeye (the README's `overrides`, done
 *   the bundler's way), `import` and `require` of the package share one copy, and the bundle carries one build.
 *
 * Runs the BUILT packages (dist), resolved by name from the repository root, as a consumer would.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = join(__dirname, "..", "..", "..");
const run = promisify(execFile);

/** Each published package and one class it exports. */
const PACKAGES = [
  ["@sockeye/pool-monitor", "PoolMonitor"],
  ["@sockeye/node-http-handler", "NodeHttpHandler"],
  ["@sockeye/node-http-handler", "NodeHttp2Handler"],
  ["@sockeye/undici-http-handler", "UndiciHttpHandler"],
  ["@sockeye/opentelemetry", "registerPoolMetrics"],
] as const;

describe("one implementation per package (dual-package hazard)", () => {
  const appDir = join(REPO_ROOT, ".cache", "dual-package-app");

  afterAll(() => rmSync(appDir, { recursive: true, force: true }));

  it("in Node, import and require of each package give the same export, from one file", async () => {
    // An ESM script that requires too (createRequire), as an ESM app with CommonJS dependencies does.
    const probe = `
      import { createRequire } from "node:module";
      const require = createRequire(import.meta.url);
      const out = [];
      for (const [name, exported] of ${JSON.stringify(PACKAGES)}) {
        const esm = await import(name);
        const cjs = require(name);
        out.push({ name, exported, type: typeof esm[exported], same: esm[exported] === cjs[exported] });
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", probe], {
      cwd: REPO_ROOT,
      timeout: 20_000,
    });
    expect(stderr).toBe("");
    expect(JSON.parse(stdout)).toEqual(
      PACKAGES.map(([name, exported]) => ({ name, exported, type: "function", same: true }))
    );
  });

  it("a bundle of an ESM app with @smithy/node-http-handler aliased to Sockeye holds one copy, shared by import and require", async () => {
    mkdirSync(appDir, { recursive: true });
    // The app imports the upstream name (aliased), and a CommonJS module of the app requires it, as the SDK's
    // CommonJS builds do.
    writeFileSync(
      join(appDir, "legacy.cjs"),
      `module.exports = { Required: require("@smithy/node-http-handler").NodeHttpHandler };\n`
    );
    writeFileSync(
      join(appDir, "app.mjs"),
      [
        `import { NodeHttpHandler } from "@smithy/node-http-handler";`,
        `import legacy from "./legacy.cjs";`,
        `const handler = new NodeHttpHandler();`,
        `console.log(JSON.stringify({ same: legacy.Required === NodeHttpHandler, protocol: handler.metadata.handlerProtocol }));`,
        `handler.destroy();`,
      ].join("\n")
    );
    const outfile = join(appDir, "bundle.mjs");
    const result = await build({
      absWorkingDir: REPO_ROOT,
      entryPoints: [join(appDir, "app.mjs")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile,
      metafile: true,
      logLevel: "silent",
      alias: { "@smithy/node-http-handler": "@sockeye/node-http-handler" },
      // Node built-ins a CommonJS chunk requires at run time in an ESM bundle.
      banner: { js: `import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);` },
    });
    const inputs = Object.keys(result.metafile.inputs).filter((path) => path.includes("/dist/"));
    const sockeyeBuilds = inputs.filter((path) => /packages\/(node-http-handler|pool-monitor)\/dist\//.test(path));
    // The ESM build of each package, once; never its CommonJS build beside it.
    expect(sockeyeBuilds.sort()).toEqual([
      "packages/node-http-handler/dist/index.mjs",
      "packages/pool-monitor/dist/index.mjs",
      "packages/pool-monitor/dist/internal.mjs",
    ]);
    // The core's two entry points hold its code once: the public one only re-exports from the internal one.
    const publicEntry = readFileSync(join(REPO_ROOT, "packages/pool-monitor/dist/index.mjs"), "utf8");
    expect(publicEntry).toMatch(/from "\.\/internal\.mjs"/);
    expect(publicEntry).not.toMatch(/\bclass\b|\bfunction\b/);
    const { stdout } = await run(process.execPath, [outfile], { cwd: appDir, timeout: 20_000 });
    expect(JSON.parse(stdout)).toEqual({ same: true, protocol: "http/1.1" });
  });
});
