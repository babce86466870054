/**
 * `scripts/options-tables.mjs`: the READMEs' options tables are exactly what the options types' TSDoc generates
 * (this fails when a README or an options type changes without `npm run docs:options`), and the generator reads
 * TSDoc, `@defaultValue`, inherited members, the interface's own list and nested option types correctly.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { endMarker, readOptionRows, startMarker, TABLES, updateTables } from "./options-tables.mjs";

/**
 * Each test builds a TypeScript program (~4 s on a 2-core box, longer while other suites run in parallel): vitest's
 * 5 s default made them time out under load. A bound, not a performance assertion.
 */
const PROGRAM_TIMEOUT_MS = 60_000;

/** The README that carries the `NodeHttpHandlerOptions` table (the root README links to it). */
const PACKAGE_README = "packages/node-http-handler/README.md";

describe("the repository's READMEs", { timeout: PROGRAM_TIMEOUT_MS }, () => {
  it("have up-to-date options tables (run `npm run docs:options` if this fails)", () => {
    expect(updateTables({ write: false })).toEqual([]);
  });

  it("list every NodeHttpHandlerOptions option, idleSocketTimeout and connectionLifetime included", () => {
    const spec = TABLES.find((t) => t.file === PACKAGE_README && t.type === "NodeHttpHandlerOptions")!;
    const rows = readOptionRows([spec]).get(`${spec.source}#${spec.type}`)!;
    const names = rows.map((r) => r.name);
    for (const name of [
      "connectionTimeout",
      "requestTimeout",
      "throwOnRequestTimeout",
      "socketTimeout",
      "socketAcquisitionWarningTimeout",
      "httpAgent",
      "httpsAgent",
      "logger",
      "socketMonitor",
      "socketAcquisitionTimeout",
      "idleSocketTimeout",
      "connectionLifetime",
      "onSaturation",
      "onRecovery",
      "saturation.sampleIntervalMs",
      "saturation.windowSamples",
      "saturation.warningLockoutMs",
      "saturation.unconsumedBodyMs",
      "saturation.maxOrigins",
      "telemetry",
    ]) {
      expect(names).toContain(name);
    }
    expect(rows.find((r) => r.name === "idleSocketTimeout")?.defaultValue).toBe("4000");
    const readme = readFileSync(join(__dirname, "..", PACKAGE_README), "utf8");
    for (const name of names) expect(readme).toContain(`| \`${name}\` |`);
  });
});

describe("the generator", { timeout: PROGRAM_TIMEOUT_MS }, () => {
  const root = mkdtempSync(join(tmpdir(), "options-tables-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "src"));
  writeFileSync(
    join(root, "src", "options.ts"),
    `interface Base {
  /** Inherited doc. */
  inheritedPlain?: number;
  /** Upstream wording, replaced by the list entry. */
  inheritedListed?: number;
}
/** Nested options. */
export interface Nested {
  /**
   * A nested field.
   * @defaultValue 7
   */
  depth?: number;
}
/**
 * Fixture options.
 * - \`inheritedListed\`: our wording of an inherited option. Default 42.
 */
export interface FixtureOptions extends Base {
  /**
   * Mode: \`"a" | "b"\`, see {@link Nested}.
   * @defaultValue \`"a"\`
   */
  mode?: "a" | "b";
  /** Undocumented default. */
  plain?: string;
  nested?: Nested;
}
`
  );
  const spec = { file: "README.md", source: "src/options.ts", type: "FixtureOptions", expand: ["nested"] };
  const readme = `# x\n\n${startMarker("FixtureOptions")}\nstale\n${endMarker("FixtureOptions")}\n\nafter\n`;

  it("renders inherited rows first, list entries over inherited TSDoc, defaults, escaped pipes and nested rows", () => {
    writeFileSync(join(root, "README.md"), readme);
    expect(updateTables({ write: true, tables: [spec], root })).toEqual(["README.md"]);
    const out = readFileSync(join(root, "README.md"), "utf8");
    expect(out).toContain("after\n");
    const rows = out.split("\n").filter((l) => l.startsWith("| `"));
    expect(rows).toEqual([
      "| `inheritedPlain` | `number` | — | Inherited doc. |",
      "| `inheritedListed` | `number` | 42 | our wording of an inherited option. Default 42. |",
      '| `mode` | `"a" \\| "b"` | `"a"` | Mode: `"a" \\| "b"`, see `Nested`. |',
      "| `plain` | `string` | — | Undocumented default. |",
      "| `nested` | `Nested` | — | — |",
      "| `nested.depth` | `number` | 7 | A nested field. |",
    ]);
    expect(updateTables({ write: false, tables: [spec], root })).toEqual([]);
  });

  it("reports a hand-edited table as stale, and a file without markers by name", () => {
    writeFileSync(join(root, "README.md"), readme);
    updateTables({ write: true, tables: [spec], root });
    const edited = readFileSync(join(root, "README.md"), "utf8").replace("Undocumented default.", "Edited by hand.");
    writeFileSync(join(root, "README.md"), edited);
    expect(updateTables({ write: false, tables: [spec], root })).toEqual(["README.md"]);
    writeFileSync(join(root, "README.md"), "# no markers\n");
    expect(() => updateTables({ write: false, tables: [spec], root })).toThrow(
      /README\.md has no "<!-- options-table:start FixtureOptions -->"/
    );
  });
});
