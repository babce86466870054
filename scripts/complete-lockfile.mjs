// Adds the optional platform packages that npm left out of package-lock.json, so `npm ci` accepts the lockfile.
//
// Usage: node scripts/complete-lockfile.mjs        (run after any `npm install` that rewrote the lockfile)
//
// Why: the registry these machines reach does not carry every platform variant of some optional binaries
// (@biomejs/cli-*, @rollup/rollup-*, @turbo/*: only the Linux ones), so npm leaves them out of the lockfile, and
// `npm ci` then rejects the lockfile with "Missing: … from lock file". Each missing entry is written from the
// registry's metadata when it has it, or else as a bare optional entry (name and the version the parent pins):
// an optional package that cannot be fetched is skipped by npm, as it would be on a platform it does not fit.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const root = new URL("..", import.meta.url);
const lockPath = new URL("package-lock.json", root);
/** What `npm view` reads of each missing package for its lockfile entry. */
const FIELDS = ["version", "dist.integrity", "os", "cpu", "libc", "license", "engines"];

function missing() {
  try {
    execFileSync("npm", ["ci", "--dry-run", "--ignore-scripts", "--no-audit", "--no-fund"], {
      cwd: root,
      stdio: "pipe",
    });
    return [];
  } catch (error) {
    const text = `${error.stdout}${error.stderr}`;
    return [...text.matchAll(/Missing: (.+?)@(\S*) from lock file/g)].map((m) => m[1]);
  }
}

const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const names = missing();
let added = 0;
for (const name of names) {
  let version;
  let parentEntry;
  for (const entry of Object.values(lock.packages)) {
    const spec = entry.optionalDependencies?.[name];
    if (spec) {
      version = spec;
      parentEntry = entry;
      break;
    }
  }
  if (!version) {
    console.error(`complete-lockfile: no parent declares ${name}; skipped`);
    continue;
  }
  let meta;
  try {
    const args = ["view", `${name}@${version}`, "--json", ...FIELDS];
    meta = JSON.parse(execFileSync("npm", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }));
  } catch {
    meta = { version };
  }
  const entry = { version: meta.version };
  if (meta["dist.integrity"]) entry.integrity = meta["dist.integrity"];
  if (meta.cpu) entry.cpu = meta.cpu;
  if (parentEntry.dev) entry.dev = true;
  if (meta.libc) entry.libc = meta.libc;
  if (meta.license) entry.license = meta.license;
  entry.optional = true;
  if (meta.os) entry.os = meta.os;
  if (meta.engines) entry.engines = meta.engines;
  lock.packages[`node_modules/${name}`] = entry;
  added++;
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))
);
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
const left = missing();
console.log(
  `complete-lockfile: added ${added} entries; npm ci ${left.length === 0 ? "accepts the lockfile" : `still misses ${left.join(", ")}`}`
);
process.exit(left.length === 0 ? 0 : 1);
