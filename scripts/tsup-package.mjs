/**
 * The tsup options every published package builds with (its `tsup.config.ts` adds only what is its own).
 *
 * CommonJS and ESM for Node 20, with `.d.ts`, unminified and with every name as the source spells it: what ships
 * reads like the source, in a debugger, a heap snapshot or a stack trace (tested by scripts/dist-member-names.spec.ts).
 * An app's bundler minifies it with the app if it wants to.
 *
 * No `keepNames`: its helper is a static block in every class, which no bundler can drop, so an app bundle would carry
 * every class of the package (the HTTP/2 handler in an HTTP/1.1 app). Names come out right without it as long as no
 * class names itself inside its own body (esbuild would build it as `class _Name`): `create()` calls a function
 * defined after the class. Tested by scripts/export-names.spec.ts.
 */
export const PACKAGE_BUILD = {
  entry: ["src/index.ts"],
  format: ["cjs", "esm"],
  dts: true,
  clean: true,
  sourcemap: false,
  minify: false,
  target: "node20",
  platform: "node",
  splitting: false,
  keepNames: false,
};
