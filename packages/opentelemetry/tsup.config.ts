import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "tsup";

/** This package's version, compiled into the meter version (`__SOCKEYE_OPENTELEMETRY_VERSION__`) so it cannot drift. */
const { version } = JSON.parse(readFileSync(join(__dirname, "package.json"), "utf8")) as { version: string };

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
  // Tested by scripts/package-version.spec.ts (the built meter's version is package.json's).
  define: { __SOCKEYE_OPENTELEMETRY_VERSION__: JSON.stringify(version) },
});
