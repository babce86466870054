/**
 * `scripts/check-import-cycles.mjs`: the checker finds cycles in small fixture trees (value and type imports,
 * `export … from`, across workspace packages) and none where the imports only go one way. The repository itself is
 * checked by `npm run lint` (the full parse takes seconds: not repeated here).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findImportCycles, formatCycles, importSpecifiers } from "./check-import-cycles.mjs";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A repository root with `files` (path → text) written under it. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "import-cycles-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("importSpecifiers", () => {
  it("reads value and type imports, re-exports, import types and dynamic imports; not comments or strings", () => {
    const text = [
      'import { a } from "./a";',
      'import type { B } from "./b";',
      'import { type C, type D } from "./c";',
      'import { type E, f } from "./e";',
      'export { g } from "./g";',
      'export type { H } from "./h";',
      'export * from "./star";',
      'type I = import("./i").I;',
      'const j = () => import("./j");',
      '// import { k } from "./k";',
      "const l = \"import { l } from './l'\";",
    ].join("\n");
    expect(importSpecifiers(text)).toEqual([
      { specifier: "./a", typeOnly: false },
      { specifier: "./b", typeOnly: true },
      { specifier: "./c", typeOnly: true },
      { specifier: "./e", typeOnly: false },
      { specifier: "./g", typeOnly: false },
      { specifier: "./h", typeOnly: true },
      { specifier: "./star", typeOnly: false },
      { specifier: "./i", typeOnly: true },
      { specifier: "./j", typeOnly: false },
    ]);
  });
});

describe("findImportCycles", () => {
  it("finds a cycle of type-only imports through three files and reports it once, as a readable path", () => {
    const root = fixture({
      "packages/p/package.json": '{ "name": "@x/p" }',
      "packages/p/src/a.ts": 'import type { B } from "./b";\nexport type A = B;\n',
      "packages/p/src/b.ts": 'import { c } from "./c";\nexport type B = typeof c;\n',
      "packages/p/src/c.ts": 'export type { A } from "./a";\nexport const c = 1;\n',
      "packages/p/src/d.ts": 'import { c } from "./c";\nexport const d = c;\n',
    });
    expect(formatCycles(findImportCycles(root))).toEqual([
      "import cycle: packages/p/src/a.ts (type) → packages/p/src/b.ts → packages/p/src/c.ts (type) → packages/p/src/a.ts",
    ]);
  });

  it("finds a file that imports itself, an index folder, a .js suffix, and a cycle between workspace packages", () => {
    const root = fixture({
      "packages/p/package.json": '{ "name": "@x/p" }',
      "packages/p/src/self.ts": 'import { s } from "./self.js";\nexport const s = 1;\n',
      "packages/p/src/index.ts": 'export { q } from "@x/q/internal";\nexport { u } from "./util";\n',
      "packages/p/src/util/index.ts": "export const u = 1;\n",
      "packages/q/package.json": '{ "name": "@x/q" }',
      "packages/q/src/internal.ts": 'import { u } from "@x/p";\nexport const q = u;\n',
    });
    expect(formatCycles(findImportCycles(root))).toEqual([
      "import cycle: packages/p/src/index.ts → packages/q/src/internal.ts → packages/p/src/index.ts",
      "import cycle: packages/p/src/self.ts → packages/p/src/self.ts",
    ]);
  });

  it("reports every import that closes a cycle, not only the shortest cycle per file", () => {
    const root = fixture({
      "packages/p/package.json": '{ "name": "@x/p" }',
      "packages/p/src/hub.ts": 'import "./left";\nimport "./right";\n',
      "packages/p/src/left.ts": 'import "./hub";\n',
      "packages/p/src/right.ts": 'import "./hub";\n',
    });
    expect(formatCycles(findImportCycles(root))).toEqual([
      "import cycle: packages/p/src/hub.ts → packages/p/src/left.ts → packages/p/src/hub.ts",
      "import cycle: packages/p/src/hub.ts → packages/p/src/right.ts → packages/p/src/hub.ts",
    ]);
  });

  it("finds none when imports go one way (shared leaves, interfaces, node builtins and dependencies ignored)", () => {
    const root = fixture({
      "packages/p/package.json": '{ "name": "@x/p" }',
      "packages/p/src/host.ts": "export interface Host { done(): void }\n",
      "packages/p/src/part.ts": 'import type { Host } from "./host";\nimport { EventEmitter } from "node:events";\n',
      "packages/p/src/pool.ts": 'import type { Host } from "./host";\nimport "./part";\nimport "vitest";\n',
      "packages/p/src/index.ts": 'export * from "./pool";\nexport * from "./part";\n',
      "packages/p/src/x.spec.ts": 'import "./index";\n',
    });
    expect(findImportCycles(root)).toEqual([]);
  });
});
