/**
 * Generates the options tables of the READMEs from the options types' TSDoc, so the docs cannot drift from the code.
 *
 *   node scripts/options-tables.mjs           # rewrite every table in place
 *   node scripts/options-tables.mjs --check   # exit 1, naming each stale table, when a README differs (CI, tests)
 *
 * A table lives between two marker comments in a Markdown file:
 *
 *   <!-- options-table:start NodeHttpHandlerOptions -->
 *   ...generated...
 *   <!-- options-table:end NodeHttpHandlerOptions -->
 *
 * and is listed in `TABLES` below (adding an options interface is one line there). For each property of the type,
 * inherited ones included (read with the TypeScript checker), a row gives the name, the type, the default and the
 * description:
 * - description: the property's TSDoc summary; for an inherited property without its own TSDoc in the interface,
 *   the entry "- `name`: …" of the interface's TSDoc list if there is one (Sockeye's wording of upstream options),
 *   else the inherited TSDoc;
 * - default: the `@defaultValue` tag; else a "Default …" sentence of that list entry, "none" for "= none";
 *   else "—";
 * - `expand: ["saturation"]` adds one row per property of that property's (named) type: `saturation.windowSamples`.
 * Inherited properties come first (in declaration order), then the interface's own.
 * Cost: one TypeScript program per run over the listed source files (about a second).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "./lib/published-packages.mjs";

/**
 * @typedef {object} TableSpec
 * @property {string} file Markdown file, relative to the repository root
 * @property {string} source TypeScript file that declares the interface
 * @property {string} type the exported options interface
 * @property {string[]} [expand] properties whose own properties get rows of their own (`name.sub`)
 */

const HANDLER = "packages/node-http-handler/src/node-http-handler-options.ts";
const MONITOR = "packages/pool-monitor/src/pool-monitor-options.ts";
const METRICS = "packages/opentelemetry/src/register-pool-metrics.ts";
const HTTP2 = "packages/node-http-handler/src/node-http2-handler-options.ts";
const UNDICI = "packages/undici-http-handler/src/undici-http-handler-options.ts";

/** Every generated table; one line each. @type {TableSpec[]} */
export const TABLES = [
  {
    file: "packages/node-http-handler/README.md",
    source: HANDLER,
    type: "NodeHttpHandlerOptions",
    expand: ["saturation"],
  },
  { file: "packages/node-http-handler/README.md", source: HTTP2, type: "NodeHttp2HandlerOptions" },
  {
    file: "packages/undici-http-handler/README.md",
    source: UNDICI,
    type: "UndiciHttpHandlerOptions",
    expand: ["saturation"],
  },
  { file: "packages/pool-monitor/README.md", source: MONITOR, type: "PoolMonitorOptions" },
  { file: "packages/opentelemetry/README.md", source: METRICS, type: "PoolMetricsOptions" },
];

/** @param {string} type */
export const startMarker = (type) => `<!-- options-table:start ${type} -->`;
/** @param {string} type */
export const endMarker = (type) => `<!-- options-table:end ${type} -->`;

/**
 * @typedef {object} OptionRow
 * @property {string} name
 * @property {string} type
 * @property {string} defaultValue
 * @property {string} description
 */

/**
 * Reads the rows of every requested interface with one TypeScript program.
 * @param {Array<Pick<TableSpec, "source" | "type" | "expand">>} specs
 * @param {string} [root] paths in `specs` are relative to it
 * @returns {Map<string, OptionRow[]>} keyed by `${source}#${type}`
 */
