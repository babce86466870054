import { defineConfig } from "tsup";
import { manglePropsFor } from "../../scripts/mangle-props.mjs";
import { NUMBER_DEFINES } from "../../scripts/number-defines.mjs";

/** Computed once for both formats, so the CommonJS and ESM builds agree. */
const mangle = manglePropsFor(__dirname, { publicEntry: "src/index.ts" });

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["cjs", "esm"],
  dts: true,
  clean: true,
  sourcemap: false,
  target: "node20",
  platform: "node",
  splitting: false,
  // No keepNames: its helper is a static block in every class, which no bundler can drop, so an app bundle would
  // carry every class of the package (the HTTP/2 handler in an HTTP/1.1 app). Names come out right without it as
  // long as no class names itself inside its own body (esbuild would build it as `class _Name`): `create()` calls a
  // function defined after the class. Tested by scripts/export-names.spec.ts.
  keepNames: false,
  // Private and internal class members get short names in the dist (the .d.ts keeps them): scripts/mangle-props.mjs.
  esbuildOptions(options) {
    // `Number.POSITIVE_INFINITY` and co. as literals (`1/0` once minified): scripts/number-defines.mjs.
    options.define = { ...options.define, ...NUMBER_DEFINES };
    options.mangleProps = mangle.mangleProps;
    options.mangleCache = { ...mangle.mangleCache };
  },
});
