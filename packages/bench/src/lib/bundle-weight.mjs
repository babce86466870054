// =============================================================================
// bundle-weight.mjs: what each package adds to a minified bundle, from an esbuild metafile.
//
// esbuild's metafile lists, for the output file, every input file with the bytes it contributed after tree-shaking
// and minification (`bytesInOutput`). An input belongs to the package whose folder it is in: a workspace package
// (`packages/<dir>/…`, named from that package's manifest) or an installed one (the last `node_modules/<name>` or
// `node_modules/@scope/<name>` of its path). The sums per package are exact (no estimate), so a change of a few
// hundred bytes is visible in one run.
// =============================================================================

/**
 * The package an esbuild input path belongs to, or `undefined` for the app's own files.
 * @param {string} input an input path as the metafile spells it (relative to the build's working directory)
 * @param {Record<string, string>} workspaceNames workspace folder name (e.g. `pool-monitor`) → package name
 * @returns {string | undefined}
 */
export function packageOf(input, workspaceNames) {
  const modules = input.lastIndexOf("node_modules/");
  if (modules !== -1) {
    const [first, second] = input.slice(modules + "node_modules/".length).split("/");
    return first.startsWith("@") ? `${first}/${second}` : first;
  }
  const workspace = /(?:^|\/)packages\/([^/]+)\//.exec(input);
  if (workspace !== null) return workspaceNames[workspace[1]] ?? `packages/${workspace[1]}`;
  return undefined;
}

/**
 * Bytes per package in the one output of a build.
 * @param {{ outputs: Record<string, { bytes: number, inputs: Record<string, { bytesInOutput: number }> }> }} metafile
 * @param {Record<string, string>} workspaceNames
 * @returns {{ total: number, app: number, packages: Record<string, number> }}
 */
export function bytesByPackage(metafile, workspaceNames) {
  const outputs = Object.values(metafile.outputs);
  if (outputs.length !== 1) throw new Error(`expected one output file, got ${outputs.length}`);
  const [output] = outputs;
  const packages = {};
  let app = 0;
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(input, workspaceNames);
    if (name === undefined) app += bytesInOutput;
    else packages[name] = (packages[name] ?? 0) + bytesInOutput;
  }
  return { total: output.bytes, app, packages };
}

/**
 * The bytes of `names` summed (a handler with the packages it brings along).
 * @param {Record<string, number>} packages
 * @param {readonly string[]} names
 */
export function sumOf(packages, names) {
  let sum = 0;
  for (const name of names) sum += packages[name] ?? 0;
  return sum;
}
