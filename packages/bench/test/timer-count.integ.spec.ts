/**
 * Counts native `Timeout` resources created on the CLIENT side per request: an async_hooks counter
 * (src/lib/timer-counter.mjs) while 10,000 GET requests run at concurrency 1,000 through a handler with
 * connectionTimeout, requestTimeout and socketTimeout all set, against the keep-alive load server in a child process
 * (src/lib/load-server.mjs), so none of the server's timers are counted.
 *
 * Sockeye must stay under 0.01 native timers per request (its shared scheduler carries every deadline); upstream
 * @smithy/node-http-handler 4.14.2 creates about 5 per request, which proves the counter works. This is a count, not
 * a timing: it is deterministic on any machine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClients } from "../src/lib/clients.mjs";
import { startLoadServer } from "../src/lib/server-control.mjs";
import { TimerCounter } from "../src/lib/timer-counter.mjs";

const TOTAL_REQUESTS = 10_000;
const CONCURRENCY = 1_000;

/** Runs `total` requests with `concurrency` in flight through `name` (timeouts on); native Timeouts per request. */
async function timeoutsPerRequest(server: Awaited<ReturnType<typeof startLoadServer>>, name: string) {
  const { clients } = await createClients(server, { timeouts: true, only: [name] });
  const client = clients[0];
  if (!client) throw new Error(`client ${name} is unavailable (is the package built?)`);
  let issued = 0;
  let ok = 0;
  const worker = async () => {
    while (issued < TOTAL_REQUESTS) {
      issued++;
      await client.request("/128");
      ok++;
    }
  };
  try {
    // Warm up (sockets connected, lazy state created) outside the counted window.
    for (let i = 0; i < 50; i++) await client.request("/128");
    const counter = new TimerCounter().enable();
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      counter.disable();
    }
    console.info(`${name}: ${counter.created} Timeouts for ${TOTAL_REQUESTS} requests`);
    return { ok, perRequest: counter.created / TOTAL_REQUESTS };
  } finally {
    await client.close();
  }
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
    const r = await timeoutsPerRequest(server, "upstream");
    expect(r.ok).toBe(TOTAL_REQUESTS);
    expect(r.perRequest).toBeGreaterThan(1);
  });

  it("creates fewer than 0.01 per request for Sockeye (socketMonitor interval) with all three timeouts", async () => {
    const r = await timeoutsPerRequest(server, "sockeye-interval");
    expect(r.ok).toBe(TOTAL_REQUESTS);
    expect(r.perRequest).toBeLessThan(0.01);
  });
});
