/**
 * Copies the example programs into the docs, so a doc example is always a complete program that the tests run.
 *
 *   node scripts/doc-examples.mjs           # rewrite every example block in place
 *   node scripts/doc-examples.mjs --check   # exit 1, naming each stale block, when a Markdown file differs (CI)
 *
 * An example lives in a package's `examples/` folder as a runnable program (run by
 * `packages/aws-sdk-integ/test/examples.spec.ts`); a Markdown file shows it between two marker comments that name
 * it by its path from the repository root:
 *
 *   <!-- example:start packages/node-http-handler/examples/quick-start.mjs -->
 *   ...generated: a fenced block with the whole file...
 *   <!-- example:end -->
 *
 * Every Markdown file of the repository that has such markers is rewritten (no list to keep): the README, the
 * package READMEs and docs/.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./lib/published-packages.mjs";

const BLOCK = /(<!-- example:start (\S+) -->\n)[\s\S]*?(<!-- example:end -->)/g;

/**
 * `markdown` with every example block filled from `read(path)`.
 * @param {string} markdown
 * @param {(path: string) => string} read the example file at a path from the repository root
 * @returns {{ text: string, examples: string[] }}
 */
export function fillExamples(markdown, read) {
  const examples = [];
  const text = markdown.replace(BLOCK, (_all, start, path, end) => {
    examples.push(path);
    const code = read(path).trimEnd();
    const fence = code.includes("```") ? "````" : "```";
    return `${start}${fence}js\n${code}\n${fence}\n${end}`;
  });
  return { text, examples };
}

/** Markdown files of the repository (node_modules, dist and dot-folders skipped). */
function markdownFiles(dir = REPO_ROOT) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.name.endsWith(".md")) out.push(path);
  }
  return out;
}

function main() {
  const check = process.argv.includes("--check");
  const stale = [];
  for (const file of markdownFiles()) {
    const before = readFileSync(file, "utf8");
    if (!before.includes("<!-- example:start ")) continue;
    const { text } = fillExamples(before, (path) => readFileSync(join(REPO_ROOT, path), "utf8"));
    if (text === before) continue;
    if (check) stale.push(relative(REPO_ROOT, file));
    else writeFileSync(file, text);
  }
  if (stale.length > 0) {
    console.error(`doc-examples: stale example blocks in ${stale.join(", ")}; run \`npm run docs:examples\`.`);
    process.exit(1);
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) main();
