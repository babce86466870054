// Builds every package (`turbo run build --output-logs=errors-only`) and prints turbo's output only when the build
// fails, so `npm run demo` starts with the demo's own output (and every line of it fits the terminal).
// Usage (from an npm script, where node_modules/.bin is on PATH): node scripts/build-quietly.mjs
import { spawnSync } from "node:child_process";

const result = spawnSync("turbo", ["run", "build", "--output-logs=errors-only"], {
  encoding: "utf8",
  stdio: ["ignore", "pipe", "pipe"],
});
if (result.error !== undefined || result.status !== 0) {
  process.stdout.write(result.stdout ?? "");
  process.stderr.write(result.stderr ?? "");
  if (result.error !== undefined) console.error(`build-quietly: ${result.error.message}`);
  process.exit(result.status ?? 1);
}
