/**
 * The types users reach for come from the handler package they installed, under every TypeScript resolution mode a
 * consumer may use: `PoolStats`, `SaturationReport`, `SaturationOptions`, … and the error guards
 * (`isSockeyeTimeoutError`, …, values) from `@sockeye/node-http-handler` and from `@sockeye/undici-http-handler`, not
 * only from the transitive `@sockeye/pool-monitor`.
 *
 * Type-checks a consumer file against the BUILT declarations (dist), resolved by name from the repository root.
 */
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = join(__dirname, "..", "..", "..");
const TSC = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
const APP = join(REPO_ROOT, ".cache", "public-types-app");

/** The types each handler package re-exports from the core. */
const TYPES = [
  "CloseReason",
  "GetStatsOptions",
  "OriginStats",
  "PoolEvent",
  "PoolStats",
  "SaturationCause",
  "SaturationOptions",
  "SaturationReport",
  "SaturationTrigger",
];

function consumer(pkg: string): string {
  return [
    `import type { ${TYPES.join(", ")} } from "${pkg}";`,
    `export const stats = (s: PoolStats): number => s.totals.queued;`,
    `export const onSaturation = (r: SaturationReport): string => r.origin;`,
    `export const tuned: SaturationOptions = { windowSamples: 5 };`,
    // The error guards are values re-exported from the core, and narrow to the typed errors.
    `import { isHandlerDestroyedError, isSockeyeAbortError, isSockeyeTimeoutError, type TimeoutDeadline } from "${pkg}";`,
    `export const deadlineOf = (e: unknown): TimeoutDeadline | undefined => (isSockeyeTimeoutError(e) ? e.deadline : undefined);`,
    `export const causeOf = (e: unknown): unknown => (isSockeyeAbortError(e) ? e.cause : undefined);`,
    `export const destroyed = (e: unknown): boolean => isHandlerDestroyedError(e);`,
    `export type Used = [${TYPES.join(", ")}];`,
    // A type-only name must not be usable as a value (it is not one at run time).
    `// @ts-expect-error PoolStats is a type, not a value`,
    `export const notAValue = (await import("${pkg}")).PoolStats;`,
  ].join("\n");
}

const MODES = [
  { name: "node16 (ESM)", module: "node16", moduleResolution: "node16", ext: "mts" },
  { name: "node16 (CJS)", module: "node16", moduleResolution: "node16", ext: "cts" },
  { name: "bundler", module: "esnext", moduleResolution: "bundler", ext: "ts" },
] as const;

describe("handler packages export the telemetry types", () => {
  afterAll(() => rmSync(APP, { recursive: true, force: true }));

  it.each(MODES)("type-checks a consumer under $name resolution", async (mode) => {
    const dir = join(APP, mode.name.replace(/\W+/g, "-"));
    mkdirSync(dir, { recursive: true });
    const files: string[] = [];
    for (const pkg of ["@sockeye/node-http-handler", "@sockeye/undici-http-handler"]) {
      const file = `${pkg.split("/")[1]}.${mode.ext}`;
      // Top-level await needs an ES module; in the CJS mode the value check sits in an async function instead.
      const body =
        mode.ext === "cts"
          ? consumer(pkg).replace(
              /^export const notAValue = .*$/m,
              `export const notAValue = async () => (await import("${pkg}")).PoolStats;`
            )
          : consumer(pkg);
      writeFileSync(join(dir, file), body);
      files.push(file);
    }
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: mode.module,
          moduleResolution: mode.moduleResolution,
          target: "es2022",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
          typeRoots: [join(REPO_ROOT, "node_modules", "@types")],
        },
        files,
      })
    );
    const result = await promisify(execFile)(process.execPath, [TSC, "-p", dir], { cwd: dir, timeout: 60_000 }).then(
      () => ({ code: 0, stdout: "" }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout })
    );
    expect(result.stdout).toBe("");
    expect(result.code).toBe(0);
  });
});
