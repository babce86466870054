/**
 * `check:package` part 2 (part 1 is publint + attw): what `npm pack` of a published package would put on the npm
 * page and in the tarball.
 *
 * Run from a package folder (`node ../../scripts/check-package.mjs`); it runs `npm pack --dry-run --json` and fails
 * (exit 1, one line per problem) unless the tarball holds README.md, LICENSE (identical to the root LICENSE),
 * CHANGELOG.md, package.json and the files `main`/`module`/`types` point at, and the manifest has complete metadata:
 * description, license Apache-2.0, author, repository (git, with `directory` = the package's folder), homepage,
 * bugs, keywords, engines, and `publishConfig.access: "public"`; every `@sockeye/*` dependency is an exact version (the
 * handlers are built on `@sockeye/pool-monitor/internal`, which may change in any release); and the packed
 * README has no relative link that leaves the package or points at a file not in the tarball (npmjs.com shows the
 * README without the repository around it, so such a link 404s there: link to the repository URL instead).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, posix, relative } from "node:path";
import { REPO_ROOT } from "./lib/published-packages.mjs";

/** Files every tarball must contain besides the build output. */
export const REQUIRED_FILES = ["package.json", "README.md", "LICENSE", "CHANGELOG.md"];

/**
 * The problems of one package, as sentences; empty when it is ready to publish.
 * @param {object} input
 * @param {Record<string, any>} input.manifest the package.json
 * @param {string[]} input.files paths in the tarball (`npm pack --dry-run --json` → `files[].path`)
 * @param {string} input.relDir the package folder relative to the repository root, e.g. `packages/pool-monitor`
 * @param {(path: string) => string | undefined} input.readPacked contents of a packed file, `undefined` if absent
 * @param {string} input.rootLicense contents of the root LICENSE
 * @returns {string[]}
 */
