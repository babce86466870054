/**
 * Per-origin state of `NodeHttpHandler` after requests to many distinct origins (issue 33, item 3): host names
 * `bucket-<n>.s3.test` resolved to one loopback server by a custom `lookup`, as S3 virtual-hosted buckets. Once the
 * requests are done and the pooled connections closed, an origin costs nothing beyond telemetry's bounded origin
 * table: the gate keeps at most the key of the last endpoint (its one-entry memo), and no origin entry, `_OTHER`
 * included, keeps an agent link per host, with detection sampling (`"interval"`) and without (`"off"`). The retained
 * heap after GC does not grow with the number of origins.
 */
import type http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { NodeHttpHandler } from "../src/index";
import {
  bucketRequest,
  loopbackLookup,
  type OkServer,
  expectFlatHeapPerOrigin,
  startOkServer,
  visitBuckets,
} from "./many-origins";
import { waitFor } from "./servers";

/**
 * The server closes a connection idle this long. The handler's own `idleSocketTimeout` (the same) closes free sockets
 * only while requests are in flight (an idle handler keeps no timer for them), so the last ones would stay open.
 */
const IDLE_MS = 50;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(): Promise<OkServer> {
  const server = await startOkServer(IDLE_MS);
  cleanup.push(() => server.close());
  return server;
}

function make(socketMonitor: "interval" | "off", maxOrigins?: number): NodeHttpHandler {
  const handler = new NodeHttpHandler({
    httpAgent: { keepAlive: true, lookup: loopbackLookup as never },
    idleSocketTimeout: IDLE_MS,
    socketMonitor,
    ...(maxOrigins !== undefined ? { saturation: { maxOrigins } } : {}),
  });
  cleanup.push(() => handler.destroy());
  return handler;
}

/** What the handler keeps per origin, read through its internals. */
function perOriginState(handler: NodeHttpHandler) {
  const agent = (handler.httpHandlerConfigs() as { httpAgent?: http.Agent }).httpAgent as http.Agent;
  const gate = (handler as any).runtime.gateFor(agent);
  const monitor = handler.poolMonitor as any;
  let links = 0;
  for (const o of monitor.origins.values()) links += o.poolLinks.size;
  return {
    gateKeys: gate.keys.size as number,
    /** Agent links over every origin entry, `_OTHER` included. */
    links,
    /** Agent names the monitor has linked to an origin. */
    linkedNames: (monitor.originLinks.agentNames.get(agent)?.size ?? 0) as number,
    otherLinks: (monitor.origins.get("_OTHER")?.poolLinks.size ?? 0) as number,
    agentNames: Object.keys(agent.sockets).length + Object.keys(agent.freeSockets).length,
  };
}

async function visit(handler: NodeHttpHandler, server: OkServer, from: number, to: number): Promise<void> {
  await visitBuckets(
    (r) => handler.handle(r),
    (n) => bucketRequest("http:", n, server.port),
    from,
    to,
    16
  );
  // Every pooled connection closed (the server's idle timeout): nothing is in flight, queued or pooled.
  await waitFor(() => server.openConnections === 0, "every connection closed", 5_000);
  await waitFor(() => perOriginState(handler).agentNames === 0, "the agent's pools emptied", 5_000);
}

describe.each(["interval", "off"] as const)("NodeHttpHandler after many origins (socketMonitor %s)", (mode) => {
  it("keeps no gate key and no agent link per idle origin, _OTHER included", async () => {
    const server = await serve();
    const handler = make(mode, 4);
    await visit(handler, server, 0, 60);
    // Read before any snapshot (a snapshot drops idle links itself).
    const state = perOriginState(handler);
    expect(state.gateKeys).toBeLessThanOrEqual(1);
    expect(state.otherLinks).toBe(0);
    expect(state.links).toBe(0);
    expect(state.linkedNames).toBe(0);
    expect(handler.getPoolStats().origins.map((o) => o.origin)).toContain("_OTHER");
    // A later request to an origin seen before works, and is counted as before.
    await visit(handler, server, 10, 11);
    expect(perOriginState(handler).gateKeys).toBeLessThanOrEqual(1);
  });
});

describe("NodeHttpHandler heap after many origins", () => {
  it("retained heap does not grow with the number of origins (300 vs 1,200)", async () => {
    const server = await serve();
    await expectFlatHeapPerOrigin(
      async (count) => {
        const handler = new NodeHttpHandler({
          httpAgent: { keepAlive: true, lookup: loopbackLookup as never },
          idleSocketTimeout: IDLE_MS,
          socketMonitor: "off",
        });
        await visit(handler, server, 0, count);
        return handler;
      },
      (handler) => handler.destroy()
    );
  });
});
