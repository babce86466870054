import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fillExamples } from "./doc-examples.mjs";

const FILES: Record<string, string> = {
  "a/one.mjs": 'console.log("one");\n',
  "b/two.mjs": "const s = `x`;\n// ``` inside\n",
};
const read = (path: string) => {
  const text = FILES[path];
  if (text === undefined) throw new Error(`no such example: ${path}`);
  return text;
};

describe("fillExamples", () => {
  it("replaces what stands between the markers with the whole file, in a js fence", () => {
    const markdown = "intro\n<!-- example:start a/one.mjs -->\nold text\n<!-- example:end -->\nafter\n";
    const { text, examples } = fillExamples(markdown, read);
    expect(text).toBe(
      'intro\n<!-- example:start a/one.mjs -->\n```js\nconsole.log("one");\n```\n<!-- example:end -->\nafter\n'
    );
    expect(examples).toEqual(["a/one.mjs"]);
    // Idempotent: a filled block is left as it is.
    expect(fillExamples(text, read).text).toBe(text);
  });

  it("fills several blocks, and fences a file that contains a fence with a longer one", () => {
    const markdown =
      "<!-- example:start a/one.mjs -->\n<!-- example:end -->\n\n<!-- example:start b/two.mjs -->\n<!-- example:end -->\n";
    const { text, examples } = fillExamples(markdown, read);
    expect(examples).toEqual(["a/one.mjs", "b/two.mjs"]);
    expect(text).toContain("````js\nconst s = `x`;\n// ``` inside\n````\n");
  });

  it("fails, naming the path, for an example that does not exist", () => {
    expect(() => fillExamples("<!-- example:start c/none.mjs -->\n<!-- example:end -->", read)).toThrow(
      "no such example: c/none.mjs"
    );
  });
});

it("every example block of the repository's docs is up to date (npm run docs:examples)", () => {
  // Exits 1 naming the stale files otherwise; execFileSync throws with that message.
  execFileSync(process.execPath, [join(__dirname, "doc-examples.mjs"), "--check"], { encoding: "utf8" });
});
