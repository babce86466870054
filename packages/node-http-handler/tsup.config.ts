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
  // No keepNames: its helper is a static block in every class, which no bundler can drop, so an app bundle would
  // carry every class of the package (the HTTP/2 handler in an HTTP/1.1 app). Names come out right without it as
  // long as no class names itself inside its own body (esbuild would build it as `class _Name`): `create()` calls a
  // function defined after the class. Tested by scripts/export-names.spec.ts.
  keepNames: false,
});
