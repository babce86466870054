// =============================================================================
// mangle-props.mjs: short names for a package's own class members in its built dist (tsup/esbuild mangleProps).
//
// Why: property names are a third of a handler's bundle, and a minifier never renames them. Names that only
// Sockeye's code can reach can be renamed at build time; public API, option and stats names, and every name of
// Node, the SDK or undici stay as they are. The published .d.ts is built from the sources, so it is unchanged.
//
// Which names: every class member (property, method, accessor, parameter property) of a class declared in the
// package's src (specs and mocks excluded), and the members of its own interfaces named like one of them (the
// interfaces its classes reach each other through), when nothing published or depended upon spells them (see
// `manglePropsFor()`): for the core, pool-monitor, what its public entry declares once `@internal` members are left
// out (the members of its `/internal` API and the `@internal` members of its public classes are renamed); for a
// handler package, what its public entry declares and what its dependencies' declarations spell. A name is left
// alone when it is used anywhere in the package in a way the type checker cannot tie to such a member: a property
// access resolving to anything else (a Node or SDK object, an `any`, an interface), an object-literal key or
// destructuring key, or the text of a string literal (reflection, `"name" in x`).
//
// Across packages: pool-monitor's build writes its mapping to `dist/mangle-map.json`; a handler package's build
// gives every pool-monitor member it reaches (an access the checker ties to pool-monitor's declaration, a member
// overriding or implementing one) pool-monitor's short name, and fails, naming the name, when it also spells that
// name in a way the short name cannot follow (then add it to `CORE_KEEPS`). Tests run a handler's sources against
// pool-monitor's sources (vitest.config.ts), built code against built code.
//
// Which short names: each package draws from its own first letters (`FIRST`), so a subclass built in one package
// never reuses a short name of its base class built in another; within a package the mapping is one-to-one and
// the most used names get the shortest; every identifier of the workspace's sources is skipped (it may be a real
// property somewhere). The mapping is a function of the package's sources (and pool-monitor's built mapping) only,
// so the ESM and CommonJS builds of a package agree.
//
// Cost: one TypeScript program over the package's src at each build (pool-monitor: two, and a scan of Node's
// declarations; a few seconds each).
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
/** The package whose members the others build on: its short names are written to `dist/${MANGLE_MAP}`. */
const CORE = "pool-monitor";
/** File of the core's dist holding its mapping (name → short name), read by the packages built on it. */
export const MANGLE_MAP = "mangle-map.json";
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

/** The `.d.ts` files under `dir` (recursively, relative to it); none if it does not exist. */
function declarationFiles(dir) {
  try {
    return readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => /\.d\.[cm]?ts$/.test(f));
  } catch {
    return [];
  }
}

/** Words of every `.d.ts` file under `dir` (recursively); nothing if it does not exist. */
function declarationWords(dir, words) {
  for (const f of declarationFiles(dir)) {
    for (const w of readFileSync(join(dir, f), "utf8").match(/[A-Za-z_$][\w$]*/g) ?? []) words.add(w);
  }
  return words;
}

/**
 * Identifiers declared by the `.d.ts` files under `dir` (recursively; TypeScript's own compiler API, `typescript.d.ts`
 * and co., is not a runtime type): comments and string literal types are skipped.
 */
function declarationIdentifiers(dir, words) {
  const scanner = ts.createScanner(ts.ScriptTarget.ES2022, true);
  for (const f of declarationFiles(dir)) {
    if (/(^|[\\/])(typescript|tsserverlibrary)\.d\.ts$/.test(f)) continue;
    scanner.setText(readFileSync(join(dir, f), "utf8"));
    for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
      if (
        token === ts.SyntaxKind.Identifier ||
        (token >= ts.SyntaxKind.FirstKeyword && token <= ts.SyntaxKind.LastKeyword)
      ) {
        words.add(scanner.getTokenText());
      }
    }
  }
  return words;
}

/**
 * Members of the core that keep their names although only Sockeye's packages use them: a package built on the core
 * also spells them in a way the core's short name cannot follow (a published member of its own of the same name).
 * The build of that package says so when a name must be added here.
 */
const CORE_KEEPS = [
  // undici-http-handler's OriginPoolState.evidence, published in its declarations, besides PoolReading's.
  "evidence",
  // undici-http-handler's PoolRequestNode.heldSince (its list nodes), besides RequestCore's.
  "heldSince",
  // node-http-handler's Http2Waiter.begunAt and its monitor's views of it, besides RequestCore's.
  "begunAt",
];

/**
 * The names a declaration file gives properties (members of classes, interfaces and type literals, enum members) and
 * exports: what code outside may read as a property. Parameter, type and local names are not (the core's published
 * `configure(options)` does not make `options` a published property).
 */
