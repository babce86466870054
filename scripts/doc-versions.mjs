/**
 * Keeps the package versions written in the docs equal to the packages' versions, so a release cannot leave
 * `npm:@sockeye/node-http-handler@0.1.0` in a README after the package moved on.
 *
 *   node scripts/doc-versions.mjs           # rewrite every stale version in place (run by `npm run version-packages`)
 *   node scripts/doc-versions.mjs --check   # exit 1, naming each file:line, when a doc names another version (CI)
 *
 * Looks at every tracked Markdown file except CHANGELOG.md files and `.changeset/` (history, written by changesets)
 * for the two ways a doc pins a published package (see `lib/published-packages.mjs`):
 *   `@sockeye/<name>@<version>`           e.g. in an `overrides` value or `npm install @sockeye/x@1.2.3`
 *   `"@sockeye/<name>": "<range><version>"`  a package.json dependency (`^`/`~` kept)
 * Names that are not published packages are ignored. Cost: one `git ls-files` and one read per Markdown file.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { publishedPackages, REPO_ROOT } from "./lib/published-packages.mjs";

const VERSION = String.raw`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`;
const NAME = String.raw`@sockeye\/[a-z0-9-]+`;
/** Group 1: the prefix up to the version, group 2: the package name, group 3: the version. */
const PINNED = [
  new RegExp(String.raw`((${NAME})@)(${VERSION})(?![\w.-])`, "g"),
  new RegExp(String.raw`("(${NAME})"\s*:\s*"[\^~]?)(${VERSION})"`, "g"),
];

/**
 * @typedef {object} VersionMismatch
 * @property {number} line 1-based
 * @property {string} name package name
 * @property {string} found the version in the doc
 * @property {string} expected the package's version
 */

/**
 * Finds, and optionally fixes, the versions of `versions`' packages pinned in a Markdown text.
 * @param {string} text
 * @param {Record<string, string>} versions package name → version
 * @returns {{ mismatches: VersionMismatch[], fixed: string }}
 */
export function checkDocVersions(text, versions) {
  /** @type {VersionMismatch[]} */
  const mismatches = [];
  const lines = text.split("\n").map((line, i) => {
    let out = line;
    for (const re of PINNED) {
      out = out.replace(re, (whole, prefix, name, found) => {
        const expected = versions[name];
        if (expected === undefined || expected === found) return whole;
        mismatches.push({ line: i + 1, name, found, expected });
        return whole.replace(`${prefix}${found}`, `${prefix}${expected}`);
      });
    }
    return out;
  });
  return { mismatches, fixed: lines.join("\n") };
}

/** Tracked Markdown files the check reads, relative to `root`. */
export function docFiles(root = REPO_ROOT) {
  return execFileSync("git", ["ls-files", "-z", "--", "*.md"], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((f) => f !== "" && !/(^|\/)CHANGELOG\.md$/.test(f) && !f.startsWith(".changeset/"))
    .filter((f) => existsSync(join(root, f)));
}

/**
 * Checks (and with `write`, fixes) every doc.
 * @param {{ write: boolean, root?: string, versions?: Record<string, string> }} options
 * @returns {string[]} `file:line: …` for each stale version (already fixed on disk when `write`)
 */
export function updateDocVersions({ write, root = REPO_ROOT, versions }) {
  const known = versions ?? Object.fromEntries(publishedPackages().map((p) => [p.name, p.manifest.version]));
  const problems = [];
  for (const file of docFiles(root)) {
    const text = readFileSync(join(root, file), "utf8");
    const { mismatches, fixed } = checkDocVersions(text, known);
    for (const m of mismatches)
      problems.push(`${file}:${m.line}: ${m.name} ${m.found}, but the package is ${m.expected}`);
    if (write && mismatches.length > 0) writeFileSync(join(root, file), fixed);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes("--check");
  const problems = updateDocVersions({ write: !check });
  for (const p of problems) console.error(`doc-versions: ${p}${check ? "" : " (fixed)"}`);
  if (check && problems.length > 0) {
    console.error("doc-versions: run `node scripts/doc-versions.mjs` to update them");
    process.exitCode = 1;
  }
}
