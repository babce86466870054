import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["cjs", "esm"],
  dts: true,
  clean: true,
  sourcemap: false,
  target: "node20",
  platform: "node",
  splitting: false,
  // Keep the real `name` of every class and function (esbuild would otherwise rename a self-referencing class to
  // `_NodeHttpHandler`, visible in `util.inspect` and logs). Tested by scripts/export-names.spec.ts.
  keepNames: true,
});
