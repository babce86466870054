import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "tsup";
import { PACKAGE_BUILD } from "../../scripts/tsup-package.mjs";

/** This package's version, compiled into the meter version (`__SOCKEYE_OPENTELEMETRY_VERSION__`) so it cannot drift. */
const { version } = JSON.parse(readFileSync(join(__dirname, "package.json"), "utf8")) as { version: string };

export default defineConfig({
  ...PACKAGE_BUILD,
  // Tested by scripts/package-version.spec.ts (the built meter's version is package.json's).
  define: { __SOCKEYE_OPENTELEMETRY_VERSION__: JSON.stringify(version) },
});
