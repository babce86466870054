/**
 * The bundle-weight guard, held by a test: each Sockeye handler's minified esbuild bundle (its own packages inside,
 * every other package an import) weighs at most `LIMIT_RATIO` times upstream's, built from the packages' dist as
 * users get them. The same bundles and bytes as `npm run bench:bundle` (lib/handler-apps.mjs), whose report is
 * docs/perf/bundle.md; bytes are exact, so this is no timed test. A change that pushes a handler over the limit
 * fails here, naming the handler and its bytes.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bundleHandler, HANDLERS, LIMIT_RATIO } from "../src/lib/handler-apps.mjs";

const REPO = fileURLToPath(new URL("../../..", import.meta.url));

async function weigh(id: string): Promise<number> {
  const handler = HANDLERS.find((h) => h.id === id);
  if (handler === undefined) throw new Error(`no handler app ${id}`);
  return Buffer.byteLength(await bundleHandler(REPO, handler));
}

/** Upstream's bytes, bundled once for all three checks. */
let upstreamBytes: Promise<number> | undefined;

describe(`bundle weight: each Sockeye handler ≤ ${LIMIT_RATIO}× upstream's bytes`, () => {
  it.each(["sockeye-node", "sockeye-http2", "sockeye-undici"])("%s", { timeout: 60_000 }, async (id) => {
    upstreamBytes ??= weigh("upstream");
    const upstream = await upstreamBytes;
    expect(upstream).toBeGreaterThan(5_000); // the measurement found upstream's handler at all
    const bytes = await weigh(id);
    expect(bytes, `${id}: ${bytes} B, ${(bytes / upstream).toFixed(3)}× upstream's ${upstream} B`).toBeLessThanOrEqual(
      LIMIT_RATIO * upstream
    );
  });
});
