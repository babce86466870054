import type { Plugin } from "esbuild";
import { defineConfig } from "tsup";

/**
 * The public entry (`src/index.ts`) re-exports its runtime values from `./internal`; this keeps that import out of
 * its bundle (`require("./internal.js")` / `import … from "./internal.mjs"`), so the package's code is built once,
 * into the internal entry, and an app that loads both entries (every handler does) holds one copy of each module:
 * one `PoolMonitor` class, one detector, one `timing` seam. (tsup's own CommonJS code splitting would do the same
 * but rename classes, `_class2`, and down-level the output.)
 */
const internalAsSibling: Plugin = {
  name: "internal-as-sibling",
  setup(build) {
    const ext = build.initialOptions.format === "esm" ? ".mjs" : ".js";
    build.onResolve({ filter: /^\.\/internal$/ }, (args) =>
      /[\\/]src[\\/]index\.ts$/.test(args.importer) ? { path: `./internal${ext}`, external: true } : undefined
    );
  },
};

export default defineConfig({
  entry: ["src/index.ts", "src/internal.ts"],
  format: ["cjs", "esm"],
  dts: true,
  clean: true,
  sourcemap: false,
  target: "node20",
  platform: "node",
  splitting: false,
  esbuildPlugins: [internalAsSibling],
  // No keepNames: its helper is a static block in every class, which no bundler can drop, so an app bundle would
  // carry every class of the package (the HTTP/2 handler in an HTTP/1.1 app). Names come out right without it as
  // long as no class names itself inside its own body (esbuild would build it as `class _Name`): `create()` calls a
  // function defined after the class. Tested by scripts/export-names.spec.ts.
  keepNames: false,
});
