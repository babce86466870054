/**
 * UndiciHttpHandler against real http and https servers on 127.0.0.1: a differential suite against Sockeye's
 * NodeHttpHandler and @smithy/undici-http-handler, 100-continue uploads, faults (reset, refused, hang, abort at
 * each phase, destroy under load) with counts asserted after, and telemetry.
 */
import { setMaxListeners } from "node:events";
import { Readable } from "node:stream";
import type { HttpRequest } from "@smithy/protocol-http";
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import type { PoolEvent } from "@sockeye/pool-monitor";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CA,
  closedPort,
  patternBytes,
  readAll,
  requestTo,
  startServer,
  startSilentTcpServer,
  type TestServer,
  waitFor,
} from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

type AnyHandler = { handle: (r: HttpRequest, o?: any) => Promise<{ response: any }>; destroy(): void };

function makeSockeye(options: Record<string, unknown> = {}): UndiciHttpHandler {
  return new UndiciHttpHandler({
    dispatcher: { connect: { ca: CA } },
    logger: { ...console, warn() {} } as any,
    ...options,
  });
}

/** Internal counters that must be zero once every request settled. */
function leftovers(h: UndiciHttpHandler): { armed: number; ticking: boolean; inFlight: number } {
  const scheduler = (h as any).scheduler;
  return { armed: scheduler.size, ticking: scheduler.ticking, inFlight: h.getPoolStats().totals.inFlight };
}

async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: any }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

for (const kind of ["http", "https"] as const) {
  describe(`differential over ${kind}`, () => {
    let server: TestServer;
    let handlers: Record<string, AnyHandler>;
    beforeAll(async () => {
      server = await startServer(kind);
      handlers = {
        sockeyeUndici: makeSockeye(),
        sockeyeNode: new NodeHttpHandler({ httpsAgent: { ca: CA } }),
        smithyUndici: new SmithyUndiciHttpHandler({ dispatcher: { connect: { ca: CA } } } as any),
      };
    });
    afterAll(async () => {
      for (const h of Object.values(handlers)) h.destroy();
      await server.close();
    });

    const cases: Array<[string, () => HttpRequest]> = [
      [
        "GET with query and fragment",
        () => requestTo(server, { path: "/echo", query: { a: "1 2", b: ["x", "y"], c: null as any } }),
      ],
      [
        "POST string body",
        () => requestTo(server, { method: "POST", body: "hello", headers: { "content-length": "5" } }),
      ],
      [
        "PUT Buffer body",
        () => requestTo(server, { method: "PUT", body: patternBytes(70_000), headers: { "content-length": "70000" } }),
      ],
      ["404", () => requestTo(server, { path: "/status/404" })],
      ["204 empty", () => requestTo(server, { path: "/status/204" })],
      ["repeated headers", () => requestTo(server, { path: "/repeat-headers" })],
      ["large body", () => requestTo(server, { path: "/large", query: { bytes: "300000" } })],
      ["chunked body", () => requestTo(server, { path: "/chunked" })],
      ["basic auth", () => requestTo(server, { username: "u", password: "p" })],
    ];
    for (const [name, build] of cases) {
      it(`${name}: same status, headers and body as NodeHttpHandler and @smithy/undici-http-handler`, async () => {
        const results: Record<string, { status: number; body: Buffer; headers: Record<string, string> }> = {};
        for (const [label, h] of Object.entries(handlers)) {
          const { response } = await h.handle(build());
          results[label] = {
            status: response.statusCode,
            body: await readAll(response.body),
            headers: response.headers,
          };
        }
        const mine = results.sockeyeUndici;
        // @smithy/undici-http-handler puts credentials into the origin URL and undici drops them: compare auth with
        // NodeHttpHandler only.
        const others = name === "basic auth" ? [results.sockeyeNode] : [results.sockeyeNode, results.smithyUndici];
        for (const other of others) {
          expect(mine.status).toBe(other.status);
          // The echo embeds request headers, which differ by client library (connection, user-agent): compare
          // everything but those.
          if (mine.headers["x-echo"]) {
            const a = JSON.parse(mine.body.toString());
            const b = JSON.parse(other.body.toString());
            expect([a.method, a.url, a.body, a.headers.authorization, a.headers["content-length"]]).toEqual([
              b.method,
              b.url,
              b.body,
              b.headers.authorization,
              b.headers["content-length"],
            ]);
          } else {
            expect(mine.body.equals(other.body)).toBe(true);
          }
          expect(mine.headers["content-type"]).toBe(other.headers["content-type"]);
        }
        // Header values as NodeHttpHandler shows them (duplicates joined as node:http joins them).
        expect(mine.headers["set-cookie"]).toBe(results.sockeyeNode.headers["set-cookie"]);
        expect(mine.headers["x-dup"]).toBe(results.sockeyeNode.headers["x-dup"]);
        expect(leftovers(handlers.sockeyeUndici as UndiciHttpHandler).inFlight).toBe(0);
      });
    }

    it("streams a Readable request body (unknown length) and the server receives every byte", async () => {
      const data = patternBytes(256 * 1024);
      const { response } = await handlers.sockeyeUndici.handle(
        requestTo(server, {
          method: "PUT",
          path: "/stream-sink",
          body: Readable.from([data.subarray(0, 100_000), data.subarray(100_000)]),
          headers: { "transfer-encoding": "chunked" },
        })
      );
      const got = JSON.parse((await readAll(response.body)).toString());
      expect(got.length).toBe(data.length);
    });

    // Over https too, with the CA given only as dispatcher.connect: continue uploads use the same pool.
    it("sends an Expect: 100-continue PUT through the same pool, without Expect, body at once (as upstream)", async () => {
      // undici marks a connection free one event-loop turn after its response ended.
      await new Promise((resolve) => setImmediate(resolve));
      const before = server.received.length;
      const connections = server.connections;
      const body = patternBytes(64 * 1024);
      const { response } = await handlers.sockeyeUndici.handle(
        requestTo(server, {
          method: "PUT",
          path: "/continue",
          body,
          headers: { expect: "100-continue", "content-length": String(body.length) },
        })
      );
      expect(response.statusCode).toBe(200);
      await readAll(response.body);
      const rec = server.received[before];
      expect(rec.viaCheckContinue).toBe(false);
      expect(rec.headers.expect).toBeUndefined();
      expect(server.connections).toBe(connections);
      expect(rec.body.length).toBe(body.length);
    });
  });
}