export function readOptionRows(specs, root = REPO_ROOT) {
  const files = [...new Set(specs.map((s) => join(root, s.source)))];
  const program = ts.createProgram(files, {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ["node"],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const out = new Map();
  for (const spec of specs) {
    const sourceFile = program.getSourceFile(join(root, spec.source));
    if (sourceFile === undefined) throw new Error(`options-tables: cannot read ${spec.source}`);
    const decl = sourceFile.statements.find(
      (s) => (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.name.text === spec.type
    );
    if (decl === undefined) throw new Error(`options-tables: ${spec.source} declares no interface ${spec.type}`);
    out.set(`${spec.source}#${spec.type}`, rowsOf(checker, decl, spec.expand ?? []));
  }
  return out;
}

/**
 * @param {ts.TypeChecker} checker
 * @param {ts.InterfaceDeclaration | ts.TypeAliasDeclaration} decl
 * @param {string[]} expand
 * @returns {OptionRow[]}
 */
function rowsOf(checker, decl, expand) {
  const type = checker.getTypeAtLocation(decl.name);
  const listEntries = tsdocListEntries(ts.getJSDocCommentsAndTags(decl));
  const own = [];
  const inherited = [];
  for (const prop of checker.getPropertiesOfType(type)) {
    const propDecl = prop.declarations?.[0];
    if (propDecl === undefined) continue;
    const isOwn =
      propDecl.parent === decl ||
      (ts.isTypeAliasDeclaration(decl) && propDecl.getSourceFile() === decl.getSourceFile());
    const row = rowOf(checker, prop, propDecl, isOwn ? undefined : listEntries.get(prop.name), !isOwn);
    (isOwn ? own : inherited).push(row);
    if (expand.includes(prop.name)) {
      const subType = checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(prop, propDecl));
      for (const sub of checker.getPropertiesOfType(subType)) {
        const subDecl = sub.declarations?.[0];
        if (subDecl === undefined) continue;
        const subRow = rowOf(checker, sub, subDecl, undefined, false);
        (isOwn ? own : inherited).push({ ...subRow, name: `${prop.name}.${subRow.name}` });
      }
    }
  }
  return [...inherited, ...own];
}

/**
 * @param {ts.TypeChecker} checker
 * @param {ts.Symbol} prop
 * @param {ts.Declaration} propDecl
 * @param {string | undefined} listEntry
 * @param {boolean} inherited
 * @returns {OptionRow}
 */
function rowOf(checker, prop, propDecl, listEntry, inherited) {
  // Own properties: the type as written; inherited ones: as the checker names it (no import aliases of the parent).
  const typeNode = /** @type {any} */ (propDecl).type;
  const typeText =
    typeNode !== undefined && !inherited
      ? typeNode.getText().replace(/\s+/g, " ")
      : checker.typeToString(checker.getNonNullableType(checker.getTypeOfSymbolAtLocation(prop, propDecl)));
  const tags = prop.getJsDocTags(checker);
  const defaultTag = tags.find((t) => t.name === "defaultValue" || t.name === "default");
  let description = clean(ts.displayPartsToString(prop.getDocumentationComment(checker)));
  let defaultValue = defaultTag === undefined ? undefined : clean(ts.displayPartsToString(defaultTag.text));
  if (listEntry !== undefined) {
    description = listEntry;
    defaultValue ??= defaultFromText(listEntry);
  }
  return { name: prop.name, type: typeText, defaultValue: defaultValue ?? "—", description: description || "—" };
}

/**
 * The "- `name`: text" entries of an interface's TSDoc list; "- `a` / `b`: text" documents both.
 * @param {readonly (ts.JSDoc | ts.JSDocTag)[]} docs
 * @returns {Map<string, string>}
 */
function tsdocListEntries(docs) {
  const entries = new Map();
  for (const doc of docs) {
    const text = typeof doc.comment === "string" ? doc.comment : (ts.getTextOfJSDocComment(doc.comment) ?? "");
    /** @type {{ names: string[], lines: string[] } | undefined} */
    let current;
    const flush = () => {
      if (current !== undefined) for (const n of current.names) entries.set(n, clean(current.lines.join(" ")));
      current = undefined;
    };
    for (const line of text.split("\n")) {
      const m = /^- ((?:`\w+`(?: \/ )?)+):\s*(.*)$/.exec(line.trim());
      if (m !== null) {
        flush();
        current = { names: [...m[1].matchAll(/`(\w+)`/g)].map((x) => x[1]), lines: [m[2]] };
      } else if (current !== undefined && /^\s+\S/.test(line) && !line.trim().startsWith("-")) {
        current.lines.push(line.trim());
      } else {
        flush();
      }
    }
    flush();
  }
  return entries;
}

/** "Default false." → "false"; "`undefined`/`0` = none" → "none". @param {string} text */
function defaultFromText(text) {
  const m = /\b[Dd]efault(?:s to)?:?\s+((?:`[^`]*`|[^.;`])+)/.exec(text);
  if (m !== null) return m[1].trim();
  if (/=\s*none\b/.test(text)) return "none";
  return undefined;
}

