/**
 * `httpsAgent` / `httpAgent` TLS and connection options on UndiciHttpHandler, against a real self-signed https
 * server on 127.0.0.1: they apply to every request, `Expect: 100-continue` uploads included (those go through the
 * same undici pool, without the `Expect` header), from an options object, from an `https.Agent` instance, and from
 * `dispatcher: { connect }`; options without an undici equivalent are warned about once.
 */
import https from "node:https";
import type { HttpRequest } from "@smithy/protocol-http";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CA,
  patternBytes,
  readAll,
  requestTo,
  startServer,
  type TestServer,
} from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";
import type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";

function recordingLogger() {
  const warnings: string[] = [];
  return { warnings, logger: { debug() {}, info() {}, error() {}, trace() {}, warn: (m: string) => warnings.push(m) } };
}

async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: any }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

describe("TLS and connection options over https (self-signed server on 127.0.0.1)", () => {
  let server: TestServer;
  const handlers: Array<{ destroy(): void }> = [];
  function make(options: UndiciHttpHandlerOptions): UndiciHttpHandler {
    const h = new UndiciHttpHandler({ logger: recordingLogger().logger as any, ...options });
    handlers.push(h);
    return h;
  }
  beforeAll(async () => {
    server = await startServer("https");
  });
  afterAll(async () => {
    for (const h of handlers) h.destroy();
    await server.close();
  });

  const get = (): HttpRequest => requestTo(server, { path: "/echo" });
  const continuePut = (body = patternBytes(32 * 1024)): HttpRequest =>
    requestTo(server, {
      method: "PUT",
      path: "/continue",
      body,
      headers: { expect: "100-continue", "content-length": String(body.length) },
    });

  /**
   * Sends a continue PUT and proves it went through the handler's pool (telemetry counts it, no new connection)
   * without `Expect`, with the whole body.
   */
  async function expectContinueRoundTrip(h: UndiciHttpHandler): Promise<void> {
    // undici marks a connection free one event-loop turn after its response ended.
    await new Promise((resolve) => setImmediate(resolve));
    const before = server.received.length;
    const connections = server.connections;
    const completed = h.getPoolStats().origins[0]?.requests.completed ?? 0;
    const body = patternBytes(32 * 1024);
    const { response } = await h.handle(continuePut(body));
    expect(response.statusCode).toBe(200);
    const echoed = JSON.parse((await readAll(response.body)).toString());
    expect(Buffer.from(echoed.body, "base64").equals(body)).toBe(true);
    const rec = server.received[before];
    expect(rec.viaCheckContinue).toBe(false);
    expect(rec.headers.expect).toBeUndefined();
    expect(server.connections).toBe(connections);
    expect(h.getPoolStats().origins[0].requests.completed).toBe(completed + 1);
  }

  it("without the CA a GET and a continue PUT fail certificate verification (the control for every test below)", async () => {
    const h = make({});
    const a = await settle(h.handle(get()));
    const b = await settle(h.handle(continuePut()));
    expect(a.ok || b.ok).toBe(false);
    expect((a as any).error.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect((b as any).error.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
  });

  it("httpsAgent: { ca } works for GET and for an Expect: 100-continue PUT, as on NodeHttpHandler", async () => {
    const h = make({ httpsAgent: { ca: CA } });
    const node = new NodeHttpHandler({ httpsAgent: { ca: CA } });
    handlers.push(node);
    const mine = await h.handle(get());
    const theirs = await node.handle(get());
    expect(mine.response.statusCode).toBe(200);
    expect(theirs.response.statusCode).toBe(200);
    await readAll(mine.response.body);
    await readAll(theirs.response.body);
    await expectContinueRoundTrip(h);
    expect(h.getPoolStats().origins[0]).toMatchObject({ maxSockets: 50, inFlight: 0 });
  });

  it("an https.Agent instance contributes its options (ca, maxSockets) to every request", async () => {
    const agent = new https.Agent({ ca: CA, maxSockets: 3, keepAlive: true });
    const h = make({ httpsAgent: agent });
    const { response } = await h.handle(get());
    await readAll(response.body);
    await expectContinueRoundTrip(h);
    expect(h.getPoolStats().origins[0].maxSockets).toBe(3);
    agent.destroy();
  });

  it("dispatcher: { connect: { ca } } applies to continue uploads too", async () => {
    const h = make({ dispatcher: { connect: { ca: CA } } });
    const { response } = await h.handle(get());
    await readAll(response.body);
    await expectContinueRoundTrip(h);
  });

  it("rejectUnauthorized: false and a checkServerIdentity function are honoured for GET and continue uploads", async () => {
    const insecure = make({ httpsAgent: { rejectUnauthorized: false } });
    await readAll((await insecure.handle(get())).response.body);
    await expectContinueRoundTrip(insecure);
    const seen: string[] = [];
    const checking = make({
      httpsAgent: {
        ca: CA,
        checkServerIdentity: (host: string) => {
          seen.push(host);
          return new Error(`identity of ${host} refused by the test`);
        },
      } as https.AgentOptions,
    });
    const a = await settle(checking.handle(get()));
    const b = await settle(checking.handle(continuePut()));
    expect((a as any).error?.message).toContain("refused by the test");
    expect((b as any).error?.message).toContain("refused by the test");
    expect(seen).toEqual(["127.0.0.1", "127.0.0.1"]);
  });

  it("keepAlive: false opens a connection per request (as node:http); the default reuses one", async () => {
    // undici marks a connection free one turn after its response ended: wait that turn between requests.
    const sequential = async (h: UndiciHttpHandler) => {
      for (let i = 0; i < 3; i++) {
        await readAll((await h.handle(get())).response.body);
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    const before = server.connections;
    await sequential(make({ httpsAgent: { ca: CA, keepAlive: false } }));
    expect(server.connections - before).toBe(3);
    const mid = server.connections;
    await sequential(make({ httpsAgent: { ca: CA } }));
    expect(server.connections - mid).toBe(1);
  });

  it("localAddress and lookup reach the connection", async () => {
    const lookups: string[] = [];
    const h = make({
      httpsAgent: {
        ca: CA,
        localAddress: "127.0.0.1",
        lookup: ((hostname: string, options: any, callback: any) => {
          lookups.push(hostname);
          callback(null, options?.all ? [{ address: "127.0.0.1", family: 4 }] : "127.0.0.1", 4);
        }) as any,
      },
    });
    // A name only the custom lookup resolves; the certificate is checked against the IP via servername-less SNI.
    const req = requestTo(server, { hostname: "sockeye-test.invalid" });
    req.headers.host = `127.0.0.1:${server.port}`;
    const a = await settle(h.handle(req));
    expect(lookups).toContain("sockeye-test.invalid");
    // The fixture's certificate does not name "sockeye-test.invalid": reaching the TLS identity check proves the
    // custom lookup connected the socket.
    expect((a as any).error?.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
  });

  it("options without an undici equivalent are warned about once, naming option and value", async () => {
    const { warnings, logger } = recordingLogger();
    const h = new UndiciHttpHandler({
      logger: logger as any,
      httpsAgent: { ca: CA, timeout: 5000, maxFreeSockets: 10 },
      httpAgent: { scheduling: "fifo" },
    });
    handlers.push(h);
    await readAll((await h.handle(get())).response.body);
    const mine = warnings.filter((w) => w.includes("without an undici equivalent"));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toContain("httpsAgent.timeout=5000");
    expect(mine[0]).toContain("httpsAgent.maxFreeSockets=10");
    expect(mine[0]).toContain('httpAgent.scheduling="fifo"');
    // The supported ones still apply: the request above verified the certificate with ca.
    expect(h.getPoolStats().origins[0].requests.completed).toBe(1);
  });
});

describe("Expect: 100-continue over http: removed, the body sent at once through the same pool", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer("http");
  });
  afterAll(async () => {
    await server.close();
  });

  it("the server sees no Expect and the whole body (a Buffer and a stream); the caller's headers are left alone", async () => {
    const h = new UndiciHttpHandler({});
    const before = server.received.length;
    const body = patternBytes(16 * 1024);
    const request = requestTo(server, {
      method: "PUT",
      path: "/expect-417",
      body,
      headers: { Expect: "100-continue", "content-length": String(body.length) },
    });
    const { response } = await h.handle(request);
    // /expect-417 refuses only through checkContinue, i.e. when Expect arrives: without it, it echoes.
    expect(response.statusCode).toBe(200);
    await readAll(response.body);
    expect(server.received[before].headers.expect).toBeUndefined();
    expect(server.received[before].body.length).toBe(body.length);
    expect(request.headers.Expect).toBe("100-continue");
    const { Readable } = await import("node:stream");
    const streamed = await h.handle(
      requestTo(server, {
        method: "PUT",
        path: "/continue",
        body: Readable.from([body.subarray(0, 1000), body.subarray(1000)]),
        headers: { expect: "100-continue", "content-length": String(body.length) },
      })
    );
    const echoed = JSON.parse((await readAll(streamed.response.body)).toString());
    expect(Buffer.from(echoed.body, "base64").equals(body)).toBe(true);
    expect(server.received[before + 1].viaCheckContinue).toBe(false);
    expect(h.getPoolStats().origins[0].requests.completed).toBe(2);
    expect((h as any).scheduler.size).toBe(0);
    h.destroy();
  });
});
