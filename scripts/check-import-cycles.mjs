/**
 * Fails when the `.ts` files under `packages/<pkg>/src` import each other in a cycle, value or type imports alike.
 *
 *   node scripts/check-import-cycles.mjs   # exit 1, one readable path per cycle (part of `npm run lint`)
 *
 * Edges: every static `import … from`, `export … from`, `import x = require(…)`, `import("…")` type and dynamic
 * `import("…")` of a `.ts` file, parsed with the TypeScript compiler API (so comments and strings never count).
 * A relative specifier resolves to `<path>.ts`, `<path>/index.ts` or, for a `.js`/`.mjs` suffix, the `.ts` beside it;
 * a workspace package (`@sockeye/pool-monitor`, `@sockeye/node-http-handler/internal`) resolves to its
 * `src/index.ts` or `src/<subpath>.ts`, so a cycle between packages is found too. Anything else (node builtins,
 * dependencies) is not an edge. An edge is marked `(type)` when it carries types only.
 *
 * Cycles: for each import, the shortest cycle through it (the import, then the shortest way back), each cycle
 * reported once, so every import that takes part in a cycle is shown without listing every cycle. Cost: one parse
 * per file, one breadth-first search per import (a few hundred files: milliseconds).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { filesUnder, REPO_ROOT } from "./lib/published-packages.mjs";

// Loaded as CommonJS: an ESM import of this 9 MB module first scans it for its export names (~0.5 s).
const ts = createRequire(import.meta.url)("typescript");

/**
 * The module specifiers of one file's source text, in order.
 * @param {string} text
 * @param {string} [fileName] for the parser only
 * @returns {Array<{ specifier: string, typeOnly: boolean }>}
 */
export function importSpecifiers(text, fileName = "file.ts") {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  // `import(…)` can sit anywhere in the tree; declarations only at the top level: walk the tree only when needed.
  const deep = /\bimport\s*\(/.test(text);
  const found = [];
  const add = (node, typeOnly) => {
    if (node !== undefined && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, typeOnly });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      let typeOnly = clause?.isTypeOnly === true;
      if (!typeOnly && clause !== undefined && clause.name === undefined && clause.namedBindings !== undefined) {
        const bindings = clause.namedBindings;
        typeOnly =
          ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
      }
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const clause = node.exportClause;
      const typeOnly =
        node.isTypeOnly ||
        (clause !== undefined &&
          ts.isNamedExports(clause) &&
          clause.elements.length > 0 &&
          clause.elements.every((e) => e.isTypeOnly));
      add(node.moduleSpecifier, typeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg)) add(arg.literal, true);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], false);
    }
    if (deep) ts.forEachChild(node, visit);
  };
  ts.forEachChild(source, visit);
  return found;
}

const isFile = (path) => existsSync(path) && statSync(path).isFile();

/** The `.ts` file a relative specifier names, or `undefined`. */
function resolveRelative(fromFile, specifier) {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base, `${base}.ts`, join(base, "index.ts")];
  const js = /\.(m?js)$/.exec(base);
  if (js !== null) candidates.unshift(`${base.slice(0, -js[0].length)}.${js[1] === "mjs" ? "mts" : "ts"}`);
  return candidates.find((c) => c.endsWith(".ts") && isFile(c));
}

/**
 * The import graph of the `.ts` files under `<root>/packages/<pkg>/src`.
 * @param {string} root repository root
 * @returns {Map<string, Map<string, boolean>>} file → (imported file → type-only edge), absolute paths
 */
