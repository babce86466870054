/**
 * The handler-side queue (issue 25, `agent-gate.ts`): requests beyond `maxSockets` wait in the handler, not in
 * `agent.requests`, are dispatched in FIFO order onto the sockets the finished ones free, and every way a request ends
 * releases its slot. Real loopback servers (http and https), real agents; no timing is asserted.
 */
import { getEventListeners } from "node:events";
import http from "node:http";
import type https from "node:https";
import type { PoolEvent } from "@sockeye/pool-monitor";
import { afterEach, describe, expect, it } from "vitest";
import { NodeHttpHandler, type NodeHttpHandlerOptions } from "../src/index";
import { activeResources } from "./active-resources";
import { CA, readAll, requestTo, type ServerKind, startServer, type TestServer, waitFor } from "./servers";
import { settleAll } from "./settle-all";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function serve(kind: ServerKind): Promise<TestServer> {
  const server = await startServer(kind);
  cleanup.push(() => server.close());
  return server;
}

function make(kind: ServerKind, agent: http.AgentOptions, extra: NodeHttpHandlerOptions = {}): NodeHttpHandler {
  const options: NodeHttpHandlerOptions =
    kind === "https"
      ? { httpsAgent: { ca: CA, keepAlive: true, ...agent } }
      : { httpAgent: { keepAlive: true, ...agent } };
  const handler = new NodeHttpHandler({ ...options, ...extra });
  cleanup.push(() => handler.destroy());
  return handler;
}

function agentOf(handler: NodeHttpHandler, kind: ServerKind): http.Agent {
  const configs = handler.httpHandlerConfigs() as { httpAgent?: http.Agent; httpsAgent?: http.Agent };
  return (kind === "https" ? configs.httpsAgent : configs.httpAgent) as http.Agent;
}

/** The handler's gate in front of `agent` (internal). */
function gateOf(handler: NodeHttpHandler, agent: http.Agent): { queued: number; total: number } {
  return (handler as any).runtime.gateFor(agent);
}

/**
 * Counts the requests the agent holds (from `addRequest` to the request's `'close'`): `peak` is the most at once,
 * `agentQueuedPeak` the longest `agent.requests` seen right after an `addRequest`.
 */
function watchAgent(agent: http.Agent): { readonly peak: number; readonly agentQueuedPeak: number } {
  let live = 0;
  let peak = 0;
  let agentQueuedPeak = 0;
  const add = (agent as any).addRequest;
  (agent as any).addRequest = function (this: http.Agent, req: http.ClientRequest, ...rest: unknown[]) {
    live++;
    peak = Math.max(peak, live);
    req.once("close", () => live--);
    (add as any).call(this, req, ...rest);
    let queued = 0;
    for (const key in this.requests) queued += this.requests[key]?.length ?? 0;
    agentQueuedPeak = Math.max(agentQueuedPeak, queued);
  };
  return {
    get peak() {
      return peak;
    },
    get agentQueuedPeak() {
      return agentQueuedPeak;
    },
  };
}

async function ok(handler: NodeHttpHandler, server: TestServer, path: string): Promise<string> {
  const { response } = await handler.handle(requestTo(server, { path }));
  return (await readAll(response.body)).toString();
}

