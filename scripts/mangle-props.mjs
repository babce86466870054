// =============================================================================
// mangle-props.mjs: short names for a package's private class members in its built dist (tsup/esbuild mangleProps).
//
// Why: property names are a third of a handler's bundle, and a minifier never renames them. Names that only the
// package's own code can reach can be renamed at build time; public API, option and stats names, and every name of
// Node, the SDK or undici stay as they are. The published .d.ts is built from the sources, so it is unchanged.
//
// Which names: every `private` member (property, method, accessor, parameter property) of a class declared in the
// package's src (specs and mocks excluded); in a handler package (`publicEntry`), its other class members too when
// nothing published or depended upon spells them (see `manglePropsFor()`). A name is left alone when it is used
// anywhere in the package in a way the type checker cannot tie to such a member: a property access resolving to
// anything else (a Node or SDK object, an `any`, an interface), an object-literal key or destructuring key, or the
// text of a string literal (reflection, `"name" in x`). pool-monitor renames only its private members: its other
// members are its `/internal` API, used by the handler packages, built separately.
//
// Which short names: each package draws from its own first letters (`FIRST`), so a subclass built in one package
// never reuses a short name of its base class built in another; within a package the mapping is one-to-one and
// the most used names get the shortest; every identifier of the workspace's sources is skipped (it may be a real
// property somewhere). The mapping is a function of the package's sources only, so the ESM and CommonJS builds of
// a package agree, and a package's dist never depends on another package's sources (turbo caches per package).
//
// Cost: one TypeScript program over the package's src at each build (about 3 s).
// =============================================================================

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
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
function workspaceWords(packagesDir, only) {
  const words = new Set();
  for (const pkg of only === undefined ? readdirSync(packagesDir) : [only]) {
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

/** Words of every `.d.ts` file under `dir` (recursively); nothing if it does not exist. */
function declarationWords(dir, words) {
  let files;
  try {
    files = readdirSync(dir, { recursive: true }).map(String);
  } catch {
    return words;
  }
  for (const f of files) {
    if (!/\.d\.[cm]?ts$/.test(f)) continue;
    for (const w of readFileSync(join(dir, f), "utf8").match(/[A-Za-z_$][\w$]*/g) ?? []) words.add(w);
  }
  return words;
}

/**
 * The esbuild options that mangle `packageDir`'s private members: `mangleProps` (a regex of exactly those names)
 * and `mangleCache` (their short names). `packageDir` is the package's folder (`packages/<name>`).
 *
 * With `publicEntry` (a handler package, whose only published types are that entry's), the package's other class
 * members are renamed too when their name appears nowhere in what the package publishes or depends on: not in the
 * declarations of the entry and of every module they import (emitted here from the sources), not in any `.d.ts` of
 * the package's dependencies (`dependencyTypeFolders()`: Node's, the ES library's, and each dependency's, the built
 * pool-monitor's included, so an override of a base class member built there keeps its name),
 * not starting with `_` (Node's internals), and, as for private members, never used in a way the checker cannot tie
 * to a class member of the package (an access through an interface, e.g. one typing Node's internals, keeps it).
 */
export function manglePropsFor(packageDir, { publicEntry } = {}) {
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
    declaration: true,
    emitDeclarationOnly: true,
    types: ["node"],
  });
  const checker = program.getTypeChecker();
  const own = new Set(files.map((f) => ts.sys.resolvePath(f)));
  const sources = program.getSourceFiles().filter((sf) => own.has(ts.sys.resolvePath(sf.fileName)));
  const isOwn = (decl) => own.has(ts.sys.resolvePath(decl.getSourceFile().fileName));
  const isMember = (decl) =>
    (ts.isPropertyDeclaration(decl) ||
      ts.isMethodDeclaration(decl) ||
      ts.isGetAccessorDeclaration(decl) ||
      ts.isSetAccessorDeclaration(decl) ||
      (ts.isParameter(decl) && ts.isConstructorDeclaration(decl.parent) && (ts.getModifiers(decl)?.length ?? 0) > 0)) &&
    ts.isClassLike(ts.isParameter(decl) ? decl.parent.parent : decl.parent) &&
    decl.name !== undefined &&
    ts.isIdentifier(decl.name) &&
    isOwn(decl);
  // `protected` is not private here: a subclass's protected member may override one of a base class built in
  // another package (Http2PoolMonitor's `newOrigin()`, TelemetryCore's in pool-monitor).
  const isPrivate = (decl) => hasModifier(decl, ts.SyntaxKind.PrivateKeyword);
  // A property or method signature of the package's own interfaces and type literals, when some class of the
  // package declares a member of that name: the interfaces the classes reach each other through (a queue's links,
  // a host's callbacks). An interface typing someone else's object (a stream's internals, the SDK's signal) names
  // no member of ours, or names one the dependencies' types spell too, and keeps its names.
  const classMemberNames = new Set();
  if (publicEntry !== undefined) {
    const collect = (node) => {
      if (isMember(node)) classMemberNames.add(node.name.text);
      ts.forEachChild(node, collect);
    };
    for (const sf of program.getSourceFiles()) if (own.has(ts.sys.resolvePath(sf.fileName))) collect(sf);
  }
  const isOwnSignature = (decl) =>
    (ts.isPropertySignature(decl) || ts.isMethodSignature(decl)) &&
    decl.name !== undefined &&
    ts.isIdentifier(decl.name) &&
    classMemberNames.has(decl.name.text) &&
    isOwn(decl);
  const isMangleable = (decl) =>
    publicEntry !== undefined ? isMember(decl) || isOwnSignature(decl) : isMember(decl) && isPrivate(decl);

  // What the package publishes and depends on: names that must keep their spelling (class members only).
  const published = new Set();
  if (publicEntry !== undefined) {
    const emitted = new Map();
    program.emit(undefined, (fileName, text) => emitted.set(ts.sys.resolvePath(fileName), text), undefined, true);
    const queue = [ts.sys.resolvePath(join(packageDir, publicEntry)).replace(/\.ts$/, ".d.ts")];
    const seen = new Set(queue);
    while (queue.length > 0) {
      const file = queue.pop();
      const text = emitted.get(file);
      if (text === undefined) throw new Error(`mangle-props: no declarations emitted for ${file}`);
      for (const w of text.match(/[A-Za-z_$][\w$]*/g) ?? []) published.add(w);
      for (const [, spec] of text.matchAll(/(?:from|import\()\s*["'](\.[^"']+)["']/g)) {
        const next = ts.sys.resolvePath(join(file, "..", spec.replace(/\.js$/, ""))) + ".d.ts";
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    for (const dir of dependencyTypeFolders(packageDir)) declarationWords(dir, published);
  }
  // `on<Event>` is how Node and undici call an object's hooks, declared in their types or not (undici 7 calls a
  // dispatch handler's `onRequestSent`, which its types omit): such a method keeps its name even when private.
  const keepsName = (decl) =>
    /^on[A-Z]/.test(decl.name.text) ||
    (!isPrivate(decl) && (published.has(decl.name.text) || decl.name.text.startsWith("_")));

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
      if (isMangleable(node)) {
        if (keepsName(node)) blocked.add(node.name.text);
        else candidates.add(node.name.text);
      }
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
          ts.isMethodSignature(node)) &&
        node.name !== undefined &&
        !isMangleable(node)
      ) {
        blocked.add(node.name.getText(sf));
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
  if (publicEntry !== undefined) {
    // pool-monitor's short names avoid the words of the sources it was built with; turbo does not rebuild it when a
    // handler package changes. A member a handler class keeps under a name pool-monitor could use as a short name,
    // and pool-monitor's sources never spell, could meet one on an object (a handler's subclass of a pool-monitor
    // class): refuse it.
    const base = workspaceWords(join(packageDir, ".."), "pool-monitor");
    const chosen = new Set(names);
    for (const sf of sources) {
      const check = (node) => {
        if (isMember(node) && !chosen.has(node.name.text)) {
          const kept = node.name.text;
          if (kept.length <= 2 && FIRST["pool-monitor"].includes(kept[0]) && !base.has(kept)) {
            throw new Error(
              `mangle-props: ${name} keeps a class member "${kept}", a possible short name of pool-monitor's`
            );
          }
        }
        ts.forEachChild(node, check);
      };
      check(sf);
    }
  }
  const cache = {};
  const short = shortNames(first, taken);
  for (const n of names) cache[n] = short.next().value;
  const pattern = names.length === 0 ? "^$" : `^(?:${names.join("|")})$`;
  return { mangleProps: new RegExp(pattern), mangleCache: cache };
}

/**
 * The folders whose `.d.ts` files name what the package may touch from outside: `@types/node`, TypeScript's ES
 * library, and every dependency of the package (`undici-types` with `undici`). A workspace dependency must be built
 * (its dist holds its declarations): the build order (turbo `^build`) guarantees it; a missing one throws.
 */
function dependencyTypeFolders(packageDir) {
  const require = createRequire(join(packageDir, "package.json"));
  const folderOf = (name) => dirname(require.resolve(`${name}/package.json`));
  const { dependencies = {} } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const names = ["@types/node", ...Object.keys(dependencies)];
  if ("undici" in dependencies) names.push("undici-types");
  const folders = [join(dirname(require.resolve("typescript")), "..", "lib")];
  for (const name of names) {
    const folder = folderOf(name);
    if (name.startsWith("@sockeye/") && !existsSync(join(folder, "dist", "index.d.ts"))) {
      throw new Error(`mangle-props: build ${name} first (its declarations are read from its dist)`);
    }
    folders.push(folder);
  }
  return folders;
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