describe("faults, side by side with NodeHttpHandler", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer("http");
  });
  afterAll(async () => {
    await server.close();
  });

  it("refused: ECONNREFUSED, like NodeHttpHandler; nothing left behind", async () => {
    const port = await closedPort();
    const mine = makeSockeye();
    const node = new NodeHttpHandler();
    const a = await settle(mine.handle(requestTo(server, { port })));
    const b = await settle(node.handle(requestTo(server, { port })));
    expect(a.ok || b.ok).toBe(false);
    expect((a as any).error.code).toBe("ECONNREFUSED");
    expect((b as any).error.code).toBe("ECONNREFUSED");
    expect(mine.getPoolStats().origins[0].requests.failed).toBe(1);
    expect(mine.getPoolStats().origins[0].sockets.closed.connect_error).toBe(1);
    expect(leftovers(mine)).toEqual({ armed: 0, ticking: expect.any(Boolean), inFlight: 0 });
    mine.destroy();
    node.destroy();
  });

  it("reset before a response: TimeoutError with code ECONNRESET, like NodeHttpHandler", async () => {
    const mine = makeSockeye();
    const node = new NodeHttpHandler();
    const a = await settle(mine.handle(requestTo(server, { path: "/reset" })));
    const b = await settle(node.handle(requestTo(server, { path: "/reset" })));
    expect([(a as any).error.name, (a as any).error.code]).toEqual(["TimeoutError", "ECONNRESET"]);
    expect([(b as any).error.name, (b as any).error.code]).toEqual(["TimeoutError", "ECONNRESET"]);
    expect(leftovers(mine).inFlight).toBe(0);
    mine.destroy();
    node.destroy();
  });

  it("hang: requestTimeout with throwOnRequestTimeout rejects TimeoutError ETIMEDOUT; the connection is freed", async () => {
    const mine = makeSockeye({ requestTimeout: 300, throwOnRequestTimeout: true, httpAgent: { maxSockets: 1 } });
    const a = await settle(mine.handle(requestTo(server, { path: "/never" })));
    expect([(a as any).error.name, (a as any).error.code]).toEqual(["TimeoutError", "ETIMEDOUT"]);
    // The single connection was released: the next request goes through.
    const { response } = await mine.handle(requestTo(server));
    await readAll(response.body);
    const o = mine.getPoolStats().origins[0];
    expect(o.requests).toMatchObject({ started: 2, timedOut: 1, completed: 1 });
    expect(leftovers(mine).armed).toBe(0);
    mine.destroy();
  });

  it("hang: socketTimeout rejects TimeoutError naming the inactivity", async () => {
    const mine = makeSockeye({ socketTimeout: 1000 });
    const a = await settle(mine.handle(requestTo(server, { path: "/never" })));
    expect((a as any).error.name).toBe("TimeoutError");
    expect((a as any).error.message).toContain("1000 ms of inactivity");
    expect(mine.getPoolStats().origins[0].requests.timedOut).toBe(1);
    mine.destroy();
  });

  it("TLS handshake that never completes: connectionTimeout rejects TimeoutError", async () => {
    const silent = await startSilentTcpServer();
    const mine = makeSockeye({ connectionTimeout: 300 });
    const a = await settle(mine.handle(requestTo({ protocol: "https:", hostname: "127.0.0.1", port: silent.port })));
    expect((a as any).error.name).toBe("TimeoutError");
    // Truthful: still connecting (TLS handshake), not waiting for a free connection; NodeHttpHandler's text.
    expect((a as any).error.message).toContain(
      "did not establish a connection with the server within the configured timeout of 300 ms."
    );
    expect((a as any).error.message).not.toContain("waiting for a free connection");
    expect(leftovers(mine)).toMatchObject({ armed: 0, inFlight: 0 });
    mine.destroy();
    await silent.close();
  });

  it("socketAcquisitionTimeout: a queued request fails with ETIMEDOUT naming maxSockets; the held one is unaffected", async () => {
    const mine = makeSockeye({ socketAcquisitionTimeout: 300, httpAgent: { maxSockets: 1 } });
    const controller = new AbortController();
    const held = settle(mine.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal }));
    await waitFor(() => mine.getPoolStats().origins[0]?.active === 1, "first request on the connection");
    const queued = await settle(mine.handle(requestTo(server)));
    expect([(queued as any).error.name, (queued as any).error.code]).toEqual(["TimeoutError", "ETIMEDOUT"]);
    expect((queued as any).error.message).toContain("maxSockets=1");
    controller.abort(new Error("done"));
    const first = await held;
    expect((first as any).error.name).toBe("AbortError");
    expect((first as any).error.cause.message).toBe("done");
    expect(mine.getPoolStats().origins[0].requests).toMatchObject({ started: 2, timedOut: 1, aborted: 1 });
    mine.destroy();
  });

  it("abort at each phase: before, queued, connected (AbortError with cause), during the body (NodeHttpHandler's body error); nothing leaks", async () => {
    const mine = makeSockeye({ httpAgent: { maxSockets: 1 } });
    // before
    const pre = new AbortController();
    pre.abort(new Error("pre"));
    const a = await settle(mine.handle(requestTo(server), { abortSignal: pre.signal }));
    expect([(a as any).error.name, (a as any).error.cause?.message]).toEqual(["AbortError", "pre"]);
    // connected, waiting for headers
    const c1 = new AbortController();
    const onConn = settle(mine.handle(requestTo(server, { path: "/never" }), { abortSignal: c1.signal }));
    await waitFor(() => mine.getPoolStats().origins[0]?.active === 1, "request on the connection");
    // queued behind it
    const c2 = new AbortController();
    const queued = settle(mine.handle(requestTo(server), { abortSignal: c2.signal }));
    c2.abort(new Error("queued"));
    expect(((await queued) as any).error.cause.message).toBe("queued");
    c1.abort(new Error("connected"));
    expect(((await onConn) as any).error.cause.message).toBe("connected");
    // during the body
    const c3 = new AbortController();
    const { response } = await mine.handle(requestTo(server, { path: "/stall-body" }), { abortSignal: c3.signal });
    const reading = settle(readAll(response.body));
    c3.abort(new Error("body"));
    const r = await reading;
    expect(r.ok).toBe(false);
    // NodeHttpHandler's body error shape ("aborted", ECONNRESET), the abort as its cause.
    expect([(r as any).error.name, (r as any).error.message, (r as any).error.code]).toEqual([
      "Error",
      "aborted",
      "ECONNRESET",
    ]);
    expect([(r as any).error.cause.name, (r as any).error.cause.cause.message]).toEqual(["AbortError", "body"]);
    // the pool still works afterwards
    const ok = await mine.handle(requestTo(server));
    await readAll(ok.response.body);
    const stats = mine.getPoolStats().origins[0];
    expect(stats.requests.aborted).toBe(3);
    expect(stats.inFlight).toBe(0);
    expect(leftovers(mine).armed).toBe(0);
    mine.destroy();
  });

  it("a body destroyed before its end aborts the exchange and frees the connection", async () => {
    const mine = makeSockeye({ httpAgent: { maxSockets: 1 } });
    const { response } = await mine.handle(
      requestTo(server, { path: "/large", query: { bytes: String(8 * 1024 * 1024) } })
    );
    const body = response.body;
    await new Promise((resolve) => body.once("data", resolve));
    body.destroy();
    // The single connection is free again: the next request completes.
    const next = await mine.handle(requestTo(server));
    expect((await readAll(next.response.body)).length).toBeGreaterThan(0);
    await waitFor(() => mine.getPoolStats().totals.inFlight === 0, "both requests closed");
    expect(mine.getPoolStats().origins[0].requests.started).toBe(2);
    mine.destroy();
  });

  it("destroy under load: every request settles (none hangs), the handler works again afterwards", async () => {
    const mine = makeSockeye({ httpAgent: { maxSockets: 4 } });
    const all = Array.from({ length: 40 }, () =>
      settle(mine.handle(requestTo(server, { path: "/delay", query: { ms: "500" } })))
    );
    await waitFor(() => mine.getPoolStats().origins[0]?.active === 4, "four busy connections");
    mine.destroy();
    const results = await Promise.all(all);
    expect(results.length).toBe(40);
    expect(results.filter((x) => x.ok).length).toBe(0);
    expect(leftovers(mine)).toMatchObject({ armed: 0, ticking: false, inFlight: 0 });
    const again = await mine.handle(requestTo(server));
    await readAll(again.response.body);
    mine.destroy();
  });
});

