/**
 * The published workspace packages: every `packages/<dir>/package.json` that is not `"private": true`.
 * Read from disk each time, so a new package is covered by every check (package metadata, export names) without a
 * list to keep in sync.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the repository root. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * @typedef {object} PublishedPackage
 * @property {string} name package name, e.g. `@sockeye/node-http-handler`
 * @property {string} dir absolute path of the package folder
 * @property {string} relDir folder relative to the repository root, e.g. `packages/node-http-handler`
 * @property {Record<string, any>} manifest the parsed package.json
 */

/** @returns {PublishedPackage[]} sorted by folder name */
export function publishedPackages() {
  const root = join(REPO_ROOT, "packages");
  const out = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = join(root, entry.name, "package.json");
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, "utf8"));
    if (manifest.private === true) continue;
    out.push({ name: manifest.name, dir: join(root, entry.name), relDir: `packages/${entry.name}`, manifest });
  }
  return out.sort((a, b) => a.relDir.localeCompare(b.relDir));
}

/**
 * The files under `dir` (absolute paths, recursively) whose path relative to it passes `keep`; nothing under a
 * `node_modules` or `dist` folder.
 * @param {string} dir @param {(rel: string) => boolean} keep
 */
export function filesUnder(dir, keep) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((rel) => !/(^|[\\/])(node_modules|dist)([\\/]|$)/.test(rel) && keep(rel))
    .map((rel) => join(dir, rel));
}