function propertyNames(fileName, text, words) {
  const visit = (node) => {
    const name = node.name;
    if (
      name !== undefined &&
      (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) &&
      (ts.isClassElement(node) ||
        ts.isTypeElement(node) ||
        ts.isEnumMember(node) ||
        ts.isExportSpecifier(node) ||
        ts.isClassDeclaration(node) ||
        ts.isFunctionDeclaration(node) ||
        ts.isInterfaceDeclaration(node) ||
        ts.isTypeAliasDeclaration(node) ||
        ts.isEnumDeclaration(node) ||
        ts.isVariableDeclaration(node))
    ) {
      words.add(name.text);
    }
    if (ts.isExportSpecifier(node) && node.propertyName !== undefined) words.add(node.propertyName.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true));
  return words;
}

/** Members the language or Node calls on any object by name. */
const RUNTIME_PROTOCOL = [
  "then",
  "toJSON",
  "toString",
  "valueOf",
  "next",
  "return",
  "throw",
  "handleEvent",
  "constructor",
];

/**
 * The esbuild options that mangle `packageDir`'s class members (only its private ones without `publicEntry`): `mangleProps` (a regex of exactly those names)
 * and `mangleCache` (their short names). `packageDir` is the package's folder (`packages/<name>`).
 *
 * With `publicEntry`, the package's other class members are renamed too when their name appears nowhere in what the
 * package publishes or depends on, and, as for private members, is never used in a way the checker cannot tie to a
 * class member of the package (an access through an interface, e.g. one typing Node's internals, keeps it); never a
 * name starting with `_` (Node's internals) or `on<Event>` (a hook Node or undici calls).
 * - pool-monitor (the core): not in the declarations of what its public entry exports and of every module they
 *   import, emitted without `@internal` members and without comments; not an identifier of Node's or the ES
 *   library's declarations, nor a name the runtime calls by itself (`RUNTIME_PROTOCOL`), nor in `CORE_KEEPS`.
 * - a handler package: not in the declarations of its entry and of every module they import (emitted here from the
 *   sources), not in any `.d.ts` of its dependencies (`dependencyTypeFolders()`: Node's, the ES library's, and each
 *   dependency's, the built pool-monitor's included), except pool-monitor's renamed members it reaches, which take
 *   pool-monitor's short names (`coreMangleMap()`).
 */
