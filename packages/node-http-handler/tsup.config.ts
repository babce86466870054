import { defineConfig } from "tsup";
import { PACKAGE_BUILD } from "../../scripts/tsup-package.mjs";

export default defineConfig(PACKAGE_BUILD);
