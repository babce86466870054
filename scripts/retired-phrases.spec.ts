/**
 * `scripts/retired-phrases.mjs`: no user doc or published source names a retired design, and the checker finds a
 * retired phrase wherever a doc or a comment puts it: across line breaks, behind comment stars or quote marks, in
 * any letter case, with the line it starts on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkedFiles, RETIRED, retiredPhraseProblems, retiredPhrases } from "./retired-phrases.mjs";

const ONE = [{ phrase: "lazy, shared, unref'd interval", now: "one native timer per handler" }];

describe("the repository", () => {
  it("names no retired design in its docs or published sources", () => {
    expect(retiredPhraseProblems()).toEqual([]);
  });

  it("reads the root README, the package READMEs, docs/*.md and product sources, not specs, mocks or docs/perf", () => {
    const files = checkedFiles();
    expect(files).toContain("README.md");
    expect(files).toContain("packages/undici-http-handler/README.md");
    expect(files).toContain("docs/aws-sdk.md");
    expect(files).toContain("packages/pool-monitor/src/deadline-scheduler.ts");
    expect(files.some((f) => f.startsWith("docs/perf/"))).toBe(false);
    expect(files.some((f) => /\.(spec|mock)\.ts$/.test(f))).toBe(false);
    expect(files.some((f) => f.startsWith("packages/bench/src/"))).toBe(false);
  });
});

describe("retiredPhrases", () => {
  it("finds a phrase on one line, in any letter case, with its line", () => {
    expect(retiredPhrases("ok\nruns on one Lazy, Shared, Unref'd Interval.\n", ONE)).toEqual([
      { line: 2, phrase: ONE[0].phrase, now: ONE[0].now },
    ]);
  });

  it("finds a phrase broken across Markdown lines, quote marks and TSDoc stars, at the line it starts on", () => {
    const markdown = "- runs every deadline on **one lazy,\n  shared, unref'd interval** per handler";
    const quote = "> deadlines run on one lazy,\n> shared,   unref'd\n> interval";
    const tsdoc = "/**\n * Deadlines run on one lazy, shared,\n * unref'd interval per handler.\n */";
    expect(retiredPhrases(markdown, ONE).map((h) => h.line)).toEqual([1]);
    expect(retiredPhrases(quote, ONE).map((h) => h.line)).toEqual([1]);
    expect(retiredPhrases(tsdoc, ONE).map((h) => h.line)).toEqual([2]);
  });

  it("reads through code spans, bold and a call's parentheses", () => {
    const markdown = "- every deadline runs on **one lazy,\n  shared, `unref()`'d interval** per handler";
    expect(retiredPhrases(markdown, ONE).map((h) => h.line)).toEqual([1]);
  });

  it("reports every occurrence, and nothing in text that only shares words with a phrase", () => {
    expect(retiredPhrases("lazy, shared, unref'd interval\nlazy, shared, unref'd interval", ONE)).toHaveLength(2);
    expect(retiredPhrases("the standalone monitor samples on its own lazy, unref'd interval", ONE)).toEqual([]);
  });

  it("catches the sentences the issue found false, with the default list", () => {
    const found = (text: string) => retiredPhrases(text).map((h) => h.phrase);
    expect(found("every deadline on one lazy, shared, unref'd interval")).toEqual(["shared, unref'd interval"]);
    expect(found('`"interval"` (one shared, lazy, unref\'d interval; no timer per request)')).toEqual([
      "shared, lazy, unref'd interval",
    ]);
    expect(found("deadlines on one **lazy, shared, `unref()`'d interval** per handler")).toEqual([
      "shared, unref'd interval",
      "unref'd interval per handler",
    ]);
    expect(found("run on one\n * lazy, self-stopping, unref'd interval per handler")).toEqual([
      "unref'd interval per handler",
    ]);
    expect(found("one native, unref'd timer per handler")).toEqual(["native, unref'd timer"]);
    expect(found("one unref'd native timer")).toEqual(["unref'd native timer"]);
    expect(found("(on the handler's precise scheduler; `socketTimeout` still on undici's own ~1 s timers)")).toEqual([
      "still on undici's own",
    ]);
    for (const { phrase, now } of RETIRED) {
      expect(phrase.length).toBeGreaterThan(0);
      expect(now.length).toBeGreaterThan(0);
    }
  });
});

describe("retiredPhraseProblems", () => {
  const root = mkdtempSync(join(tmpdir(), "retired-phrases-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("names file:line for docs and published sources, and skips private packages, specs and docs/perf", () => {
    const write = (path: string, text: string) => {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    const bad = "on one lazy, shared, unref'd interval";
    write("README.md", `# x\n\n${bad}\n`);
    write("docs/guide.md", `${bad}\n`);
    write("docs/perf/history.md", `${bad}\n`);
    write("packages/core/package.json", JSON.stringify({ name: "core" }));
    write("packages/core/README.md", "fine\n");
    write("packages/core/src/a.ts", `/**\n * Deadlines ${bad}.\n */\nexport {};\n`);
    write("packages/core/src/a.spec.ts", `// ${bad}\n`);
    write("packages/tools/package.json", JSON.stringify({ name: "tools", private: true }));
    write("packages/tools/src/b.ts", `// ${bad}\n`);
    expect(retiredPhraseProblems(root).map((p) => p.slice(0, p.indexOf(": ")))).toEqual([
      "README.md:3",
      "docs/guide.md:1",
      "packages/core/src/a.ts:2",
    ]);
  });

  it("retires a `whenGone` phrase only once its path is gone", () => {
    const root2 = mkdtempSync(join(tmpdir(), "retired-phrases-gone-"));
    try {
      mkdirSync(join(root2, "docs"));
      mkdirSync(join(root2, "packages"));
      mkdirSync(join(root2, "scripts"));
      writeFileSync(join(root2, "README.md"), "built with\nscripts/old-tool.mjs\n");
      writeFileSync(join(root2, "scripts", "old-tool.mjs"), "");
      const retired = [{ phrase: "old-tool", now: "no such tool", whenGone: "scripts/old-tool.mjs" }];
      expect(retiredPhraseProblems(root2, retired)).toEqual([]);
      rmSync(join(root2, "scripts", "old-tool.mjs"));
      expect(retiredPhraseProblems(root2, retired)).toEqual([
        'README.md:2: "old-tool" names a retired design; now: no such tool',
      ]);
    } finally {
      rmSync(root2, { recursive: true, force: true });
    }
  });
});
