import { describe, expect, it } from "vitest";
import { bytesByPackage, packageOf, sumOf } from "./bundle-weight.mjs";

const WORKSPACE = { "pool-monitor": "@sockeye/pool-monitor", "node-http-handler": "@sockeye/node-http-handler" };

describe("packageOf", () => {
  it("names installed packages, scoped or not, by their last node_modules folder", () => {
    expect(packageOf("node_modules/undici/lib/core/util.js", WORKSPACE)).toBe("undici");
    expect(packageOf("node_modules/@smithy/node-http-handler/dist-es/index.js", WORKSPACE)).toBe(
      "@smithy/node-http-handler"
    );
    expect(packageOf("node_modules/@aws-sdk/client-s3/node_modules/@smithy/types/x.js", WORKSPACE)).toBe(
      "@smithy/types"
    );
  });

  it("names workspace packages from their manifest, and leaves the app's own files unnamed", () => {
    expect(packageOf("../../packages/pool-monitor/dist/index.mjs", WORKSPACE)).toBe("@sockeye/pool-monitor");
    expect(packageOf("packages/node-http-handler/dist/index.mjs", WORKSPACE)).toBe("@sockeye/node-http-handler");
    expect(packageOf("packages/other/dist/index.mjs", WORKSPACE)).toBe("packages/other");
    expect(packageOf(".cache/app.mjs", WORKSPACE)).toBeUndefined();
  });
});

describe("bytesByPackage", () => {
  it("sums each package's inputs and counts the app's own bytes apart", () => {
    const metafile = {
      outputs: {
        "out.mjs": {
          bytes: 1000,
          inputs: {
            "app.mjs": { bytesInOutput: 10 },
            "node_modules/undici/a.js": { bytesInOutput: 300 },
            "node_modules/undici/b.js": { bytesInOutput: 200 },
            "packages/pool-monitor/dist/index.mjs": { bytesInOutput: 400 },
          },
        },
      },
    };
    const result = bytesByPackage(metafile, WORKSPACE);
    expect(result).toEqual({ total: 1000, app: 10, packages: { undici: 500, "@sockeye/pool-monitor": 400 } });
    expect(sumOf(result.packages, ["undici", "@sockeye/pool-monitor", "absent"])).toBe(900);
  });

  it("refuses a build with more than one output", () => {
    expect(() => bytesByPackage({ outputs: { a: { bytes: 1, inputs: {} }, b: { bytes: 1, inputs: {} } } }, {})).toThrow(
      "expected one output file, got 2"
    );
  });
});
