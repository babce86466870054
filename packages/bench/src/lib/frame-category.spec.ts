import { describe, expect, it } from "vitest";
import { frameCategory, shortLocation } from "./frame-category.mjs";

const at = (url: string, functionName = "f") => frameCategory({ url, functionName });

describe("frameCategory", () => {
  it("tells Sockeye's undici handler (a workspace package, resolved to packages/) from undici and Smithy's", () => {
    expect(at("file:///home/dev/sockeye/packages/undici-http-handler/dist/index.mjs")).toBe(
      "Sockeye (@sockeye/undici-http-handler)"
    );
    expect(at("file:///home/dev/sockeye/node_modules/@smithy/undici-http-handler/dist-cjs/index.js")).toBe(
      "Smithy (@smithy/*)"
    );
    expect(at("file:///home/dev/sockeye/node_modules/undici/lib/dispatcher/client-h1.js")).toBe("undici");
  });

  it("names the node:http handler, the monitor, node's own code and the profiler's pseudo-frames", () => {
    expect(at("file:///home/dev/sockeye/packages/node-http-handler/dist/index.mjs")).toBe(
      "Sockeye (@sockeye/node-http-handler)"
    );
    expect(at("file:///home/dev/sockeye/packages/pool-monitor/dist/index.mjs")).toBe("Sockeye (@sockeye/pool-monitor)");
    expect(at("node:_http_client")).toBe("node http client (_http_*)");
    expect(at("node:internal/streams/readable")).toBe("net, streams, events");
    expect(at("", "(garbage collector)")).toBe("GC");
    expect(at("")).toBe("native / builtins (no URL)");
  });
});

describe("shortLocation", () => {
  it("drops the path up to node_modules or packages/ and gives a 1-based line", () => {
    expect(shortLocation({ url: "file:///x/node_modules/@smithy/a/index.js", lineNumber: 0 })).toBe(
      "@smithy/a/index.js:1"
    );
    expect(shortLocation({ url: "file:///home/dev/sockeye/packages/bench/src/x.mjs", lineNumber: 41 })).toBe(
      "packages/bench/src/x.mjs:42"
    );
  });
});
