/**
 * Real proxies: a CONNECT proxy on 127.0.0.1 in front of a self-signed https origin answering S3-ish 200s. Through
 * undici 7 and undici 8 dispatchers (`ProxyAgent`, `EnvHttpProxyAgent` from `HTTPS_PROXY`, the global dispatcher),
 * GETs and a real `@aws-sdk/client-s3` `PutObject` large enough for the SDK's `Expect: 100-continue` (2 MiB) go
 * through the proxy: the origin's connections all come from the proxy (tunnel count == origin connection count,
 * every origin-side remote port is one of the proxy's upstream sockets), TLS works with the CA given only to the
 * dispatcher, and nothing reaches the proxy as a plain request. undici 8 needs Node >= 22.19: those cases are skipped,
 * visibly, on older Node. Also: an agent that makes its own connections (`https-proxy-agent`; not `agentkeepalive`) is a
 * TypeError at construction, and the global dispatcher rule (a user-set one is followed, undici's default is not).
 */
import http from "node:http";
import https from "node:https";
import { createRequire } from "node:module";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { HttpRequest } from "@smithy/protocol-http";
import agentkeepalive from "agentkeepalive";
import { HttpsProxyAgent } from "https-proxy-agent";
import * as undici7 from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CA, type ConnectProxy, type S3Origin, startConnectProxy, startS3Origin } from "../test/proxy-servers";
import { UndiciHttpHandler } from "./undici-http-handler";

const require = createRequire(__filename);
const [major, minor] = process.versions.node.split(".").map(Number);
/** undici 8's engines field: Node >= 22.19. */
const NODE_RUNS_UNDICI_8 = major > 22 || (major === 22 && minor >= 19);
const undici8: typeof undici7 | undefined = NODE_RUNS_UNDICI_8 ? require("undici-8") : undefined;

const SLOT_1 = Symbol.for("undici.globalDispatcher.1");
const SLOT_2 = Symbol.for("undici.globalDispatcher.2");
const PROXY_ENV = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"] as const;
const MiB = 1024 * 1024;
const quietLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** Runs `fn` with the global dispatcher slots as they are now restored afterwards, whatever `fn` set. */
async function withGlobalRestored<T>(fn: () => Promise<T>): Promise<T> {
  const g = globalThis as unknown as Record<symbol, unknown>;
  const saved1 = g[SLOT_1];
  const saved2 = g[SLOT_2];
  try {
    return await fn();
  } finally {
    g[SLOT_1] = saved1;
    g[SLOT_2] = saved2;
  }
}

