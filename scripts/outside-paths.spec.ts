/**
 * `scripts/outside-paths.mjs`: no tracked file of the repository refers to a path outside it, and the checker finds
 * each such reference (absolute paths of the authoring machine, sibling folders of the checkout) in tracked text
 * files only.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { OUTSIDE_PATTERNS, outsidePathProblems, outsideReferences } from "./outside-paths.mjs";

// Assembled from pieces, like the patterns themselves, so that this file does not trip the check.
const ABSOLUTE = ["/wo", "rk/shared/seeds/x.json"].join("");
const NOTES = ["see shared", "/reference/upstream.md section 2"].join("");
const SIBLING = ['import x from "../../sha', 'red/seeds/y";'].join("");

describe("the repository", () => {
  it("has no tracked file that refers to a path outside it", () => {
    expect(outsidePathProblems()).toEqual([]);
  });
});

describe("outsideReferences", () => {
  it("finds each pattern, with its line", () => {
    expect(OUTSIDE_PATTERNS).toHaveLength(3);
    const text = [
      "ok",
      ` * Each test asserts upstream's behaviour (see ${ABSOLUTE}).`,
      NOTES,
      SIBLING,
      "../docs/x.md",
    ].join("\n");
    expect(outsideReferences(text).map((r) => [r.line, r.pattern])).toEqual([
      [2, OUTSIDE_PATTERNS[0]],
      [3, OUTSIDE_PATTERNS[1]],
      [4, OUTSIDE_PATTERNS[2]],
    ]);
  });

  it("accepts paths inside the repository", () => {
    expect(outsideReferences("docs/perf/README.md ../../docs/aws-sdk.md /network/ shared/ .cache/work")).toEqual([]);
  });
});

describe("outsidePathProblems", () => {
  const root = mkdtempSync(join(tmpdir(), "outside-paths-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("reports tracked text files only", () => {
    writeFileSync(join(root, "a.ts"), `// ok\n// ${NOTES}\n`);
    writeFileSync(join(root, "b.bin"), Buffer.concat([Buffer.from([0]), Buffer.from(ABSOLUTE)]));
    writeFileSync(join(root, "untracked.md"), ABSOLUTE);
    execFileSync("git", ["init", "-q"], { cwd: root });
    execFileSync("git", ["add", "a.ts", "b.bin"], { cwd: root });
    expect(outsidePathProblems(root)).toEqual([
      `a.ts:2: refers to "${OUTSIDE_PATTERNS[1]}", outside the repository: // ${NOTES}`,
    ]);
  });
});