/** Collapses whitespace, turns `{@link X}` into `X`. @param {string} text */
function clean(text) {
  return text
    .replace(/\{@link\s+([^}|\s]+)(?:\s*\|\s*([^}]+))?\}/g, (_m, target, label) => `\`${label ?? target}\``)
    .replace(/\s+/g, " ")
    .trim();
}

/** Markdown table cell: no newline, `|` escaped. @param {string} text */
const cell = (text) => text.replace(/\|/g, "\\|");

/**
 * The Markdown table (without markers).
 * @param {OptionRow[]} rows
 */
export function renderTable(rows) {
  const lines = [
    "| option | type | default | description |",
    "|---|---|---|---|",
    ...rows.map(
      (r) => `| \`${r.name}\` | ${cell(`\`${r.type}\``)} | ${cell(r.defaultValue)} | ${cell(r.description)} |`
    ),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * `markdown` with the table of `type` replaced by `table`.
 * @param {string} markdown @param {string} type @param {string} table @param {string} file for errors
 */
export function replaceTable(markdown, type, table, file) {
  const start = markdown.indexOf(startMarker(type));
  const end = markdown.indexOf(endMarker(type));
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`options-tables: ${file} has no "${startMarker(type)}" … "${endMarker(type)}" block`);
  }
  const head = markdown.slice(0, start + startMarker(type).length);
  return `${head}\n<!-- generated by scripts/options-tables.mjs from the TSDoc of ${type}; do not edit -->\n${table}${markdown.slice(end)}`;
}

/**
 * Regenerates every table of `TABLES`; returns the files whose content changed (or would change with `write: false`).
 * @param {{ write: boolean, tables?: TableSpec[], root?: string }} options
 * @returns {string[]}
 */
export function updateTables({ write, tables = TABLES, root = REPO_ROOT }) {
  const rows = readOptionRows(tables, root);
  /** @type {Map<string, string>} */
  const contents = new Map();
  for (const spec of tables) {
    const path = join(root, spec.file);
    const before = contents.get(spec.file) ?? readFileSync(path, "utf8");
    const table = renderTable(/** @type {OptionRow[]} */ (rows.get(`${spec.source}#${spec.type}`)));
    contents.set(spec.file, replaceTable(before, spec.type, table, spec.file));
  }
  const changed = [];
  for (const [file, after] of contents) {
    const path = join(root, file);
    if (readFileSync(path, "utf8") === after) continue;
    changed.push(file);
    if (write) writeFileSync(path, after);
  }
  return changed;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes("--check");
  try {
    const changed = updateTables({ write: !check });
    if (check && changed.length > 0) {
      for (const f of changed) console.error(`options-tables: ${f} is out of date with the options types' TSDoc`);
      console.error("options-tables: run `npm run docs:options` and commit the result");
      process.exitCode = 1;
    } else if (!check) {
      console.log(
        changed.length === 0 ? "options-tables: up to date" : `options-tables: updated ${changed.join(", ")}`
      );
    }
  } catch (error) {
    console.error(/** @type {Error} */ (error).message);
    process.exitCode = 1;
  }
}
