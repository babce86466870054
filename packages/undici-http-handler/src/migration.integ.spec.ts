/**
 * The README's migration table, row by row, side by side on real loopback servers: `@smithy/undici-http-handler`
 * 3.2.4, Sockeye's `NodeHttpHandler` and this handler. Each test states what is the same and what differs, so a row
 * that stops being true fails here.
 */
import { UndiciHttpHandler as SmithyUndiciHttpHandler } from "@smithy/undici-http-handler";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import * as undici from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CA, type H2TestServer, startH2Server } from "../../node-http-handler/test/http2/h2-servers";
import { patternBytes, readAll, requestTo, startServer, type TestServer } from "../../node-http-handler/test/servers";
import { UndiciHttpHandler } from "./undici-http-handler";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: any }> {
  try {
    return { ok: true, value: await p };
  } catch (error) {
    return { ok: false, error };
  }
}

describe("migrating from @smithy/undici-http-handler 3.2.4 and from NodeHttpHandler", () => {
  let server: TestServer;
  let sockeye: UndiciHttpHandler;
  let smithy: SmithyUndiciHttpHandler;
  let node: NodeHttpHandler;
  beforeAll(async () => {
    server = await startServer("http");
    sockeye = new UndiciHttpHandler({ logger: quiet });
    smithy = new SmithyUndiciHttpHandler({ dispatcher: new undici.Agent() } as any);
    node = new NodeHttpHandler({ logger: quiet });
  });
  afterAll(async () => {
    sockeye.destroy();
    smithy.destroy();
    node.destroy();
    await server.close();
  });

  it("a per-call requestTimeout rejects with TimeoutError, as upstream (NodeHttpHandler only warns)", async () => {
    const mine = await settle(sockeye.handle(requestTo(server, { path: "/never" }), { requestTimeout: 200 }));
    const theirs = await settle(smithy.handle(requestTo(server, { path: "/never" }), { requestTimeout: 200 }));
    expect(mine.ok || theirs.ok).toBe(false);
    expect((mine as any).error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT" });
    expect((theirs as any).error).toMatchObject({ name: "TimeoutError", code: "UND_ERR_HEADERS_TIMEOUT" });
    // NodeHttpHandler: a warning, and the request goes on (answered here by /delay after the deadline).
    const warned: string[] = [];
    const nodeWarn = new NodeHttpHandler({ logger: { ...quiet, warn: (m: string) => warned.push(m) } });
    const late = await nodeWarn.handle(requestTo(server, { path: "/delay", query: { ms: "300" } }), {
      requestTimeout: 100,
    });
    expect(late.response.statusCode).toBe(200);
    await readAll(late.response.body);
    expect(warned.join()).toContain("requestTimeout");
    nodeWarn.destroy();
  });

  it("set-cookie lines are joined with ',' as NodeHttpHandler joins them (upstream: ', '); other duplicates with ', '", async () => {
    const results = [];
    for (const h of [sockeye, smithy, node]) {
      const { response } = await h.handle(requestTo(server, { path: "/repeat-headers" }));
      await readAll(response.body);
      results.push([response.headers["set-cookie"], response.headers["x-dup"]]);
    }
    const [mine, theirs, nodes] = results;
    expect(mine).toEqual(nodes);
    expect(mine[0]).toBe((theirs[0] as string).replace(", ", ","));
    expect(mine[1]).toBe(theirs[1]);
  });

  it("the #fragment is not sent, as upstream (NodeHttpHandler sends it)", async () => {
    const urls: string[] = [];
    for (const h of [sockeye, smithy, node]) {
      const before = server.received.length;
      const request = requestTo(server, { path: "/echo", query: { a: "1" }, fragment: "part" });
      await readAll((await h.handle(request)).response.body);
      urls.push(server.received[before].url);
    }
    expect(urls).toEqual(["/echo?a=1", "/echo?a=1", "/echo?a=1#part"]);
  });

  it("Expect: 100-continue is removed and the body sent at once, as upstream (NodeHttpHandler waits for 100)", async () => {
    const via: boolean[] = [];
    for (const h of [sockeye, smithy, node]) {
      const body = patternBytes(8 * 1024);
      const before = server.received.length;
      const { response } = await h.handle(
        requestTo(server, {
          method: "PUT",
          path: "/continue",
          body,
          headers: { Expect: "100-continue", "content-length": String(body.length) },
        })
      );
      await readAll(response.body);
      expect(server.received[before].body.length).toBe(body.length);
      via.push(server.received[before].viaCheckContinue);
    }
    expect(via).toEqual([false, false, true]);
  });

  it("httpHandlerConfigs() shows the options before the first request, as upstream (NodeHttpHandler: {})", () => {
    const options = { requestTimeout: 1234 };
    const mine = new UndiciHttpHandler(options);
    const theirs = new SmithyUndiciHttpHandler(options as any);
    const nodes = new NodeHttpHandler(options);
    expect(mine.httpHandlerConfigs().requestTimeout).toBe(1234);
    expect((theirs.httpHandlerConfigs() as any).requestTimeout).toBe(1234);
    expect(nodes.httpHandlerConfigs()).toEqual({});
    mine.destroy();
    theirs.destroy();
    nodes.destroy();
  });

  it("a MockAgent set with setGlobalDispatcher is followed, as upstream (NodeHttpHandler: not undici)", async () => {
    const g = globalThis as unknown as Record<symbol, unknown>;
    const s1 = Symbol.for("undici.globalDispatcher.1");
    const s2 = Symbol.for("undici.globalDispatcher.2");
    const saved = [g[s1], g[s2]];
    const mock = new undici.MockAgent();
    mock.disableNetConnect();
    const origin = `http://${server.hostname}:${server.port}`;
    mock.get(origin).intercept({ path: "/mocked", method: "GET" }).reply(203, "mocked").times(2);
    try {
      undici.setGlobalDispatcher(mock);
      const mine = new UndiciHttpHandler({ logger: quiet });
      const theirs = new SmithyUndiciHttpHandler();
      for (const h of [mine, theirs]) {
        const { response } = await h.handle(requestTo(server, { path: "/mocked" }));
        expect(response.statusCode).toBe(203);
        expect((await readAll(response.body)).toString()).toBe("mocked");
      }
      mine.destroy();
    } finally {
      g[s1] = saved[0];
      g[s2] = saved[1];
      await mock.close();
    }
  });
});

describe("agent options and option checks, side by side with upstream", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer("https");
  });
  afterAll(async () => {
    await server.close();
  });

  it("httpsAgent: { ca } is mapped here and ignored upstream; bad values throw here only", async () => {
    const mine = new UndiciHttpHandler({ httpsAgent: { ca: CA } });
    const theirs = new SmithyUndiciHttpHandler({ httpsAgent: { ca: CA } } as any);
    const a = await settle(mine.handle(requestTo(server)));
    const b = await settle(theirs.handle(requestTo(server)));
    expect(a.ok).toBe(true);
    await readAll((a as any).value.response.body);
    expect((b as any).error?.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    mine.destroy();
    theirs.destroy();
    expect(
      () => new SmithyUndiciHttpHandler({ requestTimeout: -1, httpsAgent: { maxSockets: -5 } } as any)
    ).not.toThrow();
    expect(() => new UndiciHttpHandler({ requestTimeout: -1 })).toThrow("invalid option requestTimeout: -1");
  });
});

describe("dispatcher: { allowH2: true }, side by side with upstream, on an HTTP/2-only server", () => {
  let h2: H2TestServer;
  beforeAll(async () => {
    h2 = await startH2Server();
  });
  afterAll(async () => {
    await h2.close();
  });

  it("works on both", async () => {
    const dispatcher = { allowH2: true, connect: { ca: CA } };
    for (const h of [new UndiciHttpHandler({ dispatcher }), new SmithyUndiciHttpHandler({ dispatcher } as any)]) {
      const request = requestTo({ protocol: "https:", hostname: "localhost", port: h2.port }, { path: "/echo" });
      const { response } = await h.handle(request);
      expect(response.statusCode).toBe(200);
      expect(response.headers["x-server"]).toBe("h2");
      await readAll(response.body);
      h.destroy();
    }
  });
});