export function packageProblems({ manifest, files, relDir, readPacked, rootLicense }) {
  const problems = [];
  const has = new Set(files.map((f) => f.replace(/^\.\//, "")));
  for (const f of REQUIRED_FILES) if (!has.has(f)) problems.push(`the tarball has no ${f}`);
  for (const field of ["main", "module", "types"]) {
    const target = manifest[field];
    if (typeof target !== "string") problems.push(`package.json has no "${field}"`);
    else if (!has.has(target.replace(/^\.\//, ""))) problems.push(`"${field}" points at ${target}, not in the tarball`);
  }
  const readme = readPacked("README.md");
  if (readme !== undefined && readme.trim().split("\n").length < 10) problems.push("README.md is a stub (< 10 lines)");
  if (readme !== undefined) problems.push(...readmeLinkProblems(readme, files));
  const license = readPacked("LICENSE");
  if (license !== undefined && license !== rootLicense) problems.push("LICENSE differs from the repository's LICENSE");
  const changelog = readPacked("CHANGELOG.md");
  if (changelog !== undefined && !changelog.startsWith(`# ${manifest.name}\n`)) {
    problems.push(`CHANGELOG.md does not start with "# ${manifest.name}"`);
  }
  const nonEmpty = (v) => typeof v === "string" && v.trim() !== "";
  if (!nonEmpty(manifest.description)) problems.push('package.json has no "description"');
  if (manifest.license !== "Apache-2.0")
    problems.push(`"license" is ${JSON.stringify(manifest.license)}, not "Apache-2.0"`);
  if (!nonEmpty(manifest.author) && !nonEmpty(manifest.author?.name)) problems.push('package.json has no "author"');
  const repo = manifest.repository;
  if (typeof repo !== "object" || repo === null || repo.type !== "git" || !nonEmpty(repo.url)) {
    problems.push('"repository" must be { type: "git", url, directory }');
  } else if (repo.directory !== relDir) {
    problems.push(`"repository.directory" is ${JSON.stringify(repo.directory)}, not "${relDir}"`);
  }
  if (!nonEmpty(manifest.homepage)) problems.push('package.json has no "homepage"');
  if (!nonEmpty(manifest.bugs?.url) && !nonEmpty(manifest.bugs)) problems.push('package.json has no "bugs"');
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0)
    problems.push('package.json has no "keywords"');
  if (!nonEmpty(manifest.engines?.node)) problems.push('package.json has no "engines.node"');
  if (manifest.publishConfig?.access !== "public") problems.push('"publishConfig.access" is not "public"');
  // A handler calls the core's `/internal` API and `@internal` members, which promise nothing across versions: only
  // the version it was built and tested against is known to work.
  for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
    if (name.startsWith("@sockeye/") && !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(String(range))) {
      problems.push(
        `dependency ${name} is ${JSON.stringify(range)}, not an exact version (the handlers use its internal API)`
      );
    }
  }
  return problems;
}

/**
 * The link targets of a Markdown text: inline links and images `[text](target "title")`, reference definitions
 * `[name]: target`, and `href`/`src` attributes of inline HTML. Fenced code blocks and inline code are skipped.
 * @param {string} markdown
 * @returns {string[]} in order of appearance
 */
export function markdownLinkTargets(markdown) {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "``");
  const targets = [];
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+["'(][^)]*)?\)/g)) targets.push(m[1]);
  for (const m of prose.matchAll(/^ {0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) targets.push(m[1]);
  for (const m of prose.matchAll(/\b(?:href|src)\s*=\s*["']([^"']+)["']/gi)) targets.push(m[1]);
  return targets;
}

/**
 * Relative links of a published README that break on npmjs.com, where the README is shown without the repository:
 * a link leaving the package folder (`../../docs/x.md`, `../other-package`, `/docs`), or one to a path the tarball
 * does not contain (`examples/x.mjs` when only `dist` is published). Absolute URLs, `mailto:` and the like, and
 * in-page anchors (`#options`) are fine.
 * @param {string} readme contents of the packed README.md
 * @param {string[]} files paths in the tarball
 * @returns {string[]} one sentence per bad link
 */
export function readmeLinkProblems(readme, files) {
  const packed = files.map((f) => f.replace(/^\.\//, ""));
  const problems = [];
  for (const target of markdownLinkTargets(readme)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#") || target.startsWith("//")) continue;
    const path = posix.normalize(decodeURI(target.replace(/[?#].*$/, "")));
    if (path.startsWith("/") || path === ".." || path.startsWith("../")) {
      problems.push(`README.md links to ${target}, outside the package (a 404 on npmjs.com; use the repository URL)`);
    } else if (path !== "." && !packed.some((f) => f === path || f.startsWith(`${path.replace(/\/$/, "")}/`))) {
      problems.push(`README.md links to ${target}, which is not in the tarball (use the repository URL)`);
    }
  }
  return problems;
}

/** Runs the check on the package in `cwd`; returns the exit code. */
export function main(cwd = process.cwd()) {
  const manifest = JSON.parse(readFileSync(join(cwd, "package.json"), "utf8"));
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts", "--loglevel=error"], {
    cwd,
    encoding: "utf8",
  });
  const files = JSON.parse(out)[0].files.map((/** @type {{ path: string }} */ f) => f.path);
  const problems = packageProblems({
    manifest,
    files,
    relDir: relative(REPO_ROOT, cwd).split("\\").join("/"),
    readPacked: (path) => (files.includes(path) ? readFileSync(join(cwd, path), "utf8") : undefined),
    rootLicense: readFileSync(join(REPO_ROOT, "LICENSE"), "utf8"),
  });
  if (problems.length > 0) {
    for (const p of problems) console.error(`check-package: ${manifest.name}: ${p}`);
    return 1;
  }
  console.log(
    `check-package: ${manifest.name}: ${files.length} files, README (links included), LICENSE, CHANGELOG and metadata ok`
  );
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main();
