/**
 * Marks a handler package's type re-exports from `@sockeye/pool-monitor` as type-only in its built declarations.
 *
 * Why: the handler packages re-export the telemetry types (`PoolStats`, `SaturationReport`, …) and the error guards
 * (`isSockeyeTimeoutError`, …) so users import them from the package they installed. tsup's declaration bundler
 * writes them as `export { … } from '@sockeye/pool-monitor'`, dropping the `type` of the source's `export type { … }`.
 * TypeScript still knows which are types, but a checker that looks at one package alone (`attw --pack`) cannot, and
 * reports them as named exports that Node's CommonJS loader would not find. So every such line is split: the names
 * that are runtime exports of the built `@sockeye/pool-monitor` stay `export { … }`, the others become
 * `export type { … }`.
 *
 * Usage (a package's build script, after tsup): node ../../scripts/type-only-reexports.mjs dist/index.d.ts …
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const REEXPORT = /^export \{([^}]*)\} from '@sockeye\/pool-monitor';$/gm;

/** The runtime exports of the core, resolved from the package being built (its dependency). */
const values = new Set(Object.keys(createRequire(join(process.cwd(), "package.json"))("@sockeye/pool-monitor")));

for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(REEXPORT, (_line, list) => {
    const names = list
      .split(",")
      .map((n) => n.trim().replace(/^type /, ""))
      .filter(Boolean);
    const local = (n) => n.split(/\s+as\s+/)[0];
    const runtime = names.filter((n) => values.has(local(n)));
    const types = names.filter((n) => !values.has(local(n)));
    const lines = [];
    if (runtime.length > 0) lines.push(`export { ${runtime.join(", ")} } from '@sockeye/pool-monitor';`);
    if (types.length > 0) lines.push(`export type { ${types.join(", ")} } from '@sockeye/pool-monitor';`);
    return lines.join("\n");
  });
  if (next !== text) writeFileSync(file, next);
}
