// =============================================================================
// number-defines.mjs: the `Number` constants a build writes as literals (tsup/esbuild `define`).
//
// Why: a minifier keeps `Number.POSITIVE_INFINITY` (24 bytes) as it is, but writes the global `Infinity` as `1/0`
// (3 bytes); the handlers use the constant some 30 times (and `Number.NEGATIVE_INFINITY`, as `-1/0`, a few). These properties are read-only and non-configurable, so
// the literal is the same value everywhere: replacing them changes no behaviour, only bytes. The sources keep the
// explicit names.
// =============================================================================

/** esbuild `define` entries: each `Number` constant to its literal value. */
export const NUMBER_DEFINES = {
  "Number.POSITIVE_INFINITY": "Infinity",
  // A define is JSON or one identifier: `-1e999` is JSON for -Infinity (written `-1/0` once minified).
  "Number.NEGATIVE_INFINITY": "-1e999",
  "Number.NaN": "NaN",
  "Number.MAX_SAFE_INTEGER": "9007199254740991",
};
