// =============================================================================
// handler-apps.mjs: the apps whose bundles weigh each handler (bench-bundle.mjs, and the limit's spec in
// test/bundle-limit.integ.spec.ts): one small ESM app per handler that constructs an `S3Client` with it.
// =============================================================================

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

/**
 * The guard against weight creeping back: each Sockeye handler adds at most this many times upstream's bytes. Not a
 * target (issue 35 retired minified bytes as one: the dist ships its source names), only a ceiling a little above
 * today's heaviest handler, to be lowered as code goes.
 */
export const LIMIT_RATIO = 5.5;

/** Each handler: how the app builds it, and the packages that are its weight. */
export const HANDLERS = [
  {
    id: "upstream",
    label: "@smithy/node-http-handler (upstream)",
    source: `import { NodeHttpHandler } from "@smithy/node-http-handler"; const handler = new NodeHttpHandler();`,
    packages: ["@smithy/node-http-handler"],
  },
  {
    id: "smithy-undici",
    label: "@smithy/undici-http-handler",
    source: `import { UndiciHttpHandler } from "@smithy/undici-http-handler"; const handler = new UndiciHttpHandler();`,
    packages: ["@smithy/undici-http-handler"],
  },
  {
    id: "sockeye-node",
    label: "Sockeye NodeHttpHandler",
    source: `import { NodeHttpHandler } from "@sockeye/node-http-handler"; const handler = new NodeHttpHandler();`,
    packages: ["@sockeye/node-http-handler", "@sockeye/pool-monitor"],
    sources: ["node-http-handler", "pool-monitor"],
  },
  {
    id: "sockeye-http2",
    label: "Sockeye NodeHttp2Handler",
    source: `import { NodeHttp2Handler } from "@sockeye/node-http-handler"; const handler = new NodeHttp2Handler();`,
    packages: ["@sockeye/node-http-handler", "@sockeye/pool-monitor"],
    sources: ["node-http-handler", "pool-monitor"],
  },
  {
    id: "sockeye-undici",
    label: "Sockeye UndiciHttpHandler",
    source: `import { UndiciHttpHandler } from "@sockeye/undici-http-handler"; const handler = new UndiciHttpHandler();`,
    packages: ["@sockeye/undici-http-handler", "@sockeye/pool-monitor"],
    sources: ["undici-http-handler", "pool-monitor"],
  },
];

/**
 * Workspace folder → package name, read from each package's manifest.
 * @param {string} repo the repository's root folder
 * @returns {Record<string, string>}
 */
export function workspaceNames(repo) {
  const names = {};
  for (const dir of ["pool-monitor", "node-http-handler", "undici-http-handler", "opentelemetry"]) {
    names[dir] = JSON.parse(readFileSync(join(repo, "packages", dir, "package.json"), "utf8")).name;
  }
  return names;
}

/**
 * The app's source for `handler` (one entry of `HANDLERS`).
 * @param {{ source: string }} handler
 */
export function appSource(handler) {
  return [
    `import { S3Client } from "@aws-sdk/client-s3";`,
    handler.source,
    `export const client = new S3Client({ region: "us-east-1", requestHandler: handler });`,
  ].join("\n");
}

/**
 * esbuild's metafile of `source` bundled as a Lambda build would be: minified, tree-shaken, ESM for Node, nothing
 * written. Packages resolve from `repo` (the workspace packages to their built dist unless `extra` aliases them).
 * @param {string} repo @param {string} source @param {import("esbuild").BuildOptions} [extra]
 */
export async function bundleApp(repo, source, extra = {}) {
  const result = await build({
    absWorkingDir: repo,
    stdin: { contents: source, resolveDir: repo, sourcefile: "app.mjs", loader: "js" },
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    metafile: true,
    logLevel: "silent",
    ...extra,
  });
  if (result.metafile === undefined) throw new Error("esbuild returned no metafile");
  return result.metafile;
}
