/**
 * `scripts/doc-versions.mjs`: the versions the docs pin (`npm:@sockeye/x@1.2.3`, `"@sockeye/x": "1.2.3"`) are the
 * packages' versions (this fails after a version bump until `node scripts/doc-versions.mjs` has run), and the checker
 * finds and fixes both forms, leaves other packages, ranges and CHANGELOGs alone.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkDocVersions, updateDocVersions } from "./doc-versions.mjs";

const versions = { "@sockeye/node-http-handler": "1.4.0", "@sockeye/pool-monitor": "1.4.0" };

describe("the repository's docs", () => {
  it("pin the packages' current versions (run `node scripts/doc-versions.mjs` if this fails)", () => {
    expect(updateDocVersions({ write: false })).toEqual([]);
  });
});

describe("checkDocVersions", () => {
  it("finds and fixes `name@version` and package.json-style pins, keeping ^ and ~", () => {
    const text = [
      "```json",
      '{ "dependencies": { "@sockeye/node-http-handler": "^1.3.2" },',
      '  "overrides": { "@smithy/node-http-handler": "npm:@sockeye/node-http-handler@1.3.2" } }',
      "```",
      "npm install @sockeye/pool-monitor@0.9.0-rc.1",
    ].join("\n");
    const { mismatches, fixed } = checkDocVersions(text, versions);
    expect(mismatches).toEqual([
      { line: 2, name: "@sockeye/node-http-handler", found: "1.3.2", expected: "1.4.0" },
      { line: 3, name: "@sockeye/node-http-handler", found: "1.3.2", expected: "1.4.0" },
      { line: 5, name: "@sockeye/pool-monitor", found: "0.9.0-rc.1", expected: "1.4.0" },
    ]);
    expect(fixed).toBe(text.replaceAll("1.3.2", "1.4.0").replace("0.9.0-rc.1", "1.4.0"));
    expect(checkDocVersions(fixed, versions).mismatches).toEqual([]);
  });

  it("ignores current versions, unknown packages, other scopes and version-less mentions", () => {
    const text = [
      '"@sockeye/node-http-handler": "1.4.0"',
      "@sockeye/demo@0.0.1 @smithy/node-http-handler@4.14.2 `@sockeye/pool-monitor` 1.0.0",
      "@sockeye/node-http-handler 0.1.0 (a benchmark record names the version it measured)",
    ].join("\n");
    expect(checkDocVersions(text, versions)).toEqual({ mismatches: [], fixed: text });
  });
});

describe("updateDocVersions", () => {
  const root = mkdtempSync(join(tmpdir(), "doc-versions-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reads tracked Markdown files except CHANGELOGs and changesets, and rewrites stale ones with write", () => {
    mkdirSync(join(root, "pkg"));
    mkdirSync(join(root, ".changeset"));
    const stale = "npm:@sockeye/pool-monitor@1.0.0\n";
    writeFileSync(join(root, "README.md"), stale);
    writeFileSync(join(root, "pkg", "CHANGELOG.md"), stale);
    writeFileSync(join(root, ".changeset", "a.md"), stale);
    writeFileSync(join(root, "untracked.md"), stale);
    execFileSync("git", ["init", "-q"], { cwd: root });
    execFileSync("git", ["add", "README.md", "pkg/CHANGELOG.md", ".changeset/a.md"], { cwd: root });
    expect(updateDocVersions({ write: false, root, versions })).toEqual([
      "README.md:1: @sockeye/pool-monitor 1.0.0, but the package is 1.4.0",
    ]);
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe(stale);
    updateDocVersions({ write: true, root, versions });
    expect(readFileSync(join(root, "README.md"), "utf8")).toBe("npm:@sockeye/pool-monitor@1.4.0\n");
    expect(updateDocVersions({ write: false, root, versions })).toEqual([]);
  });
});
