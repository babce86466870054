/** `scripts/check-package.mjs`: a complete package passes; each missing piece is reported by name. */
import { describe, expect, it } from "vitest";
import { markdownLinkTargets, packageProblems, readmeLinkProblems } from "./check-package.mjs";

const LICENSE = "Apache License\nVersion 2.0\n";
const complete = () => ({
  manifest: {
    name: "@sockeye/x",
    description: "x",
    license: "Apache-2.0",
    author: "The Sockeye Authors",
    repository: { type: "git", url: "git+https://example.invalid/sockeye.git", directory: "packages/x" },
    homepage: "https://example.invalid/sockeye",
    bugs: { url: "https://example.invalid/sockeye/issues" },
    keywords: ["http"],
    engines: { node: ">=20" },
    publishConfig: { access: "public" },
    main: "./dist/index.js",
    module: "./dist/index.mjs",
    types: "./dist/index.d.ts",
  } as Record<string, any>,
  files: ["package.json", "README.md", "LICENSE", "CHANGELOG.md", "dist/index.js", "dist/index.mjs", "dist/index.d.ts"],
  relDir: "packages/x",
  contents: {
    "README.md": "# @sockeye/x\n\n1\n2\n3\n4\n5\n6\n7\n8\n9\n",
    LICENSE,
    "CHANGELOG.md": "# @sockeye/x\n\n## 0.1.0\n",
  } as Record<string, string>,
});
const run = (c: ReturnType<typeof complete>) =>
  packageProblems({
    manifest: c.manifest,
    files: c.files,
    relDir: c.relDir,
    readPacked: (p: string) => (c.files.includes(p) ? c.contents[p] : undefined),
    rootLicense: LICENSE,
  });

describe("packageProblems", () => {
  it("accepts a complete package", () => {
    expect(run(complete())).toEqual([]);
  });

  it.each(["README.md", "LICENSE", "CHANGELOG.md"])("reports a tarball without %s", (file) => {
    const c = complete();
    c.files = c.files.filter((f) => f !== file);
    expect(run(c)).toEqual([`the tarball has no ${file}`]);
  });

  it.each([
    ["author", 'package.json has no "author"'],
    ["homepage", 'package.json has no "homepage"'],
    ["bugs", 'package.json has no "bugs"'],
    ["keywords", 'package.json has no "keywords"'],
    ["publishConfig", '"publishConfig.access" is not "public"'],
    ["repository", '"repository" must be { type: "git", url, directory }'],
    ["description", 'package.json has no "description"'],
  ])("reports a manifest without %s", (field, problem) => {
    const c = complete();
    delete c.manifest[field];
    expect(run(c)).toEqual([problem]);
  });

  it("accepts exact @sockeye/* dependencies and reports ranges (the core's internal API may change in any release)", () => {
    const c = complete();
    c.manifest.dependencies = { "@sockeye/pool-monitor": "0.1.0", "@smithy/types": "^4.20.0" };
    expect(run(c)).toEqual([]);
    c.manifest.dependencies = { "@sockeye/pool-monitor": "^0.1.0", "@sockeye/other": "~1.2.3-rc.1" };
    expect(run(c)).toEqual([
      'dependency @sockeye/pool-monitor is "^0.1.0", not an exact version (the handlers use its internal API)',
      'dependency @sockeye/other is "~1.2.3-rc.1", not an exact version (the handlers use its internal API)',
    ]);
  });

  it("reports a repository.directory that is not the package folder", () => {
    const c = complete();
    c.manifest.repository.directory = "packages/y";
    expect(run(c)).toEqual(['"repository.directory" is "packages/y", not "packages/x"']);
  });

  it("reports a LICENSE that differs from the root one, a stub README and a foreign CHANGELOG", () => {
    const c = complete();
    c.contents.LICENSE = "MIT";
    c.contents["README.md"] = "# x\n";
    c.contents["CHANGELOG.md"] = "# other\n";
    expect(run(c)).toEqual([
      "README.md is a stub (< 10 lines)",
      "LICENSE differs from the repository's LICENSE",
      'CHANGELOG.md does not start with "# @sockeye/x"',
    ]);
  });

  it("reports a main that is not in the tarball", () => {
    const c = complete();
    c.files = c.files.filter((f) => f !== "dist/index.js");
    expect(run(c)).toEqual(['"main" points at ./dist/index.js, not in the tarball']);
  });
});

describe("readmeLinkProblems", () => {
  const files = ["package.json", "README.md", "LICENSE", "CHANGELOG.md", "dist/index.js"];

  it("accepts absolute URLs, anchors, mailto and links to packed files", () => {
    const readme = [
      "[docs](https://github.com/o/r/blob/main/docs/x.md) [opts](#options) [mail](mailto:a@b.invalid)",
      "[Changelog](CHANGELOG.md) · [License](./LICENSE) [code](dist/index.js) [dist](dist/)",
      '<img src="https://example.invalid/x.png"> [ref]: https://example.invalid/y',
    ].join("\n");
    expect(readmeLinkProblems(readme, files)).toEqual([]);
  });

  it("reports links that leave the package and links to files not in the tarball", () => {
    const readme = [
      "See [parity](../../docs/upstream-parity.md#http2) and [`@sockeye/x`](../x).",
      "[root](/docs/a.md) [example](examples/run.mjs)",
      '<a href="../y/README.md">y</a>',
      "[arch]: ../../docs/ARCHITECTURE.md",
    ].join("\n");
    expect(readmeLinkProblems(readme, files)).toEqual([
      "README.md links to ../../docs/upstream-parity.md#http2, outside the package (a 404 on npmjs.com; use the repository URL)",
      "README.md links to ../x, outside the package (a 404 on npmjs.com; use the repository URL)",
      "README.md links to /docs/a.md, outside the package (a 404 on npmjs.com; use the repository URL)",
      "README.md links to examples/run.mjs, which is not in the tarball (use the repository URL)",
      "README.md links to ../../docs/ARCHITECTURE.md, outside the package (a 404 on npmjs.com; use the repository URL)",
      "README.md links to ../y/README.md, outside the package (a 404 on npmjs.com; use the repository URL)",
    ]);
  });

  it("ignores link syntax inside code", () => {
    const readme = "```ts\nconst a = [x](../../nope);\n```\nand `[y](../nope)` inline\n";
    expect(markdownLinkTargets(readme)).toEqual([]);
  });

  it("is part of packageProblems", () => {
    const c = complete();
    c.contents["README.md"] += "[docs](../../docs/aws-sdk.md)\n";
    expect(run(c)).toEqual([
      "README.md links to ../../docs/aws-sdk.md, outside the package (a 404 on npmjs.com; use the repository URL)",
    ]);
  });
});