/** Builds `make()` with `HTTPS_PROXY` = `proxyUrl` and no other proxy variable set; the environment is restored. */
function withProxyEnv<T>(proxyUrl: string, make: () => T): T {
  const saved = PROXY_ENV.map((name) => [name, process.env[name]] as const);
  try {
    for (const name of PROXY_ENV) delete process.env[name];
    process.env.HTTPS_PROXY = proxyUrl;
    return make();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

function getRequest(origin: S3Origin, path: string): HttpRequest {
  return new HttpRequest({
    protocol: "https:",
    hostname: "127.0.0.1",
    port: origin.port,
    method: "GET",
    path,
    headers: { host: `127.0.0.1:${origin.port}` },
  });
}

async function readText(body: AsyncIterable<unknown>): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString();
}

/**
 * Two GETs and a 2 MiB S3 PutObject through `handler`; asserts what the origin got and that the SDK did add
 * `Expect: 100-continue` (which the handler removes before undici).
 */
async function exercise(handler: UndiciHttpHandler, origin: S3Origin): Promise<void> {
  for (const path of ["/bucket/a", "/bucket/b"]) {
    const { response } = await handler.handle(getRequest(origin, path));
    expect(response.statusCode).toBe(200);
    expect(await readText(response.body)).toBe("hello through the proxy");
  }
  const s3 = new S3Client({
    region: "us-east-1",
    endpoint: origin.url,
    forcePathStyle: true,
    credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
    requestHandler: handler,
    maxAttempts: 1,
  });
  const expectHeaders: Array<string | undefined> = [];
  s3.middlewareStack.add(
    (next) => async (args) => {
      expectHeaders.push((args.request as HttpRequest).headers.Expect);
      return next(args);
    },
    { step: "finalizeRequest", name: "recordExpect" }
  );
  const body = Buffer.alloc(2 * MiB, 7);
  const out = await s3.send(new PutObjectCommand({ Bucket: "bucket", Key: "big.bin", Body: body }));
  expect(out.ETag).toBe('"0123456789abcdef"');
  expect(expectHeaders).toEqual(["100-continue"]);
  const put = origin.requests.find((r) => r.method === "PUT");
  expect(put).toMatchObject({ path: "/bucket/big.bin?x-id=PutObject", expect: undefined, bodyLength: 2 * MiB });
}

/** Every origin connection came through the proxy, and the proxy only tunnelled. */
function expectAllThroughProxy(proxy: ConnectProxy, origin: S3Origin): void {
  expect(origin.connectionPorts.length).toBeGreaterThan(0);
  expect(proxy.tunnels).toBe(origin.connectionPorts.length);
  for (const port of origin.connectionPorts) expect(proxy.upstreamPorts.has(port)).toBe(true);
  expect(proxy.targets.every((t) => t === `127.0.0.1:${origin.port}`)).toBe(true);
  expect(proxy.plainRequests).toBe(0);
}

const versions: Array<[string, typeof undici7 | undefined]> = [
  ["undici 7", undici7],
  ["undici 8", undici8],
];

for (const [label, lib] of versions) {
  const skip = lib === undefined;
  const title = skip
    ? `${label} through a CONNECT proxy (skipped: undici 8 needs Node >= 22.19, this is ${process.versions.node})`
    : `${label} through a CONNECT proxy`;
  describe.skipIf(skip)(title, () => {
    let proxy: ConnectProxy;
    let origin: S3Origin;
    let handler: UndiciHttpHandler | undefined;
    beforeAll(async () => {
      // Fresh servers per case below, so counts are per case.
    });
    afterEach(async () => {
      handler?.destroy();
      handler = undefined;
      await origin?.close();
      await proxy?.close();
    });
    const start = async (): Promise<void> => {
      proxy = await startConnectProxy();
      origin = await startS3Origin();
    };

    it("dispatcher: new ProxyAgent(...) with the CA only in requestTls: GETs and a 2 MiB PutObject", async () => {
      await start();
      const u = lib as typeof undici7;
      handler = new UndiciHttpHandler({
        dispatcher: new u.ProxyAgent({ uri: proxy.url, requestTls: { ca: CA } }),
        logger: quietLogger,
      });
      await exercise(handler, origin);
      expectAllThroughProxy(proxy, origin);
    });

    it("dispatcher: new EnvHttpProxyAgent(...) built from HTTPS_PROXY: GETs and a 2 MiB PutObject", async () => {
      await start();
      const u = lib as typeof undici7;
      const dispatcher = withProxyEnv(proxy.url, () => new u.EnvHttpProxyAgent({ requestTls: { ca: CA } }));
      handler = new UndiciHttpHandler({ dispatcher, logger: quietLogger });
      await exercise(handler, origin);
      expectAllThroughProxy(proxy, origin);
    });

    it("setGlobalDispatcher(new ProxyAgent(...)) and no dispatcher option: GETs and a 2 MiB PutObject", async () => {
      await start();
      const u = lib as typeof undici7;
      await withGlobalRestored(async () => {
        const global = new u.ProxyAgent({ uri: proxy.url, requestTls: { ca: CA } });
        u.setGlobalDispatcher(global);
        handler = new UndiciHttpHandler({ logger: quietLogger });
        await exercise(handler, origin);
        expectAllThroughProxy(proxy, origin);
        // destroy() leaves a global dispatcher alone: it is shared.
        handler.destroy();
        handler = undefined;
        const again = new UndiciHttpHandler({ logger: quietLogger });
        const { response } = await again.handle(getRequest(origin, "/bucket/after-destroy"));
        expect(await readText(response.body)).toBe("hello through the proxy");
        again.destroy();
        await global.close();
      });
      expectAllThroughProxy(proxy, origin);
    });
  });
}

describe("agents that make their own connections are refused at construction", () => {
  it("httpsAgent: new HttpsProxyAgent(...) is a one-line TypeError naming the option and pointing to ProxyAgent", () => {
    const agent = new HttpsProxyAgent("http://127.0.0.1:3128");
    let error: unknown;
    try {
      new UndiciHttpHandler({ httpsAgent: agent as any });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(TypeError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    expect(message).toMatch(/^@sockeye\/undici-http-handler - invalid option httpsAgent: HttpsProxyAgent with its own/);
    expect(message).toContain("pass undici's ProxyAgent or EnvHttpProxyAgent as dispatcher");
    agent.destroy();
  });

  it("the same for httpAgent and for updateHttpClientConfig", () => {
    const proxyAgent = new HttpsProxyAgent("http://127.0.0.1:3128");
    expect(() => new UndiciHttpHandler({ httpAgent: proxyAgent as any })).toThrow(
      /invalid option httpAgent: HttpsProxyAgent/
    );
    const h = new UndiciHttpHandler({});
    expect(() => h.updateHttpClientConfig("httpsAgent", proxyAgent)).toThrow(/invalid option httpsAgent/);
    h.destroy();
    proxyAgent.destroy();
  });

  it("agentkeepalive is accepted (its createConnection is Node's own, with socket counting): its options apply and its idle settings are named as ignored", async () => {
    const keepalive = new agentkeepalive.HttpsAgent({ maxSockets: 3, freeSocketTimeout: 5000, ca: CA } as any);
    const warn = vi.fn();
    const h = new UndiciHttpHandler({ httpsAgent: keepalive as any, logger: { ...console, warn } as any });
    const origin = await startS3Origin();
    try {
      const { response } = await h.handle(
        new HttpRequest({
          protocol: "https:",
          hostname: "127.0.0.1",
          port: origin.port,
          method: "GET",
          path: "/bucket/a",
          headers: { host: `127.0.0.1:${origin.port}` },
        })
      );
      for await (const _chunk of response.body as AsyncIterable<unknown>);
      expect(response.statusCode).toBe(200);
      expect(origin.connectionPorts).toHaveLength(1);
      // maxSockets and the CA were read from the agent; the request went to the origin directly, as the agent would.
      expect(h.getPoolStats().origins[0]?.maxSockets).toBe(3);
      // One line, naming only the value the caller set (not the timeout agentkeepalive derived from it, nor its
      // socketActiveTTL default).
      expect(warn.mock.calls).toEqual([
        [
          "@sockeye/undici-http-handler:WARN - agent options without an undici equivalent are ignored: httpsAgent.freeSocketTimeout=5000 (agentkeepalive's idle timeout: use idleSocketTimeout).",
        ],
      ]);
    } finally {
      h.destroy();
      keepalive.destroy();
      await origin.close();
    }
  });

  it("agentkeepalive, http.Agent and https.Agent built with defaults (as users migrating from NodeHttpHandler pass them): no warning", async () => {
    const origin = await startS3Origin();
    const agents: [string, { destroy(): void }, { destroy(): void }][] = [
      [
        "agentkeepalive",
        new agentkeepalive({ maxSockets: 3 }),
        new agentkeepalive.HttpsAgent({ maxSockets: 3, ca: CA } as never),
      ],
      [
        "node:http(s)",
        new http.Agent({ keepAlive: true, maxSockets: 3 }),
        new https.Agent({ keepAlive: true, ca: CA }),
      ],
    ];
    try {
      for (const [kind, httpAgent, httpsAgent] of agents) {
        const warn = vi.fn();
        const h = new UndiciHttpHandler({
          httpAgent: httpAgent as never,
          httpsAgent: httpsAgent as never,
          logger: { ...quietLogger, warn },
        });
        try {
          const { response } = await h.handle(
            new HttpRequest({
              protocol: "https:",
              hostname: "127.0.0.1",
              port: origin.port,
              method: "GET",
              path: "/bucket/a",
              headers: { host: `127.0.0.1:${origin.port}` },
            })
          );
          for await (const _chunk of response.body as AsyncIterable<unknown>);
          expect({ kind, status: response.statusCode, warnings: warn.mock.calls }).toEqual({
            kind,
            status: 200,
            warnings: [],
          });
        } finally {
          h.destroy();
        }
      }
    } finally {
      for (const [, a, b] of agents) {
        a.destroy();
        b.destroy();
      }
      await origin.close();
    }
  });
});

describe("the global dispatcher rule (undici 7)", () => {
  let origin: S3Origin;
  beforeAll(async () => {
    origin = await startS3Origin();
  });
  afterAll(async () => {
    await origin.close();
  });

  it("undici's default Agent is not followed: the handler's own Agent serves (maxSockets 50, connection counters)", async () => {
    await withGlobalRestored(async () => {
      undici7.setGlobalDispatcher(new undici7.Agent());
      const h = new UndiciHttpHandler({ httpsAgent: { ca: CA } });
      const { response } = await h.handle(getRequest(origin, "/x"));
      await readText(response.body);
      expect(h.getPoolStats().origins[0]).toMatchObject({ maxSockets: 50 });
      expect(h.getPoolStats().origins[0].sockets.created).toBe(1);
      h.destroy();
    });
  });

  it("a user Agent with options (the CA only there) and a composed Agent are followed; so is a MockAgent", async () => {
    await withGlobalRestored(async () => {
      const withCa = new undici7.Agent({ connect: { ca: CA } });
      undici7.setGlobalDispatcher(withCa);
      const h = new UndiciHttpHandler({ logger: quietLogger });
      const first = await h.handle(getRequest(origin, "/with-ca"));
      expect(await readText(first.response.body)).toBe("hello through the proxy");
      // Changed after the first request: followed from the next one on.
      const seen: string[] = [];
      const composed = new undici7.Agent({ connect: { ca: CA } }).compose((dispatch) => (opts, handler) => {
        seen.push(String(opts.path));
        return dispatch(opts, handler);
      });
      undici7.setGlobalDispatcher(composed);
      await readText((await h.handle(getRequest(origin, "/composed"))).response.body);
      expect(seen).toEqual(["/composed"]);
      const mock = new undici7.MockAgent();
      mock.disableNetConnect();
      mock.get(origin.url).intercept({ path: "/mocked", method: "GET" }).reply(201, "from the mock");
      undici7.setGlobalDispatcher(mock);
      const mocked = await h.handle(getRequest(origin, "/mocked"));
      expect(mocked.response.statusCode).toBe(201);
      expect(await readText(mocked.response.body)).toBe("from the mock");
      h.destroy();
      // Not destroyed by the handler: still usable.
      expect((withCa as unknown as { destroyed: boolean }).destroyed).toBe(false);
      await Promise.all([withCa.close(), composed.close(), mock.close()]);
    });
    expect(origin.requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/with-ca", "/composed"]));
    expect(origin.requests.some((r) => r.path === "/mocked")).toBe(false);
  });

  it("agent options next to a followed global dispatcher do not apply to it: one warning says so", async () => {
    await withGlobalRestored(async () => {
      const global = new undici7.Agent({ connect: { ca: CA } });
      undici7.setGlobalDispatcher(global);
      const warnings: string[] = [];
      const h = new UndiciHttpHandler({
        httpsAgent: { ca: CA, maxSockets: 7 },
        logger: { ...quietLogger, warn: (m: string) => warnings.push(m) },
      });
      for (let i = 0; i < 2; i++) await readText((await h.handle(getRequest(origin, "/warned"))).response.body);
      expect(warnings.filter((w) => w.includes("global undici dispatcher"))).toHaveLength(1);
      expect(warnings[0]).toContain("httpAgent / httpsAgent options (maxSockets, TLS) do not apply to it");
      expect(h.getPoolStats().origins[0].maxSockets).toBeNull();
      h.destroy();
      await global.close();
    });
  });

  it("a dispatcher option wins over the global dispatcher (an instance, and Agent options)", async () => {
    await withGlobalRestored(async () => {
      const mock = new undici7.MockAgent();
      mock.disableNetConnect();
      undici7.setGlobalDispatcher(mock);
      for (const dispatcher of [new undici7.Agent({ connect: { ca: CA } }), { connect: { ca: CA } }]) {
        const h = new UndiciHttpHandler({ dispatcher });
        const { response } = await h.handle(getRequest(origin, "/option-wins"));
        expect(await readText(response.body)).toBe("hello through the proxy");
        h.destroy();
      }
      await mock.close();
    });
  });
});
