// =============================================================================
// handler-apps.mjs: the bundles that weigh each handler (bench-bundle.mjs, and the guard in
// test/bundle-limit.integ.spec.ts): one ESM entry per handler that exports its class, bundled by esbuild with the
// handler's own packages inside and every other package (the Smithy packages the SDK loads anyway, undici) external,
// the same way for Sockeye and upstream, so the bytes compare code, not build setups.
// =============================================================================

import { build } from "esbuild";

/**
 * The guard against weight creeping back: each Sockeye handler's bundle weighs at most this many times upstream's
 * `NodeHttpHandler` bundle. Not a target (issue 35 retired minified bytes as one: the dist ships its source names),
 * only a ceiling a little above today's heaviest handler (5.82×), to be lowered as code goes.
 */
export const LIMIT_RATIO = 5.87;

/** Each handler: its entry, the packages that are its weight (bundled), and the upstream handler it is compared to. */
export const HANDLERS = [
  {
    id: "upstream",
    label: "@smithy/node-http-handler NodeHttpHandler (upstream)",
    source: `export { NodeHttpHandler } from "@smithy/node-http-handler";`,
    packages: ["@smithy/node-http-handler"],
  },
  {
    id: "upstream-h2",
    label: "@smithy/node-http-handler NodeHttp2Handler",
    source: `export { NodeHttp2Handler } from "@smithy/node-http-handler";`,
    packages: ["@smithy/node-http-handler"],
  },
  {
    id: "smithy-undici",
    label: "@smithy/undici-http-handler",
    source: `export { UndiciHttpHandler } from "@smithy/undici-http-handler";`,
    packages: ["@smithy/undici-http-handler"],
  },
  {
    id: "sockeye-node",
    peer: "upstream",
    label: "Sockeye NodeHttpHandler",
    source: `export { NodeHttpHandler } from "@sockeye/node-http-handler";`,
    packages: ["@sockeye/node-http-handler", "@sockeye/pool-monitor"],
  },
  {
    id: "sockeye-http2",
    peer: "upstream-h2",
    label: "Sockeye NodeHttp2Handler",
    source: `export { NodeHttp2Handler } from "@sockeye/node-http-handler";`,
    packages: ["@sockeye/node-http-handler", "@sockeye/pool-monitor"],
  },
  {
    id: "sockeye-undici",
    peer: "smithy-undici",
    label: "Sockeye UndiciHttpHandler",
    source: `export { UndiciHttpHandler } from "@sockeye/undici-http-handler";`,
    packages: ["@sockeye/undici-http-handler", "@sockeye/pool-monitor"],
  },
];

/** The packages some handler counts as its own: bundled; every other package stays an import. */
const OWN = new Set(HANDLERS.flatMap((h) => h.packages));

/** @type {import("esbuild").Plugin} */
const othersExternal = {
  name: "others-external",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, ({ path }) => {
      const parts = path.split("/");
      const name = path.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
      return OWN.has(name) ? undefined : { path, external: true };
    });
  },
};

/**
 * The minified bundle of `handler`'s entry: tree-shaken, ESM for Node, nothing written; packages no handler owns stay
 * imports, the workspace packages resolve from `repo` to their built dist.
 * @param {string} repo @param {{ source: string }} handler one of `HANDLERS`
 * @returns {Promise<string>} the bundle's code (its length is the handler's bytes)
 */
export async function bundleHandler(repo, { source }) {
  const result = await build({
    absWorkingDir: repo,
    stdin: { contents: source, resolveDir: repo, sourcefile: "app.mjs", loader: "js" },
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
    plugins: [othersExternal],
  });
  return result.outputFiles[0].text;
}
