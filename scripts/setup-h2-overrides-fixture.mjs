#!/usr/bin/env node
/**
 * Installs the HTTP/2 overrides fixture from scratch into `.cache/h2-overrides-fixture/` (outside every workspace):
 *
 *   1. `npm pack` the BUILT `@sockeye/node-http-handler` and `@sockeye/pool-monitor` into `vendor/` (stable names);
 *   2. copy the fixture's `package.json` (its `overrides` map `@smithy/node-http-handler` to the Sockeye tarball) and
 *      its committed `package-lock.json` (registry packages pinned; the two local tarballs carry no integrity, as
 *      they are rebuilt from the working tree);
 *   3. copy `run-clients.mjs` (the consumer program the test runs there);
 *   4. `npm ci` (registry packages only, no scripts), bounded in time.
 *
 * Run by `packages/node-http-handler/test/http2/overrides-fixture.integ.spec.ts` in its `beforeAll`, or by hand:
 * `node scripts/setup-h2-overrides-fixture.mjs`. Build the two packages first (`npx turbo run build`).
 * Exits non-zero with the failing step's output.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "packages/node-http-handler/test/http2/overrides-fixture");
const target = join(root, ".cache/h2-overrides-fixture");
const vendor = join(target, "vendor");
const INSTALL_TIMEOUT_MS = 240_000;

function run(command, args, cwd, timeout = 120_000) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    timeout,
    env: { ...process.env, npm_config_fund: "false" },
  });
  if (result.status !== 0) {
    const why = result.error ? String(result.error) : `exit ${result.status}`;
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed: ${why}\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

for (const pkg of ["pool-monitor", "node-http-handler"]) {
  if (!existsSync(join(root, "packages", pkg, "dist/index.js"))) {
    throw new Error(`packages/${pkg}/dist is missing: build it first (npx turbo run build --filter=@sockeye/${pkg}).`);
  }
}

rmSync(target, { recursive: true, force: true });
mkdirSync(vendor, { recursive: true });
for (const [pkg, name] of [
  ["node-http-handler", "sockeye-node-http-handler.tgz"],
  ["pool-monitor", "sockeye-pool-monitor.tgz"],
]) {
  run("npm", ["pack", "--ignore-scripts", "--pack-destination", vendor], join(root, "packages", pkg));
  const packed = readdirSync(vendor).find((f) => f.startsWith(`sockeye-${pkg}-`) && f.endsWith(".tgz"));
  if (packed === undefined) throw new Error(`npm pack produced no tarball for ${pkg}`);
  renameSync(join(vendor, packed), join(vendor, name));
}
copyFileSync(join(source, "package.json"), join(target, "package.json"));
copyFileSync(join(source, "package-lock.json"), join(target, "package-lock.json"));
copyFileSync(join(source, "run-clients.mjs"), join(target, "run-clients.mjs"));
run("npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline"], target, INSTALL_TIMEOUT_MS);
process.stdout.write(`h2 overrides fixture installed in ${target}\n`);