export function manglePropsFor(packageDir, { publicEntry } = {}) {
  const name = packageDir.split(/[\\/]/).filter(Boolean).pop();
  const first = FIRST[name];
  if (first === undefined) throw new Error(`mangle-props: no short-name letters for package "${name}"`);
  // The core renames its internal members too (its public entry's declarations without `@internal` members name
  // what stays); a package built on it takes the core's short names for the core's members it spells.
  const isCore = name === CORE && publicEntry !== undefined;
  const core = publicEntry !== undefined && !isCore ? coreMangleMap(packageDir) : undefined;
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
  // A member the core renamed, as its built declarations spell it (the package then uses the core's short name).
  const coreDir = core === undefined ? undefined : ts.sys.resolvePath(core.dir);
  const isCoreRenamed = (decl) =>
    coreDir !== undefined &&
    decl.name !== undefined &&
    ts.isIdentifier(decl.name) &&
    Object.hasOwn(core.map, decl.name.text) &&
    ts.sys.resolvePath(decl.getSourceFile().fileName).startsWith(`${coreDir}/`);
  const isMangleable = (decl) =>
    publicEntry !== undefined
      ? isMember(decl) || isOwnSignature(decl) || isCoreRenamed(decl)
      : isMember(decl) && isPrivate(decl);

  // What the package publishes and depends on: names that must keep their spelling (class members only).
  const published = new Set();
  const ownPublished = new Set();
  if (publicEntry !== undefined) {
    const emitted = new Map();
    const entry = ts.sys.resolvePath(join(packageDir, publicEntry));
    const declarationOf = (file) => ts.sys.resolvePath(file).replace(/\.ts$/, ".d.ts");
    const queue = [declarationOf(entry)];
    if (isCore) {
      // The core's public entry re-exports from its internal one: start from the files that declare what it exports
      // (their declarations without `@internal` members and comments), not from the whole internal entry.
      const stripped = ts.createProgram(files, {
        ...program.getCompilerOptions(),
        stripInternal: true,
        removeComments: true,
      });
      stripped.emit(undefined, (fileName, text) => emitted.set(ts.sys.resolvePath(fileName), text), undefined, true);
      const entryFile = program.getSourceFile(entry);
      for (const exported of checker.getExportsOfModule(checker.getSymbolAtLocation(entryFile))) {
        const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
        for (const decl of target.declarations ?? []) {
          if (isOwn(decl)) queue.push(declarationOf(decl.getSourceFile().fileName));
        }
      }
    } else {
      program.emit(undefined, (fileName, text) => emitted.set(ts.sys.resolvePath(fileName), text), undefined, true);
    }
    const seen = new Set(queue);
    while (queue.length > 0) {
      const file = queue.pop();
      const text = emitted.get(file);
      if (text === undefined) throw new Error(`mangle-props: no declarations emitted for ${file}`);
      if (isCore) propertyNames(file, text, published);
      else for (const w of text.match(/[A-Za-z_$][\w$]*/g) ?? []) published.add(w);
      // Without its comments: what the package's own published types spell.
      const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "");
      for (const w of code.match(/[A-Za-z_$][\w$]*/g) ?? []) ownPublished.add(w);
      // The core's entry itself is not followed: what it exports was queued above.
      if (isCore && file === declarationOf(entry)) continue;
      for (const [, spec] of text.matchAll(/(?:from|import\()\s*["'](\.[^"']+)["']/g)) {
        const next = ts.sys.resolvePath(join(file, "..", spec.replace(/\.js$/, ""))) + ".d.ts";
        if (!seen.has(next)) {
          seen.add(next);
          queue.push(next);
        }
      }
    }
    if (isCore) {
      // The core's classes extend nothing outside it: a dependency's name matters only as a member the runtime may
      // call on an object by name (an identifier its types declare, not a word of a comment or of a string type).
      for (const dir of dependencyTypeFolders(packageDir)) declarationIdentifiers(dir, published);
      for (const w of [...RUNTIME_PROTOCOL, ...CORE_KEEPS]) published.add(w);
    } else {
      for (const dir of dependencyTypeFolders(packageDir)) declarationWords(dir, published);
    }
  }
  // `on<Event>` is how Node and undici call an object's hooks, declared in their types or not (undici 7 calls a
  // dispatch handler's `onRequestSent`, which its types omit): such a method keeps its name even when private.
  // A name the core renames is in the core's declarations (a dependency's): only the package's own published types
  // (not a member tagged `@internal`) keep it.
  const renamedByCore = (text) => core !== undefined && Object.hasOwn(core.map, text);
  const keepsName = (decl) =>
    /^on[A-Z]/.test(decl.name.text) ||
    (!isPrivate(decl) &&
      (renamedByCore(decl.name.text)
        ? ownPublished.has(decl.name.text) && !ts.getJSDocTags(decl).some((t) => t.tagName.text === "internal")
        : published.has(decl.name.text) || decl.name.text.startsWith("_")));
  // Names of the core's renamed members this package reaches: accesses, and members overriding or implementing one.
  const coreUses = new Set();
  const linkedToCore = (decl) => {
    const cls = ts.isParameter(decl) ? decl.parent.parent : decl.parent;
    if (!ts.isClassLike(cls)) return false;
    const bases = [...(checker.getBaseTypes(checker.getTypeAtLocation(cls)) ?? [])];
    for (const node of ts.getEffectiveImplementsTypeNodes(cls) ?? []) bases.push(checker.getTypeFromTypeNode(node));
    return bases.some((base) =>
      (checker.getPropertyOfType(base, decl.name.text)?.declarations ?? []).some(isCoreRenamed)
    );
  };

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
        if (renamedByCore(node.name.text) && isOwn(node) && linkedToCore(node)) coreUses.add(node.name.text);
      }
      if (ts.isStringLiteralLike(node)) blocked.add(node.text);
      let key;
      if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) {
        key = node.name;
        if (!symbolIsOurs(key)) blocked.add(key.text);
        else if (renamedByCore(key.text) && checker.getSymbolAtLocation(key).declarations.some(isCoreRenamed)) {
          coreUses.add(key.text);
        }
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

  if (core !== undefined) {
    const clashes = [...coreUses].filter((n) => blocked.has(n));
    if (clashes.length > 0) {
      throw new Error(
        `mangle-props: ${name} spells ${clashes.map((n) => `"${n}"`).join(", ")}, renamed by ${CORE}, in a way not ` +
          `tied to its member (another object's property, an object-literal or destructuring key, a string): rename ` +
          `one of them, or keep the name in ${CORE} (use it in a string there)`
      );
    }
  }
  const names = [...candidates]
    .filter((n) => !blocked.has(n) && !coreUses.has(n))
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
  for (const n of [...coreUses].sort()) {
    cache[n] = core.map[n];
    names.push(n);
  }
  const pattern = names.length === 0 ? "^$" : `^(?:${names.join("|")})$`;
  return { mangleProps: new RegExp(pattern), mangleCache: cache };
}

/**
 * The core's mapping (`dist/mangle-map.json` of the built `@sockeye/pool-monitor`) when `packageDir` depends on it;
 * `undefined` otherwise. The build order (turbo `^build`) guarantees it is built; a missing map throws.
 */
function coreMangleMap(packageDir) {
  const { dependencies = {} } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
  const coreName = `@sockeye/${CORE}`;
  if (!(coreName in dependencies)) return undefined;
  const dir = dirname(createRequire(join(packageDir, "package.json")).resolve(`${coreName}/package.json`));
  const file = join(dir, "dist", MANGLE_MAP);
  if (!existsSync(file))
    throw new Error(`mangle-props: build ${coreName} first (its ${MANGLE_MAP} is read from its dist)`);
  return { dir, map: JSON.parse(readFileSync(file, "utf8")) };
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
