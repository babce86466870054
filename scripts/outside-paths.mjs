/**
 * Fails when a tracked file refers to a path outside the repository: an absolute path of the machine it was written
 * on, or a sibling folder of the checkout (research notes, seeds). Such a reference means nothing to anyone else
 * who clones the repository.
 *
 *   node scripts/outside-paths.mjs   # exit 1, one `file:line: text` per reference (part of `npm run check:docs`)
 *
 * The patterns are in `OUTSIDE_PATTERNS`; they are assembled from pieces so that this file and its spec do not
 * contain them. Binary files (with a NUL byte) are skipped. Cost: one `git ls-files` and one read per tracked file.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./lib/published-packages.mjs";

/** Substrings that point outside the repository. */
export const OUTSIDE_PATTERNS = [
  ["/wo", "rk/"],
  ["shared", "/reference"],
  ["../sha", "red"],
].map((p) => p.join(""));

/**
 * The lines of `text` that refer to a path outside the repository.
 * @param {string} text
 * @returns {Array<{ line: number, pattern: string, text: string }>} `line` is 1-based
 */
export function outsideReferences(text) {
  const found = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const pattern = OUTSIDE_PATTERNS.find((p) => lines[i].includes(p));
    if (pattern !== undefined) found.push({ line: i + 1, pattern, text: lines[i].trim() });
  }
  return found;
}

/**
 * Checks every tracked file.
 * @param {string} [root]
 * @returns {string[]} one `file:line: …` per reference
 */
export function outsidePathProblems(root = REPO_ROOT) {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 })
    .split("\0")
    .filter((f) => f !== "" && existsSync(join(root, f)) && statSync(join(root, f)).isFile());
  const problems = [];
  for (const file of files) {
    const bytes = readFileSync(join(root, file));
    if (bytes.includes(0)) continue;
    for (const ref of outsideReferences(bytes.toString("utf8"))) {
      problems.push(
        `${file}:${ref.line}: refers to "${ref.pattern}", outside the repository: ${ref.text.slice(0, 160)}`
      );
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = outsidePathProblems();
  for (const p of problems) console.error(`outside-paths: ${p}`);
  if (problems.length > 0) process.exitCode = 1;
}
