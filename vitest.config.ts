import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig, type Plugin } from "vitest/config";

const POOL_MONITOR_SRC = fileURLToPath(new URL("./packages/pool-monitor/src/", import.meta.url));

/**
 * Sources see `@sockeye/pool-monitor`'s sources, built code its built code: a handler's sources under test run
 * against pool-monitor's current sources (no build needed after a change there), and a built handler (the `dist`
 * tests) against the built pool-monitor, as a user's install would.
 */
const poolMonitorSources: Plugin = {
  name: "pool-monitor-sources",
  enforce: "pre",
  resolveId(source, importer) {
    if (importer === undefined || /[\\/]dist[\\/]/.test(importer)) return null;
    if (source === "@sockeye/pool-monitor") return `${POOL_MONITOR_SRC}index.ts`;
    if (source === "@sockeye/pool-monitor/internal") return `${POOL_MONITOR_SRC}internal.ts`;
    return null;
  },
};

// The AWS SDK prints a 9-line "releases after January 2027 need Node >= 22" warning once per test file on Node 20:
// noise in every run (CI tests Node 22 and 24 as well). Test workers inherit this environment.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

/**
 * Test files run side by side in one worker per CPU (at least two). Most integ files spend their time waiting on
 * loopback I/O and real deadlines, not on a CPU, so vitest's default (one worker fewer than the CPUs: a single worker
 * on a 2-core machine) runs them one after another. More workers than CPUs would let a CPU-bound file (the heap
 * and many-origins suites) starve a file that times real deadlines.
 */
const MAX_WORKERS = Math.max(2, availableParallelism());

/**
 * One vitest run, three projects:
 * - `unit`: `*.spec.ts` beside the code; timers under fake timers, no network beyond loopback.
 * - `integ`: `*.integ.spec.ts`; real http/https servers on 127.0.0.1, port 0, real timers.
 * - `aws`: real AWS SDK v3 clients against moto's server (started by globalSetup; see scripts/setup-moto.sh).
 */
export default defineConfig({
  test: {
    // The JSON report lets .ci/run print a plain "N passed, N failed" line (scripts/print-test-summary.mjs).
    reporters: ["default", ["json", { outputFile: ".cache/vitest-report.json" }]],
    maxWorkers: MAX_WORKERS,
    projects: [
      {
        plugins: [poolMonitorSources],
        test: {
          name: "unit",
          environment: "node",
          include: ["packages/*/src/**/*.spec.ts", "scripts/**/*.spec.ts"],
          exclude: ["**/*.integ.spec.ts", "**/node_modules/**", "**/dist/**"],
        },
      },
      {
        plugins: [poolMonitorSources],
        test: {
          name: "integ",
          environment: "node",
          include: ["packages/*/src/**/*.integ.spec.ts", "packages/*/test/**/*.integ.spec.ts"],
          exclude: ["packages/aws-sdk-integ/**", "**/node_modules/**", "**/dist/**"],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        plugins: [poolMonitorSources],
        test: {
          name: "aws",
          environment: "node",
          include: ["packages/aws-sdk-integ/test/**/*.spec.ts"],
          globalSetup: ["packages/aws-sdk-integ/test/moto-global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // After the other projects' files, in a group of their own (as many at a time as the others): moto's CPU
          // then competes with the aws files only, not with the integ files' real deadlines.
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
