/**
 * Per-origin state of `NodeHttp2Handler` after requests to many distinct origins (issue 33, item 3): host names
 * `bucket-<n>.s3.test` resolved to one loopback h2c server by a custom `lookup` (`nodeHttp2ConnectOptions`), as S3
 * virtual-hosted buckets. Once the streams are done and `sessionTimeout` closed the idle sessions, an origin costs
 * nothing beyond telemetry's bounded origin table: the pool forgets it (no `Http2Origin`, no member of its telemetry
 * entry, `_OTHER` included), with detection sampling (`"interval"`) and without (`"off"`); a later request to it
 * re-creates it. The retained heap after GC does not grow with the number of origins.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler } from "../../src/index";
import { bucketHost, expectFlatHeapPerOrigin, loopbackLookup, visitBuckets } from "../many-origins";
import { type H2TestServer, startH2Server, waitFor } from "./h2-servers";

let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server({ tls: false });
});
afterAll(async () => {
  await server.close();
});
const handlers: NodeHttp2Handler[] = [];
afterEach(() => {
  for (const h of handlers.splice(0)) h.destroy();
});

function make(socketMonitor: "interval" | "off", maxOrigins?: number): NodeHttp2Handler {
  const handler = new NodeHttp2Handler({
    nodeHttp2ConnectOptions: { lookup: loopbackLookup as never },
    // Long enough that a loaded machine never finds a session silent under a stream (that fails it, as upstream).
    sessionTimeout: 250,
    socketMonitor,
    ...(maxOrigins !== undefined ? { saturation: { maxOrigins } } : {}),
  });
  handlers.push(handler);
  return handler;
}

function bucket(n: number): HttpRequest {
  return new HttpRequest({
    protocol: "http:",
    hostname: bucketHost(n),
    port: server.port,
    method: "GET",
    path: "/status/200",
    headers: {},
  });
}

/** What the handler keeps per origin, read through its internals. */
function perOriginState(handler: NodeHttp2Handler) {
  const h = handler as any;
  let members = 0;
  for (const t of h.pool.monitor.origins.values()) members += t.members.size;
  return {
    origins: h.pool.origins.size as number,
    otherMembers: (h.pool.monitor.origins.get("_OTHER")?.members.size ?? 0) as number,
    /** Over every telemetry entry, `_OTHER` included. */
    members,
  };
}

async function visit(handler: NodeHttp2Handler, from: number, to: number): Promise<void> {
  await visitBuckets((r) => handler.handle(r), bucket, from, to, 16);
  await waitFor(() => server.sessionsOpen === 0, 5_000);
  await waitFor(() => perOriginState(handler).origins === 0, 2_000).catch(() => {});
}

describe.each(["interval", "off"] as const)("NodeHttp2Handler after many origins (socketMonitor %s)", (mode) => {
  it("forgets an origin with no session, no stream and nothing queued, _OTHER included", async () => {
    const handler = make(mode, 4);
    await visit(handler, 0, 60);
    const state = perOriginState(handler);
    expect(state.origins).toBe(0);
    expect(state.otherMembers).toBe(0);
    expect(state.members).toBe(0);
    // Origins seen before are re-created by their next request; their counters stayed in the telemetry entries.
    await visit(handler, 10, 14);
    const stats = handler.getPoolStats();
    const other = stats.origins.find((o) => o.origin === "_OTHER");
    expect(other?.requests.completed).toBe(56 + 4);
    expect(perOriginState(handler).origins).toBe(0);
  });
});

describe("NodeHttp2Handler heap after many origins", () => {
  it("retained heap does not grow with the number of origins (300 vs 1,200)", async () => {
    await expectFlatHeapPerOrigin(
      async (count) => {
        const handler = new NodeHttp2Handler({
          nodeHttp2ConnectOptions: { lookup: loopbackLookup as never },
          // Long enough that a loaded machine never finds a session silent under a stream (that fails it, as upstream).
          sessionTimeout: 250,
          socketMonitor: "off",
        });
        await visit(handler, 0, count);
        // The server records each stream's path: not the handler's.
        server.paths.length = 0;
        return handler;
      },
      (handler) => handler.destroy()
    );
  });
});