describe("telemetry", () => {
  it("getPoolStats in PoolStats shape from undici's pool; subscribe() delivers connection and acquisition events", async () => {
    const server = await startServer("https");
    const mine = makeSockeye({ httpsAgent: { maxSockets: 3 } });
    const events: PoolEvent[] = [];
    const unsubscribe = (mine.poolMonitor as any).subscribe((e: PoolEvent) => events.push(e));
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const { response } = await mine.handle(requestTo(server));
        await readAll(response.body);
      })
    );
    // undici marks a client free again on the next turn ('drain'): the gauges may trail a burst by one turn.
    await new Promise((resolve) => setImmediate(resolve));
    const stats = mine.getPoolStats();
    const o = stats.origins[0];
    expect(o.origin).toBe(`https://127.0.0.1:${server.port}`);
    expect(o.maxSockets).toBe(3);
    expect(o.requests).toEqual({ started: 10, completed: 10, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(o.sockets.created).toBe(3);
    expect(o.sockets.acquisitions).toBe(10);
    expect(o.sockets.reusedAcquisitions).toBe(7);
    expect(o.idle).toBe(3);
    expect(o.active).toBe(0);
    expect(o.connectMs.count).toBe(3);
    expect(o.tlsMs.count).toBe(3);
    expect(events.filter((e) => e.type === "connection:created")).toHaveLength(3);
    expect(events.filter((e) => e.type === "request:acquired")).toHaveLength(10);
    expect(JSON.parse(JSON.stringify(stats))).toEqual(stats);
    unsubscribe();
    mine.destroy();
    await waitFor(
      () =>
        mine.getPoolStats().origins[0].sockets.closed.local +
          mine.getPoolStats().origins[0].sockets.closed.aborted +
          mine.getPoolStats().origins[0].sockets.closed.error >=
        3,
      "sockets closed"
    );
    await server.close();
  });

  it("detects saturation with the same detector: onSaturation reports pool_capacity for a growing queue", async () => {
    const server = await startServer("http");
    const reports: any[] = [];
    const mine = makeSockeye({
      httpAgent: { maxSockets: 2 },
      saturation: { sampleIntervalMs: 100, windowSamples: 3 },
      onSaturation: (r: any) => reports.push(r),
    });
    const pending: Promise<unknown>[] = [];
    const controller = new AbortController();
    // One signal for every request of the overload (each in flight holds one listener until it settles).
    setMaxListeners(0, controller.signal);
    const feeder = setInterval(() => {
      for (let i = 0; i < 3; i++)
        pending.push(settle(mine.handle(requestTo(server, { path: "/never" }), { abortSignal: controller.signal })));
    }, 40);
    try {
      await waitFor(() => reports.length > 0, "a saturation report", 5000);
    } finally {
      clearInterval(feeder);
      controller.abort();
      await Promise.all(pending);
    }
    expect(reports[0].origin).toBe(`http://127.0.0.1:${server.port}`);
    expect(reports[0].state).not.toBe("ok");
    expect(reports[0].maxSockets).toBe(2);
    expect(mine.getPoolStats().totals.inFlight).toBe(0);
    mine.destroy();
    await server.close();
  });
});
