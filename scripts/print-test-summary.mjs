// Prints the last vitest run's totals as one plain line, "N passed, N failed, N skipped", from the JSON report
// that vitest.config.ts writes to .cache/vitest-report.json, labelled with one word (default: node<major>).
// Usage: node scripts/print-test-summary.mjs [label]
import { readFileSync } from "node:fs";

const label = `${process.argv[2] ?? `node${process.versions.node.split(".")[0]}`}: `;
const report = JSON.parse(readFileSync(new URL("../.cache/vitest-report.json", import.meta.url), "utf8"));
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`${label}${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
if (report.numTotalTests === 0) {
  console.error("print-test-summary: no test ran");
  process.exit(1);
}
