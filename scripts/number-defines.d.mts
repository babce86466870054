/** Types of number-defines.mjs (for the packages' tsup.config.ts). */

/** esbuild `define` entries: each `Number` constant to its literal value. */
export const NUMBER_DEFINES: Record<string, string>;
