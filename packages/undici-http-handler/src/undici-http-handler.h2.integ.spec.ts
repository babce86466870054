/**
 * `dispatcher: { allowH2: true }` (what `@smithy/undici-http-handler` users pass): HTTP/2 over undici against a real
 * HTTP/2-only TLS server on localhost (no HTTP/1.1 fallback), through the handler's own pools, with telemetry; the
 * same server refuses the handler without it (the control).
 */
import { HttpRequest } from "@smithy/protocol-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CA, type H2TestServer, startH2Server, waitFor } from "../../node-http-handler/test/http2/h2-servers";
import { UndiciHttpHandler } from "./undici-http-handler";

function to(
  server: H2TestServer,
  init: { method?: string; path?: string; body?: string; headers?: Record<string, string> } = {}
) {
  return new HttpRequest({
    protocol: "https:",
    hostname: "localhost",
    port: server.port,
    method: init.method ?? "GET",
    path: init.path ?? "/echo",
    headers: { host: `localhost:${server.port}`, ...init.headers },
    body: init.body,
  });
}

async function text(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString();
}

describe("dispatcher: { allowH2: true } against an HTTP/2-only server", () => {
  let server: H2TestServer;
  beforeAll(async () => {
    server = await startH2Server();
  });
  afterAll(async () => {
    await server.close();
  });

  it("with allowH2 and pipelining: 5, one connection carries five concurrent streams (the queue's limit follows)", async () => {
    const h = new UndiciHttpHandler({
      httpsAgent: { ca: CA, maxSockets: 1 },
      dispatcher: { allowH2: true, pipelining: 5 },
    });
    const before = server.sessionsAccepted;
    // Five concurrent requests held by the server: all open on the server at once, not one after another.
    const pending = [1, 2, 3, 4, 5].map(() =>
      h.handle(to(server, { path: "/delay?ms=300" })).then((r) => text(r.response.body))
    );
    let peak = 0;
    await waitFor(() => {
      peak = Math.max(peak, server.openStreams);
      return peak === 5;
    });
    expect(await Promise.all(pending)).toHaveLength(5);
    expect(server.sessionsAccepted - before).toBe(1);
    h.destroy();
    await waitFor(() => server.sessionsOpen === 0);
  });

  it("without allowH2 the handler cannot talk to it (the control)", async () => {
    const h = new UndiciHttpHandler({ httpsAgent: { ca: CA } });
    await expect(h.handle(to(server))).rejects.toBeDefined();
    h.destroy();
  });

  it("GET and POST (an Expect: 100-continue one too) over one h2 session, counted by telemetry", async () => {
    const before = server.sessionsAccepted;
    for (const options of [
      { dispatcher: { allowH2: true, connect: { ca: CA } } },
      { httpsAgent: { ca: CA }, dispatcher: { allowH2: true } },
    ]) {
      const h = new UndiciHttpHandler(options);
      const get = await h.handle(to(server, { path: "/echo?x=1" }));
      expect(get.response.statusCode).toBe(200);
      expect(get.response.headers["x-server"]).toBe("h2");
      expect(JSON.parse(await text(get.response.body))).toMatchObject({ method: "GET", path: "/echo?x=1" });
      const post = await h.handle(
        to(server, { method: "POST", body: "payload", headers: { "content-length": "7", Expect: "100-continue" } })
      );
      const echoed = JSON.parse(await text(post.response.body));
      expect(echoed).toMatchObject({ method: "POST", body: "payload" });
      expect(echoed.headers.expect).toBeUndefined();
      const origin = h.getPoolStats().origins[0];
      expect(origin.origin).toBe(`https://localhost:${server.port}`);
      expect(origin.requests.completed).toBe(2);
      expect(origin.sockets.created).toBe(1);
      h.destroy();
    }
    expect(server.sessionsAccepted - before).toBe(2);
    await waitFor(() => server.sessionsOpen === 0);
  });
});
