/**
 * Prometheus's own text-format parser as a test helper: `scripts/prom-check`, a Go program around
 * `github.com/prometheus/common/expfmt`'s `TextParser`, built by `bash scripts/setup-prom-check.sh` (which `npm test`
 * and CI run first) into `.cache/prom-check/prom-check`, or `PROM_CHECK_BIN`.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const REPO_ROOT = join(__dirname, "..", "..", "..");

/** The checker binary. */
export const PROM_CHECK_BIN = process.env.PROM_CHECK_BIN ?? join(REPO_ROOT, ".cache", "prom-check", "prom-check");

/** One family of a valid page, as the checker summarizes it. */
export interface PromFamily {
  /** `COUNTER`, `GAUGE`, `HISTOGRAM`, … */
  type: string;
  help: string;
  /** One per label set: the value (counter, gauge) or the sample count (histogram). */
  series: Array<{ labels: Record<string, string>; value?: number; count?: number }>;
}

/** What the parser made of a page: its families by name, or its error (one line). */
export type PromCheckResult = { ok: true; families: Record<string, PromFamily> } | { ok: false; error: string };

/** Parses `page` with Prometheus's text parser (strict metric names, no series twice). */
export function promCheck(page: string): Promise<PromCheckResult> {
  if (!existsSync(PROM_CHECK_BIN)) {
    return Promise.reject(
      new Error(`${PROM_CHECK_BIN} is missing. Build it with: bash scripts/setup-prom-check.sh (needs Go >= 1.26)`)
    );
  }
  return new Promise((resolve, reject) => {
    const child = spawn(PROM_CHECK_BIN, [], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve({ ok: true, families: JSON.parse(stdout) });
      else if (code === 1) resolve({ ok: false, error: stderr.trim() });
      else reject(new Error(`prom-check exited with ${code}: ${stderr}`));
    });
    child.stdin.end(page);
  });
}