describe.each<ServerKind>(["http", "https"])("handler queue over %s", (kind) => {
  it("dispatches in FIFO order, at most maxSockets at the agent, reusing the freed sockets", async () => {
    const server = await serve(kind);
    const handler = make(kind, { maxSockets: 1 });
    // Warm up so the agent exists, then watch it.
    await ok(handler, server, "/echo");
    const agent = agentOf(handler, kind);
    const watch = watchAgent(agent);
    const before = server.connections;
    const paths = Array.from({ length: 12 }, (_, i) => `/delay?ms=2&i=${i}`);
    const pending = paths.map((path) => ok(handler, server, path));
    expect(gateOf(handler, agent).queued).toBe(11);
    expect(Object.keys(agent.requests)).toEqual([]);
    await Promise.all(pending);
    expect(server.received.slice(1).map((r) => r.url)).toEqual(paths);
    expect(watch.peak).toBe(1);
    // Dispatched by the gate's drain after Node parked the freed socket: it takes that socket, never agent.requests.
    expect(watch.agentQueuedPeak).toBe(0);
    expect(server.connections - before).toBe(0);
    expect(gateOf(handler, agent)).toMatchObject({ queued: 0, total: 0 });
  });

  it("a burst of 60 on maxSockets 3: three connections, never more than three requests at the agent", async () => {
    const server = await serve(kind);
    const handler = make(kind, { maxSockets: 3 });
    await ok(handler, server, "/echo");
    const agent = agentOf(handler, kind);
    const watch = watchAgent(agent);
    await Promise.all(Array.from({ length: 60 }, () => ok(handler, server, "/delay?ms=1")));
    expect(watch.peak).toBe(3);
    expect(watch.agentQueuedPeak).toBe(0);
    expect(server.connections).toBe(3);
    const origin = handler.getPoolStats().origins[0];
    expect(origin.sockets.created).toBe(3);
    expect(origin.requests).toMatchObject({ started: 61, completed: 61 });
  });

  it("an agent that parks fewer free sockets than maxSockets: slots handed over at once, no extra connection", async () => {
    const server = await serve(kind);
    // maxFreeSockets 1: Node destroys a freed socket when one is already parked, so a drain at the end of the turn
    // would find one socket for several freed slots and open new connections; the gate hands each slot over inside
    // the finished request's 'close' instead, and 'free' gives that request the socket.
    const handler = make(kind, { maxSockets: 3, maxFreeSockets: 1 });
    await ok(handler, server, "/echo");
    const agent = agentOf(handler, kind);
    const watch = watchAgent(agent);
    await Promise.all(Array.from({ length: 60 }, () => ok(handler, server, "/delay?ms=1")));
    expect(watch.peak).toBe(3);
    expect(server.connections).toBe(3);
    expect(gateOf(handler, agent)).toMatchObject({ queued: 0, total: 0 });
  });

  it("every way out of a dispatched request releases its slot to the queued one behind it", async () => {
    const server = await serve(kind);
    const handler = make(kind, { maxSockets: 1 }, { requestTimeout: 150, throwOnRequestTimeout: true });
    await ok(handler, server, "/echo");
    const agent = agentOf(handler, kind);
    const ways: Array<[string, () => Promise<unknown>]> = [
      ["completed", () => ok(handler, server, "/echo")],
      ["server reset", () => handler.handle(requestTo(server, { path: "/reset" }))],
      ["request timeout", () => handler.handle(requestTo(server, { path: "/never" }))],
      [
        "aborted in flight",
        () => {
          const controller = new AbortController();
          const p = handler.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal as any });
          server.waitForRequests(server.received.length + 1).then(() => controller.abort());
          return p;
        },
      ],
      [
        "body unread, then destroyed",
        async () => {
          const { response } = await handler.handle(requestTo(server, { path: "/large", query: { bytes: "200000" } }));
          await new Promise((resolve) => setTimeout(resolve, 20));
          (response.body as http.IncomingMessage).destroy();
        },
      ],
    ];
    for (const [way, run] of ways) {
      const first = run().catch((error: Error) => error);
      // Its own requestTimeout is longer: its clock runs from handle(), queued time included.
      const queued = handler
        .handle(requestTo(server, { path: "/echo" }), { requestTimeout: 10_000 })
        .then(({ response }) => readAll(response.body));
      expect(gateOf(handler, agent).queued, way).toBe(1);
      await first;
      expect((await queued).length, way).toBeGreaterThan(0);
      await waitFor(() => gateOf(handler, agent).total === 0, `the slot after ${way}`);
    }
    expect((handler as any).runtime.inFlightCount).toBe(0);
  });

  it("telemetry counts the gate's queue as it counted agent.requests: gauge, oldest age, events", async () => {
    const server = await serve(kind);
    const handler = make(kind, { maxSockets: 2 });
    const events: PoolEvent[] = [];
    const unsubscribe = handler.poolMonitor!.subscribe((event) => events.push(event));
    cleanup.push(unsubscribe);
    const controller = new AbortController();
    const pending = Array.from({ length: 7 }, () =>
      handler.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal as any })
    );
    for (const p of pending) p.catch(() => {});
    await server.waitForRequests(2);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const origin = handler.getPoolStats().origins[0];
    expect(origin).toMatchObject({ active: 2, queued: 5, inFlight: 7, maxSockets: 2 });
    expect(origin.oldestQueuedMs).toBeGreaterThanOrEqual(25);
    expect(handler.getPoolStats().totals.queued).toBe(5);
    expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(5);
    controller.abort();
    await settleAll(pending, 1000);
    expect(handler.getPoolStats().origins[0]).toMatchObject({ queued: 0, inFlight: 0, requests: { aborted: 7 } });

    // Queued requests dispatched later are acquired as queued, their wait measured from handle().
    events.length = 0;
    const burst = Array.from({ length: 6 }, () => ok(handler, server, "/delay?ms=5"));
    await Promise.all(burst);
    const acquired = events.filter((e) => e.type === "request:acquired") as Array<{ queued: boolean }>;
    expect(acquired).toHaveLength(6);
    expect(acquired.filter((e) => e.queued)).toHaveLength(4);
    expect(events.filter((e) => e.type === "request:enqueued")).toHaveLength(4);
  });

  it("destroy() under load: every request rejects, no connection opened, no socket, listener or timer left", async () => {
    const server = await serve(kind);
    const handler = make(kind, { maxSockets: 5 }, { requestTimeout: 60_000, connectionTimeout: 60_000 });
    await ok(handler, server, "/echo");
    const resources = activeResources();
    const agent = agentOf(handler, kind);
    const controller = new AbortController();
    const pending = Array.from({ length: 300 }, () =>
      handler.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal as any })
    );
    await server.waitForRequests(6);
    expect(gateOf(handler, agent).queued).toBe(295);
    const connections = server.connections;
    handler.destroy();
    const outcomes = await settleAll(pending, 2000);
    for (const o of outcomes) {
      expect(o).toMatchObject({ status: "rejected", reason: { name: "HandlerDestroyedError" } });
    }
    expect(server.connections).toBe(connections);
    expect(gateOf(handler, agent)).toMatchObject({ queued: 0, total: 0 });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    await waitFor(() => server.openConnections === 0, "connections closed");
    await new Promise((resolve) => setImmediate(resolve));
    expect(activeResources().timers).toBeLessThanOrEqual(resources.timers);
    expect((handler as any).runtime.hostScheduler.size).toBe(0);
  });
});

