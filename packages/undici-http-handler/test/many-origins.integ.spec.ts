/**
 * Per-origin state of `UndiciHttpHandler` after requests to many distinct origins (issue 33, item 3): host names
 * `bucket-<n>.s3.test` resolved to one loopback server by a custom `lookup` (the agent option, mapped to undici's
 * `connect`), as S3 virtual-hosted buckets. Once the requests are done and undici closed the idle connections (and
 * with them each origin's `Pool`), an origin costs nothing beyond telemetry's bounded origin table: the handler keeps
 * at most the gate of the last origin (its one-entry cache), and the `_OTHER` entry neither a pool nor a gate queue
 * per host, with detection sampling (`"interval"`) and without (`"off"`), no snapshot read in between. `destroy()`
 * releases every pool and gate at once. The retained heap after GC does not grow with the number of origins.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  bucketRequest,
  loopbackLookup,
  type OkServer,
  expectFlatHeapPerOrigin,
  startOkServer,
  visitBuckets,
} from "../../node-http-handler/test/many-origins";
import { waitFor } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "../src/index";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(): Promise<OkServer> {
  // The server never closes an idle connection: the handler's idleSocketTimeout does.
  const server = await startOkServer(0);
  cleanup.push(() => server.close());
  return server;
}

function make(socketMonitor: "interval" | "off", idleSocketTimeout: number, maxOrigins?: number): UndiciHttpHandler {
  const handler = new UndiciHttpHandler({
    httpAgent: { lookup: loopbackLookup as never },
    idleSocketTimeout,
    socketMonitor,
    ...(maxOrigins !== undefined ? { saturation: { maxOrigins } } : {}),
  });
  cleanup.push(() => handler.destroy());
  return handler;
}

/** What the handler keeps per origin, read through its internals. */
function perOriginState(handler: UndiciHttpHandler) {
  const h = handler as any;
  const other = h.telemetryMonitor.origins.get("_OTHER");
  let pools = 0;
  let gateQueues = 0;
  for (const o of h.telemetryMonitor.origins.values()) {
    pools += o.pools?.size ?? 0;
    gateQueues += o.gateQueues.size;
  }
  return {
    gates: h.gates.byOrigin.size as number,
    connecting: h.pendingConnects.byOrigin.size as number,
    otherPools: (other?.pools?.size ?? 0) as number,
    otherGateQueues: (other?.gateQueues.size ?? 0) as number,
    /** Over every origin entry, `_OTHER` included. */
    pools,
    gateQueues,
  };
}

function visit(handler: UndiciHttpHandler, server: OkServer, from: number, to: number): Promise<void> {
  return visitBuckets(
    (r) => handler.handle(r),
    (n) => bucketRequest("http:", n, server.port),
    from,
    to,
    16
  );
}

describe.each(["interval", "off"] as const)("UndiciHttpHandler after many origins (socketMonitor %s)", (mode) => {
  it("keeps no gate, pool or gate queue per idle origin, _OTHER included", async () => {
    const server = await serve();
    const handler = make(mode, 50, 4);
    await visit(handler, server, 0, 60);
    await waitFor(() => server.openConnections === 0, "every connection closed", 5_000);
    // undici closes an origin's Pool once its last connection is gone: polled, no snapshot read in between.
    await waitFor(() => perOriginState(handler).pools === 0, "every pool released", 5_000).catch(() => {});
    const state = perOriginState(handler);
    expect(state.gates).toBeLessThanOrEqual(1);
    expect(state.connecting).toBe(0);
    expect(state.otherPools).toBe(0);
    expect(state.pools).toBe(0);
    expect(state.otherGateQueues).toBeLessThanOrEqual(1);
    expect(state.gateQueues).toBeLessThanOrEqual(1);
    // Origins seen before work again (a new pool, a new gate).
    await visit(handler, server, 10, 14);
    expect(handler.getPoolStats().origins.map((o) => o.origin)).toContain("_OTHER");
  });

  it("destroy() releases every pool and gate of _OTHER at once (no snapshot read in between)", async () => {
    const server = await serve();
    const handler = make(mode, 60_000, 4);
    await visit(handler, server, 0, 40);
    // Pooled connections stay open (long idle timeout); more requests are in flight when destroy() comes.
    const inFlight = Array.from({ length: 10 }, (_, i) =>
      handler.handle(bucketRequest("http:", 100 + i, server.port)).then(
        () => "ok",
        (error: Error) => error.name
      )
    );
    expect(perOriginState(handler).otherPools).toBeGreaterThan(0);
    handler.destroy();
    const state = perOriginState(handler);
    expect(state.otherPools).toBe(0);
    expect(state.otherGateQueues).toBe(0);
    expect(state.pools).toBe(0);
    expect(state.gates).toBe(0);
    expect(await Promise.all(inFlight)).toEqual(Array(10).fill("HandlerDestroyedError"));
    await waitFor(() => server.openConnections === 0, "every connection closed", 5_000);
  });
});

describe("UndiciHttpHandler heap after many origins", () => {
  it("retained heap does not grow with the number of origins (300 vs 1,200)", async () => {
    const server = await serve();
    await expectFlatHeapPerOrigin(
      async (count) => {
        const handler = new UndiciHttpHandler({
          httpAgent: { lookup: loopbackLookup as never },
          idleSocketTimeout: 50,
          socketMonitor: "off",
        });
        await visit(handler, server, 0, count);
        await waitFor(() => server.openConnections === 0, "every connection closed", 5_000);
        await waitFor(() => perOriginState(handler).pools === 0, "every pool released", 2_000).catch(() => {});
        return handler;
      },
      (handler) => handler.destroy()
    );
  });
});
