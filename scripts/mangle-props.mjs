// =============================================================================
// mangle-props.mjs: short names for a package's private class members in its built dist (tsup/esbuild mangleProps).
//
// Why: property names are a third of a handler's bundle, and a minifier never renames them. Names that only the
// package's own code can reach (TypeScript `private` members, and `protected` ones of a class no other package
// extends) can be renamed at build time; public API, option and stats names, and every name of Node, the SDK or
// undici stay as they are. The published .d.ts is built from the sources, so it is unchanged.
//
// Which names: every `private` member (property, method, accessor, parameter property) declared in the package's
// src (specs and mocks excluded); `protected` ones too unless `keepProtected` (pool-monitor: its protected members
// are used by subclasses in the handler packages, built separately). A name is left alone when it is used anywhere
// in the package in a way the type checker cannot tie to such a member: a property access resolving to anything
// else (a Node or SDK object, an `any`, an interface), an object-literal key or destructuring key, or the text of
// a string literal (reflection, `"name" in x`).
//
// Which short names: each package draws from its own first letters (`FIRST`), so a subclass built in one package
// never reuses a short name of its base class built in another; within a package the mapping is one-to-one and
// the most used names get the shortest; every identifier of the workspace's sources is skipped (it may be a real
// property somewhere). The mapping is a function of the package's sources only, so the ESM and CommonJS builds of
// a package agree, and a package's dist never depends on another package's sources (turbo caches per package).
//
// Cost: one TypeScript program over the package's src at each build (about a second).
// =============================================================================

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/** First letters of each package's short names: disjoint, so names never collide across packages. */
const FIRST = {
  "pool-monitor": "abcdefghijklmnopqrstuvwxyz",
  "node-http-handler": "ABCDEFGHIJKLM",
  "undici-http-handler": "NOPQRSTUVWXYZ",
};
const REST = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$";

const isSource = (name) =>
  name.endsWith(".ts") && !name.endsWith(".d.ts") && !name.endsWith(".spec.ts") && !name.endsWith(".mock.ts");

function sourceFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter(isSource)
    .map((f) => join(dir, f));
}

const hasModifier = (node, kind) => (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** Every identifier-like word of the workspace's package sources: never used as a short name. */
function workspaceWords(packagesDir) {
  const words = new Set();
  for (const pkg of readdirSync(packagesDir)) {
    const src = join(packagesDir, pkg, "src");
    let files;
    try {
      files = readdirSync(src, { recursive: true }).map(String);
    } catch {
      continue;
    }
    for (const f of files) {
      if (!f.endsWith(".ts")) continue;
      for (const w of readFileSync(join(src, f), "utf8").match(/[A-Za-z_$][\w$]*/g) ?? []) words.add(w);
    }
  }
  return words;
}

/**
 * The esbuild options that mangle `packageDir`'s private members: `mangleProps` (a regex of exactly those names)
 * and `mangleCache` (their short names). `packageDir` is the package's folder (`packages/<name>`).
 */
export function manglePropsFor(packageDir, { keepProtected = false } = {}) {
  const name = packageDir.split(/[\\/]/).filter(Boolean).pop();
  const first = FIRST[name];
  if (first === undefined) throw new Error(`mangle-props: no short-name letters for package "${name}"`);
  const files = sourceFiles(join(packageDir, "src"));
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const own = new Set(files.map((f) => ts.sys.resolvePath(f)));
  const sources = program.getSourceFiles().filter((sf) => own.has(ts.sys.resolvePath(sf.fileName)));

  const isMangleable = (decl) =>
    (ts.isPropertyDeclaration(decl) ||
      ts.isMethodDeclaration(decl) ||
      ts.isGetAccessorDeclaration(decl) ||
      ts.isSetAccessorDeclaration(decl) ||
      (ts.isParameter(decl) && ts.isConstructorDeclaration(decl.parent))) &&
    decl.name !== undefined &&
    ts.isIdentifier(decl.name) &&
    (hasModifier(decl, ts.SyntaxKind.PrivateKeyword) ||
      (!keepProtected && hasModifier(decl, ts.SyntaxKind.ProtectedKeyword))) &&
    own.has(ts.sys.resolvePath(decl.getSourceFile().fileName));

  const candidates = new Set();
  const blocked = new Set();
  const uses = new Map();
  const symbolIsOurs = (node) => {
    const symbol = checker.getSymbolAtLocation(node);
    const decls = symbol?.declarations ?? [];
    return decls.length > 0 && decls.every(isMangleable);
  };

  for (const sf of sources) {
    const visit = (node) => {
      if (isMangleable(node)) candidates.add(node.name.text);
      if (ts.isStringLiteralLike(node)) blocked.add(node.text);
      let key;
      if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) {
        key = node.name;
        if (!symbolIsOurs(key)) blocked.add(key.text);
      } else if (
        (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node) || ts.isMethodDeclaration(node)) &&
        ts.isObjectLiteralExpression(node.parent)
      ) {
        blocked.add(node.name.getText(sf));
      } else if (ts.isBindingElement(node)) {
        blocked.add((node.propertyName ?? node.name).getText(sf));
      } else if (
        (ts.isPropertyDeclaration(node) ||
          ts.isMethodDeclaration(node) ||
          ts.isGetAccessorDeclaration(node) ||
          ts.isSetAccessorDeclaration(node) ||
          ts.isPropertySignature(node) ||
          ts.isMethodSignature(node) ||
          ts.isParameter(node)) &&
        node.name !== undefined &&
        ts.isIdentifier(node.name) &&
        !isMangleable(node) &&
        !ts.isParameter(node)
      ) {
        blocked.add(node.name.text);
      } else if (ts.isParameter(node) && ts.isConstructorDeclaration(node.parent) && !isMangleable(node)) {
        if (ts.getModifiers(node)?.length) blocked.add(node.name.getText(sf));
      }
      if (key !== undefined) uses.set(key.text, (uses.get(key.text) ?? 0) + 1);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }

  const names = [...candidates]
    .filter((n) => !blocked.has(n))
    .sort((a, b) => (uses.get(b) ?? 0) - (uses.get(a) ?? 0) || (a < b ? -1 : 1));
  const taken = workspaceWords(join(packageDir, ".."));
  const cache = {};
  const short = shortNames(first, taken);
  for (const n of names) cache[n] = short.next().value;
  const pattern = names.length === 0 ? "^$" : `^(?:${names.join("|")})$`;
  return { mangleProps: new RegExp(pattern), mangleCache: cache };
}

/** Short names starting with a letter of `first`, shortest first, skipping every word in `taken`. */
function* shortNames(first, taken) {
  for (let length = 1; ; length++) {
    const build = function* (prefix) {
      if (prefix.length === length) {
        if (!taken.has(prefix)) yield prefix;
        return;
      }
      for (const c of REST) yield* build(prefix + c);
    };
    for (const c of first) yield* build(c);
  }
}
