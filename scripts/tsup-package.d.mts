/** Types of tsup-package.mjs (for the packages' tsup.config.ts). */
import type { Options } from "tsup";

/** The tsup options every published package builds with. */
export const PACKAGE_BUILD: Options;
