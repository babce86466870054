/**
 * Fails when a user doc or a published package's source names a design Sockeye no longer has, so a retired
 * description cannot come back through a copied paragraph or an old comment.
 *
 *   node scripts/retired-phrases.mjs   # exit 1, one `file:line: …` per hit (part of `npm run check:docs`)
 *
 * Read: README.md, the packages' README.md files, docs/*.md (not docs/perf/: dated measurement records), and the
 * `src/**\/*.ts` files of the published packages except specs and mocks (TSDoc, comments and messages alike).
 * A phrase matches case-insensitively across line breaks: Markdown quote marks, comment stars and slashes at the
 * start of a line, code spans, bold and `()` are ignored, and whitespace runs count as one space. Cost: one read per
 * file.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { filesUnder, REPO_ROOT } from "./lib/published-packages.mjs";

/**
 * @typedef {object} RetiredPhrase
 * @property {string} phrase the words that described the retired design
 * @property {string} now what is true instead (printed with each hit)
 * @property {string} [whenGone] a path from the repository root: the phrase is retired only once it no longer exists
 *   (a tool or module another change removes; its name must leave the docs with it)
 */

/** @type {RetiredPhrase[]} */
export const RETIRED = [
  ...["shared, unref'd interval", "shared, lazy, unref'd interval", "unref'd interval per handler"].map((phrase) => ({
    phrase,
    now: "deadlines are nodes on one native timer per handler, armed for the earliest deadline",
  })),
  ...["native, unref'd timer", "unref'd native timer"].map((phrase) => ({
    phrase,
    now: "the handler's timer is ref'd while a request waits on a deadline, unref'd otherwise",
  })),
  {
    phrase: "still on undici's own",
    now: "UndiciHttpHandler runs socketTimeout on the handler's own scheduler, not on undici's ~1 s timers",
  },
  ...["attachRequest", "attachQueued", "RequestTracking"].map((phrase) => ({
    phrase,
    now: "PoolMonitor tracks a request with trackRequest() / trackUnpooledRequest(), which add its listeners",
  })),
  {
    phrase: "mangle-props",
    now: "the build ships the source's member names",
    whenGone: "scripts/mangle-props.mjs",
  },
  {
    phrase: "hot-bindings",
    now: "the request path calls its modules directly",
    whenGone: "packages/node-http-handler/src/hot-bindings.ts",
  },
];

/** Line prefixes that are layout, not words: Markdown quote marks, comment stars and slashes. */
const LAYOUT = /^\s*(?:>\s*|\/\*\*?|\*\/?|\/\/)*\s*/;

/** Markup inside a phrase: code spans, bold, a call's `()` (`` `unref()`'d `` reads as "unref'd"). */
const MARKUP = /`|\*\*|\(\)/g;

/** The words of `text` as the check compares them: lower case, no markup, one space between words. */
const words = (text) => text.replace(MARKUP, "").replace(/\s+/g, " ").toLowerCase();

/**
 * The retired phrases in `text`, each with the 1-based line where it starts.
 * @param {string} text
 * @param {RetiredPhrase[]} [retired]
 * @returns {Array<{ line: number, phrase: string, now: string }>}
 */
export function retiredPhrases(text, retired = RETIRED) {
  // One lower-case string of the lines' words, and where each line starts in it.
  const starts = [];
  let flat = "";
  for (const line of text.split("\n")) {
    starts.push(flat.length);
    flat += `${words(line.replace(LAYOUT, ""))} `;
  }
  const lineOf = (offset) => {
    let line = 0;
    while (line + 1 < starts.length && starts[line + 1] <= offset) line++;
    return line + 1;
  };
  const found = [];
  for (const { phrase, now } of retired) {
    const needle = words(phrase);
    for (let at = flat.indexOf(needle); at !== -1; at = flat.indexOf(needle, at + 1)) {
      found.push({ line: lineOf(at), phrase, now });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/**
 * The files the check reads, relative to `root`: the docs that exist, and the published packages' sources.
 * @param {string} [root]
 */
export function checkedFiles(root = REPO_ROOT) {
  const packages = readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `packages/${e.name}`);
  const docs = [
    "README.md",
    ...packages.map((p) => `${p}/README.md`),
    ...readdirSync(join(root, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => `docs/${f}`),
  ].filter((f) => existsSync(join(root, f)));
  const published = packages.filter((p) => {
    const manifest = join(root, p, "package.json");
    return existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).private !== true;
  });
  const sources = published.flatMap((p) =>
    existsSync(join(root, p, "src"))
      ? filesUnder(join(root, p, "src"), (rel) => rel.endsWith(".ts") && !/\.(spec|mock)\.ts$/.test(rel))
      : []
  );
  return [...docs, ...sources.map((f) => relative(root, f))];
}

/**
 * Checks every file of `checkedFiles()` for the phrases of `retired` that are retired now (see `whenGone`).
 * @param {string} [root]
 * @param {RetiredPhrase[]} [retired]
 * @returns {string[]} one `file:line: …` per hit
 */
export function retiredPhraseProblems(root = REPO_ROOT, retired = RETIRED) {
  const active = retired.filter((r) => r.whenGone === undefined || !existsSync(join(root, r.whenGone)));
  const problems = [];
  for (const file of checkedFiles(root)) {
    for (const hit of retiredPhrases(readFileSync(join(root, file), "utf8"), active)) {
      problems.push(`${file}:${hit.line}: "${hit.phrase}" names a retired design; now: ${hit.now}`);
    }
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = retiredPhraseProblems();
  for (const p of problems) console.error(`retired-phrases: ${p}`);
  if (problems.length > 0) process.exitCode = 1;
}
