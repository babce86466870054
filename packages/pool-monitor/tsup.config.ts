import type { Plugin } from "esbuild";
import { defineConfig } from "tsup";
import { PACKAGE_BUILD } from "../../scripts/tsup-package.mjs";

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
  ...PACKAGE_BUILD,
  entry: ["src/index.ts", "src/internal.ts"],
  esbuildPlugins: [internalAsSibling],
});
