/**
 * `request:finished` from a standalone `PoolMonitor` tracking real Node requests (`trackRequest`, the monitor's own
 * listeners) against a loopback server: one event per request on the `sockeye:request:finished` channel and to
 * `subscribe()` listeners, with the status, error class, sizes and time in queue; none built when nobody listens.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, test as it, vi } from "vitest";
import { closedPort } from "../../node-http-handler/test/servers.js";
import { CHANNEL_NAMES } from "./diagnostics";
import { PoolMonitor } from "./pool-monitor";
import type { PoolEvent, RequestFinishedEvent } from "./pool-stats";
import { timing } from "./timing";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith("/hold")) {
      held.push(res);
      return;
    }
    const status = req.url?.startsWith("/missing") ? 404 : 200;
    res.writeHead(status, { "content-length": 3 }).end("abc");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const monitor = new PoolMonitor();
  cleanups.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
    () => server.closeAllConnections(),
    () => agent.destroy(),
    () => monitor.destroy(),
    () => {
      for (const res of held.splice(0)) res.destroy();
    }
  );
  /** Sends a tracked request; resolves when it closed (its body read), with the request. */
  const send = (path: string, method = "GET", body?: string, port_ = port) => {
    const req = http.request({ host: "127.0.0.1", port: port_, path, method, agent });
    if (body !== undefined) req.setHeader("content-length", Buffer.byteLength(body));
    monitor.trackRequest(req, agent, port_ === port ? origin : `http://127.0.0.1:${port_}`, timing.now());
    req.on("response", (res) => res.resume());
    req.on("error", () => {});
    const closed = new Promise<void>((resolve) => req.on("close", () => setImmediate(resolve)));
    req.end(body);
    return { req, closed };
  };
  return { port, origin, monitor, send, held };
}

it("publishes one bounded request:finished per request on the channel and to subscribe() listeners", async () => {
  const { port, origin, monitor, send, held } = await setup();
  const published: unknown[] = [];
  const onMessage = (m: unknown) => published.push(m);
  diagnosticsChannel.subscribe(CHANNEL_NAMES.requestFinished, onMessage);
  cleanups.push(() => diagnosticsChannel.unsubscribe(CHANNEL_NAMES.requestFinished, onMessage));
  const events: PoolEvent[] = [];
  cleanups.push(monitor.subscribe((e) => events.push(e)));

  await send("/ok?token=secret", "POST", "hello").closed;
  await send("/missing/secret").closed;
  // A request queued behind a held one (maxSockets 1), aborted while queued: its whole wait is its time in queue.
  const holder = send("/hold");
  await new Promise((resolve) => setTimeout(resolve, 20));
  const queued = send("/ok", "PURGE");
  await new Promise((resolve) => setTimeout(resolve, 30));
  monitor.noteOutcome(queued.req, "aborted");
  queued.req.destroy();
  // Node closes a destroyed queued request only once the agent hands it a socket: free the held one.
  held[0].end("x");
  await holder.closed;
  await queued.closed;
  // Nothing listens on this port: a refused connection.
  const deadPort = await closedPort();
  await send("/ok", "GET", undefined, deadPort).closed;

  const finished = events.filter((e): e is RequestFinishedEvent => e.type === "request:finished");
  expect(published).toEqual(finished);
  expect(finished.map(({ durationMs, queuedMs, ...rest }) => rest)).toEqual([
    {
      type: "request:finished",
      origin,
      scheme: "http",
      method: "POST",
      statusCode: 200,
      outcome: "completed",
      errorType: null,
      protocolVersion: "1.1",
      requestBodySize: 5,
      responseBodySize: 3,
    },
    expect.objectContaining({ method: "GET", statusCode: 404, outcome: "completed", errorType: "404" }),
    expect.objectContaining({ method: "GET", statusCode: 200, outcome: "completed", errorType: null }),
    expect.objectContaining({
      method: "_OTHER",
      statusCode: null,
      outcome: "aborted",
      errorType: "AbortError", // not Node's "socket hang up" that followed the caller's destroy
      responseBodySize: null,
    }),
    expect.objectContaining({
      origin: `http://127.0.0.1:${deadPort}`,
      statusCode: null,
      outcome: "failed",
      errorType: "ECONNREFUSED",
    }),
  ]);
  expect(finished.map((e) => e.queuedMs === null)).toEqual([true, true, true, false, true]);
  expect(finished[3].queuedMs).toBeGreaterThanOrEqual(25);
  expect(finished[3].durationMs).toBe(finished[3].queuedMs);
  for (const e of finished) expect(e.durationMs).toBeGreaterThan(0);
  expect(JSON.stringify(finished)).not.toMatch(/secret|token|missing/);
  expect(port).toBeGreaterThan(0);
});

it("builds nothing when nobody listens (the request's Content-Length is not even read)", async () => {
  const { monitor, send } = await setup();
  const spy = vi.spyOn(http.ClientRequest.prototype, "getHeader");
  cleanups.push(() => spy.mockRestore());
  await send("/ok", "POST", "hi").closed;
  expect(spy).not.toHaveBeenCalledWith("content-length");
  const events: PoolEvent[] = [];
  cleanups.push(monitor.subscribe((e) => events.push(e)));
  await send("/ok", "POST", "hi").closed;
  expect(spy).toHaveBeenCalledWith("content-length");
  expect(events.filter((e) => e.type === "request:finished")).toHaveLength(1);
});
