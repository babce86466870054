/**
 * idleSocketTimeout / connectionLifetime under fake timers against a real loopback server: the server counts TCP
 * connections, so "the socket was (not) reused" is observed from the outside.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { join } from "node:path";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test as it, vi } from "vitest";
import { FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import { NodeHttpHandler } from "./node-http-handler";

const FIXTURES = join(__dirname, "..", "test", "fixtures");
const CA = readFileSync(join(FIXTURES, "localhost-cert.pem"));
const KEY = readFileSync(join(FIXTURES, "localhost-key.pem"));

let server: http.Server;
let port: number;
let connections = 0;
const serverSockets = new Set<Socket>();
const held: http.ServerResponse[] = [];
let heldWaiter: (() => void) | undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    if (req.url === "/hold") {
      held.push(res);
      heldWaiter?.();
    } else res.end("ok");
  });
  server.keepAliveTimeout = 60_000;
  server.on("connection", (s: Socket) => {
    connections++;
    serverSockets.add(s);
    s.on("close", () => serverSockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function get(path = "/"): HttpRequest {
  return new HttpRequest({ protocol: "http:", hostname: "127.0.0.1", port, method: "GET", path, headers: {} });
}
async function roundTrip(h: NodeHttpHandler, path = "/"): Promise<void> {
  const { response } = await h.handle(get(path));
  response.body.resume();
  await new Promise((resolve) => response.body.once("end", resolve));
}
function freeSocketCount(h: NodeHttpHandler): number {
  const agent = (h.httpHandlerConfigs() as { httpAgent?: http.Agent }).httpAgent;
  return Object.values(agent?.freeSockets ?? {}).reduce((n, list) => n + (list?.length ?? 0), 0);
}

describe("socket lifecycle limits (fake timers)", () => {
  let handler: NodeHttpHandler | undefined;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    connections = 0;
  });
  afterEach(() => {
    for (const res of held.splice(0)) res.end("ok");
    handler?.destroy();
    handler = undefined;
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("reuses a keep-alive socket idle for less than idleSocketTimeout", async () => {
    handler = new NodeHttpHandler({ idleSocketTimeout: 4000 });
    await roundTrip(handler);
    vi.advanceTimersByTime(3000);
    await roundTrip(handler);
    expect(connections).toBe(1);
  });

  it("closes a socket idle for idleSocketTimeout before the next request can pick it (default 4000 ms)", async () => {
    handler = new NodeHttpHandler();
    await roundTrip(handler);
    expect(freeSocketCount(handler)).toBe(1);
    const agent = (handler.httpHandlerConfigs() as { httpAgent: http.Agent }).httpAgent;
    const [stale] = Object.values(agent.freeSockets).flatMap((list) => list ?? []);
    const staleClosed = new Promise((resolve) => stale.once("close", resolve));
    // Idle handler: no timer is kept for the free socket (the sample tick lapses at 1 s and is not re-armed).
    vi.advanceTimersByTime(1000);
    expect((handler as any).runtime.hostScheduler.ticking).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(3000);
    expect(stale.destroyed).toBe(false);
    // The next dispatch sweeps it first: the request opens a new connection.
    await roundTrip(handler);
    expect(connections).toBe(2);
    await staleClosed;
    expect(handler.getPoolStats().origins[0].sockets.closed.idle_timeout).toBe(1);
  });

  it("applies the default idleSocketTimeout to the handler's own https agent too (every AWS request)", async () => {
    const tls = https.createServer({ key: KEY, cert: CA }, (req, res) => {
      req.resume();
      res.end("ok");
    });
    tls.keepAliveTimeout = 60_000;
    let tlsConnections = 0;
    tls.on("connection", () => tlsConnections++);
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    const tlsPort = (tls.address() as AddressInfo).port;
    try {
      // Agent options (not an instance): the agent is the handler's own, so the default limit applies.
      handler = new NodeHttpHandler({ httpsAgent: { ca: CA } });
      const request = () =>
        new HttpRequest({ protocol: "https:", hostname: "127.0.0.1", port: tlsPort, method: "GET", path: "/" });
      const once = async () => {
        const { response } = await handler!.handle(request());
        response.body.resume();
        await new Promise((resolve) => response.body.once("end", resolve));
      };
      await once();
      const agent = (handler.httpHandlerConfigs() as { httpsAgent: https.Agent }).httpsAgent;
      const [stale] = Object.values(agent.freeSockets).flatMap((list) => list ?? []);
      expect(stale).toBeDefined();
      const staleClosed = new Promise((resolve) => stale.once("close", resolve));
      vi.advanceTimersByTime(4000);
      await once();
      expect(tlsConnections).toBe(2);
      await staleClosed;
      expect(handler.getPoolStats().origins[0].sockets.closed.idle_timeout).toBe(1);
    } finally {
      tls.closeAllConnections();
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it("leaves a caller-owned agent's pool alone by default, and manages it when a limit is set explicitly", async () => {
    const external = new http.Agent({ keepAlive: true });
    handler = new NodeHttpHandler({ httpAgent: external });
    await roundTrip(handler);
    vi.advanceTimersByTime(10_000);
    await roundTrip(handler);
    expect(connections).toBe(1);
    handler.destroy();
    const external2 = new http.Agent({ keepAlive: true });
    handler = new NodeHttpHandler({ httpAgent: external2, idleSocketTimeout: 2000 });
    await roundTrip(handler);
    vi.advanceTimersByTime(2000);
    await roundTrip(handler);
    expect(connections).toBe(3);
  });

  it("a caller-owned agent left alone costs its requests no sweep: nothing is armed for its freed sockets", async () => {
    const external = new http.Agent({ keepAlive: true });
    handler = new NodeHttpHandler({ httpAgent: external });
    const scheduler = (handler as unknown as { runtime: { hostScheduler: { size: number } } }).runtime.hostScheduler;
    const holding = new Promise<void>((resolve) => (heldWaiter = resolve));
    const inFlight = roundTrip(handler, "/hold");
    await holding;
    await roundTrip(handler); // finishes while the held request keeps the handler busy
    expect(Object.values(external.freeSockets).flat()).toHaveLength(1);
    expect(scheduler.size).toBe(0); // no sweep deadline (no timeouts are configured either)
    for (const res of held.splice(0)) res.end("ok");
    await inFlight;
    external.destroy();
  });

  it("idleSocketTimeout: 0 disables it", async () => {
    handler = new NodeHttpHandler({ idleSocketTimeout: 0 });
    await roundTrip(handler);
    vi.advanceTimersByTime(60_000);
    await roundTrip(handler);
    expect(connections).toBe(1);
  });

  it("sweeps expired idle sockets at their limit while other requests are in flight", async () => {
    handler = new NodeHttpHandler({ idleSocketTimeout: 1000, httpAgent: { maxSockets: 2 } });
    await Promise.all([roundTrip(handler), roundTrip(handler)]);
    expect(freeSocketCount(handler)).toBe(2);
    const agent = (handler.httpHandlerConfigs() as { httpAgent: http.Agent }).httpAgent;
    const pooled = Object.values(agent.freeSockets).flatMap((list) => list ?? []);
    const holding = new Promise<void>((resolve) => (heldWaiter = resolve));
    const inFlight = roundTrip(handler, "/hold"); // takes one free socket
    await holding;
    vi.advanceTimersByTime(999);
    expect(freeSocketCount(handler)).toBe(1);
    vi.advanceTimersByTime(1);
    expect(freeSocketCount(handler)).toBe(0);
    // One pooled socket serves the held request; the other expired on the tick and was destroyed.
    expect(pooled.filter((socket) => socket.destroyed)).toHaveLength(1);
    for (const res of held.splice(0)) res.end("ok");
    await inFlight;
  });

  it("connectionLifetime: a free socket older than the lifetime is not reused", async () => {
    handler = new NodeHttpHandler({ connectionLifetime: 1000, idleSocketTimeout: 0 });
    await roundTrip(handler);
    vi.advanceTimersByTime(500);
    await roundTrip(handler);
    expect(connections).toBe(1);
    vi.advanceTimersByTime(600);
    await roundTrip(handler);
    expect(connections).toBe(2);
    await vi.waitUntil(() => handler!.getPoolStats().origins[0].sockets.closed.max_lifetime === 1, { interval: 0 });
  });

  it("connectionLifetime never cuts a busy socket: it is closed when its response ends", async () => {
    handler = new NodeHttpHandler({ connectionLifetime: 1000, idleSocketTimeout: 0 });
    const holding = new Promise<void>((resolve) => (heldWaiter = resolve));
    const slow = roundTrip(handler, "/hold");
    await holding;
    vi.advanceTimersByTime(5000);
    expect(connections).toBe(1);
    for (const res of held.splice(0)) res.end("ok");
    await slow;
    expect(freeSocketCount(handler)).toBe(0);
    await roundTrip(handler);
    expect(connections).toBe(2);
  });

  it("rejects invalid limits with an error naming the option and value", () => {
    expect(() => new NodeHttpHandler({ idleSocketTimeout: -1 })).toThrow(/invalid option idleSocketTimeout: -1/);
    expect(() => new NodeHttpHandler({ connectionLifetime: "10s" as any })).toThrow(
      /invalid option connectionLifetime: "10s"/
    );
  });
});
