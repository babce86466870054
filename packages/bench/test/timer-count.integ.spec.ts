/**
 * Counts native `Timeout` resources created on the CLIENT side per request.
 *
 * How: an async_hooks `init` hook counts resources of type "Timeout" (every setTimeout / setInterval /
 * socket.setTimeout object) while 10,000 GET requests run at concurrency 1,000 through a handler with
 * connectionTimeout, requestTimeout and socketTimeout all set. The keep-alive server runs in a child process
 * (packages/bench/src/lib/load-server.mjs, via fork) so that none of its timers are counted.
 *
 * Sockeye must stay under 0.01 native timers per request (its shared scheduler carries every deadline);
 * upstream @smithy/node-http-handler 4.14.2 creates about 5 per request, which proves the counter works.
 * This is a count, not a timing: it is deterministic on any machine.
 */
import { createHook } from "node:async_hooks";
import http from "node:http";
import type { Readable } from "node:stream";
import { NodeHttpHandler as UpstreamNodeHttpHandler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoadServer } from "../src/lib/server-control.mjs";

const TOTAL_REQUESTS = 10_000;
const CONCURRENCY = 1_000;
const TIMEOUTS = { connectionTimeout: 5_000, requestTimeout: 10_000, socketTimeout: 10_000 };

interface Handler {
  handle(request: HttpRequest): Promise<{ response: { statusCode: number; body: unknown } }>;
  destroy(): void;
}

const noop = () => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop };

function drain(body: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    body.on("data", noop);
    body.once("end", resolve);
    body.once("error", reject);
  });
}

/** Runs `total` requests with `concurrency` in flight; returns native Timeouts created and responses seen. */
async function countTimeouts(handler: Handler, port: number, total: number, concurrency: number) {
  let issued = 0;
  let ok = 0;
  const get = () =>
    new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path: "/128", headers: {} });
  const worker = async () => {
    while (issued < total) {
      issued++;
      const { response } = await handler.handle(get());
      await drain(response.body as Readable);
      if (response.statusCode === 200) ok++;
    }
  };
  // Warm up (sockets connected, lazy state created) outside the counted window.
  for (let i = 0; i < 50; i++) {
    const { response } = await handler.handle(get());
    await drain(response.body as Readable);
  }

  let created = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === "Timeout") created++;
    },
  });
  hook.enable();
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    hook.disable();
  }
  return { created, ok, perRequest: created / total };
}

describe("native Timeouts per request (async_hooks count, server in a child process)", () => {
  let server: Awaited<ReturnType<typeof startLoadServer>>;

  beforeAll(async () => {
    server = await startLoadServer();
  });

  afterAll(async () => {
    await server?.close();
  });

  it("counts about 5 per request for upstream 4.14.2 with all three timeouts (the counter works)", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    const handler = new UpstreamNodeHttpHandler({ httpAgent: agent, logger: quietLogger, ...TIMEOUTS });
    try {
      const r = await countTimeouts(handler as unknown as Handler, server.port, TOTAL_REQUESTS, CONCURRENCY);
      console.info(`upstream 4.14.2: ${r.created} Timeouts for ${TOTAL_REQUESTS} requests = ${r.perRequest}/request`);
      expect(r.ok).toBe(TOTAL_REQUESTS);
      expect(r.perRequest).toBeGreaterThan(1);
    } finally {
      handler.destroy();
      agent.destroy();
    }
  });

  it("creates fewer than 0.01 per request for Sockeye (socketMonitor interval) with all three timeouts", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    const handler = new NodeHttpHandler({
      httpAgent: agent,
      logger: quietLogger,
      socketMonitor: "interval",
      ...TIMEOUTS,
    });
    try {
      const r = await countTimeouts(handler as unknown as Handler, server.port, TOTAL_REQUESTS, CONCURRENCY);
      console.info(`sockeye interval: ${r.created} Timeouts for ${TOTAL_REQUESTS} requests = ${r.perRequest}/request`);
      expect(r.ok).toBe(TOTAL_REQUESTS);
      expect(r.perRequest).toBeLessThan(0.01);
    } finally {
      handler.destroy();
      agent.destroy();
    }
  });
});
