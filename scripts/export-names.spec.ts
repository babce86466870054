/**
 * Every exported class and function of every entry point (`exports` of package.json: `.`, and
 * `@sockeye/pool-monitor/internal`) of every published package keeps its real `name` in the built CJS and ESM
 * output (tsup `keepNames`): `NodeHttpHandler.name === "NodeHttpHandler"`, as upstream's, not a bundler artefact
 * such as `"_NodeHttpHandler"` that would show in `util.inspect`, stack traces and logs.
 * Reads the packages' `dist/` (built by `npm test` before vitest runs).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { publishedPackages } from "./lib/published-packages.mjs";

const require = createRequire(import.meta.url);

/** `[exportName, value.name]` of every exported function (classes included). */
function functionNames(moduleNamespace: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(moduleNamespace)
    .filter(([key, value]) => key !== "default" && typeof value === "function")
    .map(([key, value]) => [key, (value as { name: string }).name]);
}

interface EntryPoint {
  /** import specifier, e.g. `@sockeye/pool-monitor/internal` */
  specifier: string;
  cjsFile: string;
  esmFile: string;
}

/** The code entry points of a package's `exports` map (`./package.json` and the like excluded). */
function entryPoints(pkg: { name: string; dir: string; manifest: Record<string, any> }): EntryPoint[] {
  const out: EntryPoint[] = [];
  for (const [subpath, target] of Object.entries<any>(pkg.manifest.exports ?? {})) {
    // Node loads `default` (the CommonJS build) for import and require alike; bundlers load `module` (ESM).
    const cjs = target?.default;
    const esm = target?.module;
    if (typeof cjs !== "string" || typeof esm !== "string") continue;
    out.push({
      specifier: subpath === "." ? pkg.name : `${pkg.name}/${subpath.replace(/^\.\//, "")}`,
      cjsFile: join(pkg.dir, cjs),
      esmFile: join(pkg.dir, esm),
    });
  }
  return out;
}

const entries = publishedPackages().flatMap((p) => entryPoints(p).map((e) => [e.specifier, e] as const));

describe.each(entries)("%s keeps export names", (_specifier, { cjsFile, esmFile }) => {
  it("is built", () => {
    expect(existsSync(cjsFile), `${cjsFile} is missing: build the package first`).toBe(true);
    expect(existsSync(esmFile), `${esmFile} is missing: build the package first`).toBe(true);
  });

  it("CJS: every exported class/function's name is its export name", () => {
    const names = functionNames(require(cjsFile));
    expect(names.length).toBeGreaterThan(0);
    for (const [key, name] of names) expect(name, `CJS export ${key}`).toBe(key);
  });

  it("ESM: every exported class/function's name is its export name, and CJS and ESM export the same names", async () => {
    const esm = functionNames(await import(pathToFileURL(esmFile).href));
    for (const [key, name] of esm) expect(name, `ESM export ${key}`).toBe(key);
    expect(esm.map(([k]) => k).sort()).toEqual(
      functionNames(require(cjsFile))
        .map(([k]) => k)
        .sort()
    );
  });
});

it("covers the main entry points and @sockeye/pool-monitor/internal", () => {
  const specifiers = entries.map(([s]) => s);
  for (const p of publishedPackages()) expect(specifiers).toContain(p.name);
  expect(specifiers).toContain("@sockeye/pool-monitor/internal");
});

it("covers NodeHttpHandler, the class the issue was about", () => {
  const handler = publishedPackages().find((p) => p.name === "@sockeye/node-http-handler");
  expect(handler).toBeDefined();
  const mod = require(join(handler!.dir, handler!.manifest.main));
  expect(mod.NodeHttpHandler.name).toBe("NodeHttpHandler");
});