export function importGraph(root = REPO_ROOT) {
  const packagesDir = join(root, "packages");
  /** @type {Map<string, string>} package name → its src folder */
  const workspace = new Map();
  const files = [];
  for (const entry of readdirSync(packagesDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const src = join(packagesDir, entry.name, "src");
    if (!existsSync(src)) continue;
    const manifest = join(packagesDir, entry.name, "package.json");
    if (isFile(manifest)) {
      const name = JSON.parse(readFileSync(manifest, "utf8")).name;
      if (typeof name === "string") workspace.set(name, src);
    }
    files.push(...filesUnder(src, (rel) => rel.endsWith(".ts") && !rel.endsWith(".d.ts")));
  }
  const resolveWorkspace = (specifier) => {
    for (const [name, src] of workspace) {
      if (specifier === name) return [join(src, "index.ts")].find(isFile);
      if (specifier.startsWith(`${name}/`)) return [join(src, `${specifier.slice(name.length + 1)}.ts`)].find(isFile);
    }
    return undefined;
  };
  const graph = new Map();
  for (const file of files.sort()) {
    const edges = new Map();
    for (const { specifier, typeOnly } of importSpecifiers(readFileSync(file, "utf8"), file)) {
      const target = specifier.startsWith(".") ? resolveRelative(file, specifier) : resolveWorkspace(specifier);
      if (target === undefined) continue;
      // A file imported once as a value and once for types is a value edge.
      edges.set(target, (edges.get(target) ?? true) && typeOnly);
    }
    graph.set(file, edges);
  }
  return graph;
}

/** The shortest import path from `from` to `to` (breadth-first), both ends included, or `undefined`. */
function shortestPath(graph, from, to) {
  const previous = new Map([[from, from]]);
  const queue = [from];
  for (let i = 0; i < queue.length && !previous.has(to); i++) {
    for (const w of graph.get(queue[i])?.keys() ?? []) {
      if (previous.has(w)) continue;
      previous.set(w, queue[i]);
      queue.push(w);
    }
  }
  if (!previous.has(to)) return undefined;
  const path = [to];
  while (path[0] !== from) path.unshift(previous.get(path[0]));
  return path;
}

/**
 * The import cycles under `<root>/packages/*\/src`: the shortest cycle through each import (each reported once). A cycle is its files in import order; the first one is imported again by the last.
 * @param {string} [root] repository root
 * @returns {Array<Array<{ file: string, typeOnly: boolean }>>} `file` relative to `root`; `typeOnly`: the edge
 *   from this file to the next one carries types only
 */
export function findImportCycles(root = REPO_ROOT) {
  const graph = importGraph(root);
  const cycles = [];
  const seen = new Set();
  for (const v of [...graph.keys()].sort()) {
    for (const w of [...graph.get(v).keys()].sort()) {
      // The shortest cycle through the import v → w: the import, then the shortest way back from w to v.
      const back = v === w ? [v] : shortestPath(graph, w, v);
      if (back === undefined) continue;
      const files = v === w ? back : [v, ...back.slice(0, -1)];
      // One rotation per cycle: start from the smallest file.
      const first = files.indexOf([...files].sort()[0]);
      const rotated = [...files.slice(first), ...files.slice(0, first)];
      const key = rotated.join("\0");
      if (seen.has(key)) continue;
      seen.add(key);
      cycles.push(
        rotated.map((file, i) => ({
          file: relative(root, file).split(sep).join("/"),
          typeOnly: graph.get(file).get(rotated[(i + 1) % rotated.length]) === true,
        }))
      );
    }
  }
  return cycles;
}

/**
 * One line per cycle: `a.ts → b.ts (type) → a.ts`, `(type)` after a file whose import of the next one is type-only.
 * @param {ReturnType<typeof findImportCycles>} cycles
 */
export function formatCycles(cycles) {
  return cycles.map((cycle) => {
    const steps = cycle.map((step) => `${step.file}${step.typeOnly ? " (type)" : ""}`);
    return `import cycle: ${steps.join(" → ")} → ${cycle[0].file}`;
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const lines = formatCycles(findImportCycles());
  if (lines.length > 0) {
    for (const line of lines) console.error(line);
    console.error(
      `${lines.length} import cycle(s) under packages/*/src: break each (an interface file, or a shared leaf).`
    );
    process.exit(1);
  }
  console.log("No import cycle under packages/*/src.");
}
