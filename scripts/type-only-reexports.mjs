/**
 * Marks a handler package's re-exports from `@sockeye/pool-monitor` as type-only in its built declarations.
 *
 * Why: the handler packages re-export the telemetry types (`PoolStats`, `SaturationReport`, …) so users import them
 * from the package they installed. tsup's declaration bundler writes them as `export { … } from '@sockeye/pool-monitor'`,
 * dropping the `type` of the source's `export type { … }`. TypeScript still knows they are types, but a checker that
 * looks at one package alone (`attw --pack`) cannot, and reports them as named exports that Node's CommonJS loader
 * would not find. The source only ever re-exports types from the core (a value re-export would be a second path to
 * one class), so every such line is rewritten to `export type { … }`.
 *
 * Usage (a package's build script, after tsup): node ../../scripts/type-only-reexports.mjs dist/index.d.ts …
 */
import { readFileSync, writeFileSync } from "node:fs";

const REEXPORT = /^export \{([^}]*)\} from '@sockeye\/pool-monitor';$/gm;

for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(REEXPORT, "export type {$1} from '@sockeye/pool-monitor';");
  if (next !== text) writeFileSync(file, next);
}
