import { createRequire } from "node:module";
import * as undici7 from "undici";
import { describe, expect, it } from "vitest";
import { globalDispatcherSlot, isUserSetDispatcher } from "./global-dispatcher";

const require = createRequire(__filename);
const [major, minor] = process.versions.node.split(".").map(Number);
const undici8: typeof undici7 | undefined =
  major > 22 || (major === 22 && minor >= 19) ? require("undici-8") : undefined;

describe("isUserSetDispatcher", () => {
  for (const [label, u] of [
    ["undici 7", undici7],
    ["undici 8", undici8],
  ] as const) {
    it.skipIf(u === undefined)(
      `${label}: the default new Agent() is not the user's; anything configured is`,
      async () => {
        const lib = u as typeof undici7;
        const plain = new lib.Agent();
        const configured = [
          new lib.Agent({ connect: { ca: "x" } }),
          new lib.Agent({ connections: 5 }),
          new lib.Agent().compose((dispatch) => dispatch),
          new lib.ProxyAgent("http://127.0.0.1:1"),
          new lib.EnvHttpProxyAgent({ httpsProxy: "http://127.0.0.1:1" }),
          new lib.MockAgent(),
          new lib.Pool("http://127.0.0.1:1"),
        ];
        expect(isUserSetDispatcher(plain)).toBe(false);
        for (const d of configured) expect(isUserSetDispatcher(d)).toBe(true);
        await Promise.all([plain, ...configured].map((d) => d.close()));
      }
    );
  }

  it("nothing, or something that is not a dispatcher, is not the user's", () => {
    for (const value of [undefined, null, 5, {}, { dispatch() {} }]) expect(isUserSetDispatcher(value)).toBe(false);
  });

  it("the slot holds what setGlobalDispatcher() stored (undici installs a default Agent on load)", () => {
    const g = globalThis as unknown as Record<symbol, unknown>;
    const s1 = Symbol.for("undici.globalDispatcher.1");
    const s2 = Symbol.for("undici.globalDispatcher.2");
    const saved = [g[s1], g[s2]];
    try {
      expect(isUserSetDispatcher(globalDispatcherSlot())).toBe(false);
      const mock = new undici7.MockAgent();
      undici7.setGlobalDispatcher(mock);
      expect(globalDispatcherSlot()).toBe(mock);
      // Only the legacy slot set (older undici, Node's bundled copy): read from there.
      g[s2] = undefined;
      expect(globalDispatcherSlot()).toBe(mock);
    } finally {
      g[s1] = saved[0];
      g[s2] = saved[1];
    }
  });
});