describe("handler queue with a caller's agent", () => {
  it("shares an external agent with other code: never more than maxSockets of the handler's requests, no starvation", async () => {
    const server = await serve("http");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    cleanup.push(() => agent.destroy());
    const handler = new NodeHttpHandler({ httpAgent: agent });
    cleanup.push(() => handler.destroy());
    let handlerAtAgent = 0;
    let handlerPeak = 0;
    const add = (agent as any).addRequest;
    (agent as any).addRequest = function (this: http.Agent, req: http.ClientRequest, ...rest: unknown[]) {
      if ((req as any).getHeader("x-from") === "handler") {
        handlerAtAgent++;
        handlerPeak = Math.max(handlerPeak, handlerAtAgent);
        req.once("close", () => handlerAtAgent--);
      }
      (add as any).call(this, req, ...rest);
    };
    // Other code's requests on the same agent, interleaved with the handler's.
    const raw = (i: number) =>
      new Promise<number>((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port: server.port, path: `/delay?ms=3&raw=${i}`, agent }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          })
          .on("error", reject);
      });
    const handlerCalls = Array.from({ length: 20 }, async (_, i) => {
      const { response } = await handler.handle(
        requestTo(server, { path: `/delay?ms=3&h=${i}`, headers: { "x-from": "handler" } })
      );
      await readAll(response.body);
      return response.statusCode;
    });
    const rawCalls = Array.from({ length: 10 }, (_, i) => raw(i));
    const statuses = await Promise.all([...handlerCalls, ...rawCalls]);
    expect(statuses).toEqual(Array(30).fill(200));
    expect(handlerPeak).toBeLessThanOrEqual(2);
    expect(server.connections).toBe(2);
  });

  it("maxTotalSockets caps the handler's requests over every origin of the agent", async () => {
    const a = await serve("http");
    const b = await serve("http");
    const handler = make("http", { maxSockets: 3, maxTotalSockets: 3 });
    await ok(handler, a, "/echo");
    const agent = agentOf(handler, "http");
    agent.destroy(); // start from no socket: the warm one would count against the total
    const watch = watchAgent(agent);
    const calls: Promise<string>[] = [];
    for (let i = 0; i < 20; i++) calls.push(ok(handler, i % 2 === 0 ? a : b, "/delay?ms=2"));
    const results = await Promise.all(calls);
    expect(results).toHaveLength(20);
    expect(watch.peak).toBeLessThanOrEqual(3);
    expect(gateOf(handler, agent)).toMatchObject({ queued: 0, total: 0 });
  });

  it("Expect: 100-continue on the one-off agent bypasses the gate", async () => {
    const server = await serve("http");
    const handler = make("http", { maxSockets: 1 });
    await ok(handler, server, "/echo");
    const agent = agentOf(handler, "http");
    const controller = new AbortController();
    const held = handler.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal as any });
    held.catch(() => {});
    await server.waitForRequests(2);
    const { response } = await handler.handle(
      requestTo(server, { method: "PUT", path: "/continue", headers: { expect: "100-continue" }, body: "x" })
    );
    await readAll(response.body);
    expect(response.statusCode).toBe(200);
    expect(gateOf(handler, agent).queued).toBe(0);
    controller.abort();
    await settleAll([held], 1000);
  });
});

// https.Agent is the same class family: one check that its key (TLS options included) is the agent's own name.
describe("gate keys", () => {
  it("use the agent's own name for a request (the agent.requests key), TLS options included", async () => {
    const server = await serve("https");
    const handler = make("https", { maxSockets: 1 });
    await ok(handler, server, "/echo");
    const agent = agentOf(handler, "https") as https.Agent;
    const names = Object.keys(agent.freeSockets);
    const gate = (handler as any).runtime.gateFor(agent);
    expect(gate.keyFor("127.0.0.1", server.port).name).toBe(names[0]);
  });
});
