/**
 * NodeHttp2Handler against real loopback HTTP/2 servers (TLS, port 0): requests and bodies, session pooling (peer
 * SETTINGS, the per-origin session bound and its queue, isolated sessions), aborts, timeouts, faults (RST_STREAM,
 * GOAWAY before and during a body, a server dying with streams open, a bad frame, a server that never finishes the
 * handshake, a refused connection), duplex event streams, telemetry, and leaks: after each scenario every `handle()`
 * has settled, nothing is in flight, and the next request works on a fresh session where the old one died.
 */
import { NodeHttp2Handler as UpstreamNodeHttp2Handler } from "@smithy/node-http-handler";
import { HttpRequest } from "@smithy/protocol-http";
import { CHANNEL_NAMES, type PoolEvent } from "@sockeye/pool-monitor";
import { createHook } from "node:async_hooks";
import diagnosticsChannel from "node:diagnostics_channel";
import { PassThrough, Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NodeHttp2Handler, type NodeHttp2HandlerOptions } from "../../src/index";
import {
  CA,
  type H2TestServer,
  outcome,
  readBody,
  startH2Server,
  startRawH2cServer,
  startSilentTcp,
  waitFor,
} from "./h2-servers";

const handlers: NodeHttp2Handler[] = [];
function handler(options: NodeHttp2HandlerOptions = {}): NodeHttp2Handler {
  const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA }, ...options });
  handlers.push(h);
  return h;
}

function req(port: number, path: string, init: Partial<ConstructorParameters<typeof HttpRequest>[0]> = {}) {
  const [pathname, search] = path.split("?");
  const query: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(search ?? "")) query[k] = v;
  return new HttpRequest({
    protocol: "https:",
    hostname: "localhost",
    port,
    method: "GET",
    path: pathname,
    query,
    headers: {},
    ...init,
  });
}

let server: H2TestServer;
beforeAll(async () => {
  server = await startH2Server();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  for (const h of handlers.splice(0)) h.destroy();
});

function inFlight(h: NodeHttp2Handler): number {
  return h.getPoolStats().totals.inFlight;
}

describe("requests and bodies", () => {
  it("sends method, path, query, fragment-free path and headers; maps status, headers and the body stream", async () => {
    const h = handler();
    const { response } = await h.handle(
      req(server.port, "/echo?a=1&b=two", { method: "POST", headers: { "x-test": "yes" }, body: "hello" })
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers["x-server"]).toBe("h2");
    expect(response.headers[":status"]).toBe(200 as unknown as string);
    const echoed = JSON.parse(await readBody(response.body));
    expect(echoed).toMatchObject({ method: "POST", path: "/echo?a=1&b=two", body: "hello" });
    expect(echoed.headers["x-test"]).toBe("yes");
  });

  it.each([
    ["string", "text-body", "text-body"],
    ["Buffer", Buffer.from("buf-body"), "buf-body"],
    ["empty Buffer", Buffer.alloc(0), ""],
    ["Uint8Array", new Uint8Array([104, 105]), "hi"],
    ["Readable", Readable.from([Buffer.from("a"), Buffer.from("b")]), "ab"],
    ["no body", undefined, ""],
  ])("request body: %s", async (_name, body, expected) => {
    const h = handler();
    const { response } = await h.handle(req(server.port, "/echo", { method: "PUT", body }));
    expect(JSON.parse(await readBody(response.body)).body).toBe(expected);
  });

  it("joins repeated response headers with ',' and streams large bodies", async () => {
    const h = handler();
    const { response } = await h.handle(req(server.port, "/repeat-headers"));
    expect(response.headers["set-cookie"]).toBe("a=1,b=2");
    await readBody(response.body);
    const large = await h.handle(req(server.port, "/large?bytes=300000"));
    expect((await readBody(large.response.body)).length).toBe(300_000);
  });

  it("duplex event stream: the response streams while the request body is still being written", async () => {
    const h = handler();
    const body = new PassThrough();
    body.write("one");
    const { response } = await h.handle(req(server.port, "/duplex", { method: "POST", body }), {
      isEventStream: true,
    } as never);
    expect(response.statusCode).toBe(200);
    const chunks: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      response.body.on("data", (c: Buffer) => {
        chunks.push(c.toString());
        if (chunks.join("").includes("echo:one;") && !chunks.join("").includes("two")) body.end("two");
      });
      response.body.on("end", () => resolve());
      response.body.on("error", reject);
    });
    await done;
    expect(chunks.join("")).toBe("echo:one;echo:two;done");
    await waitFor(() => inFlight(h) === 0);
  });
});

describe("session pooling", () => {
  it("shares one session across concurrent streams", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          h.handle(req(s.port, `/echo?i=${i}`)).then((r) => readBody(r.response.body))
        )
      );
      expect(results).toHaveLength(20);
      expect(s.sessionsAccepted).toBe(1);
      expect(h.getPoolStats().origins[0].http2?.sessions[0].streams).toBe(20);
    } finally {
      await s.close();
    }
  });

  it("honours the peer's maxConcurrentStreams and queues beyond maxSessionsPerOrigin", async () => {
    const s = await startH2Server({ settings: { maxConcurrentStreams: 2 } });
    try {
      const h = handler({ maxSessionsPerOrigin: 1 });
      let maxOpen = 0;
      let maxQueued = 0;
      const watcher = setInterval(() => {
        maxOpen = Math.max(maxOpen, s.openStreams);
        maxQueued = Math.max(maxQueued, h.getPoolStats().totals.queued);
      }, 2);
      const all = Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          h.handle(req(s.port, `/delay?ms=20&i=${i}`)).then((r) => readBody(r.response.body))
        )
      );
      await waitFor(
        () => h.getPoolStats().totals.queued > 0 && h.getPoolStats().origins[0].http2?.peerMaxConcurrentStreams === 2
      );
      const stats = h.getPoolStats().origins[0];
      expect(stats.http2?.peerMaxConcurrentStreams).toBe(2);
      expect(stats.http2?.streamsWaiting).toBeGreaterThan(0);
      await all;
      clearInterval(watcher);
      expect(maxOpen).toBeLessThanOrEqual(2);
      expect(maxQueued).toBeGreaterThan(0);
      expect(s.sessionsAccepted).toBe(1);
      expect(h.getPoolStats().totals.queued).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("opens more sessions up to maxSessionsPerOrigin when every session is at its stream limit", async () => {
    const s = await startH2Server({ settings: { maxConcurrentStreams: 1 } });
    try {
      const h = handler({ maxSessionsPerOrigin: 3 });
      await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          h.handle(req(s.port, `/delay?ms=10&i=${i}`)).then((r) => readBody(r.response.body))
        )
      );
      expect(s.sessionsAccepted).toBeLessThanOrEqual(3);
      expect(s.sessionsAccepted).toBeGreaterThanOrEqual(2);
    } finally {
      await s.close();
    }
  });

  it("isolated sessions (isEventStream, disableConcurrentStreams) are closed when their stream ends", async () => {
    const s = await startH2Server();
    try {
      const h = handler({ disableConcurrentStreams: true });
      for (let i = 0; i < 3; i++) {
        const { response } = await h.handle(req(s.port, "/echo"));
        await readBody(response.body);
      }
      expect(s.sessionsAccepted).toBe(3);
      await waitFor(() => s.sessionsOpen === 0);
      const stats = h.getPoolStats().origins[0];
      expect(stats.http2?.closed.local).toBe(3);
      expect(stats.http2?.isolatedSessionsOpen).toBe(0);
      const pooled = handler();
      await readBody((await pooled.handle(req(s.port, "/echo"))).response.body);
      const ev = await pooled.handle(req(s.port, "/echo"), { isEventStream: true } as never);
      await readBody(ev.response.body);
      expect(s.sessionsAccepted).toBe(5);
      await waitFor(() => s.sessionsOpen === 1);
    } finally {
      await s.close();
    }
  });
});

describe("isolated sessions are bounded (disableConcurrentStreams), event streams never wait", () => {
  it("beyond maxIsolatedSessionsPerOrigin requests queue (counted as queued) and all complete", async () => {
    const s = await startH2Server({ tls: false });
    try {
      const h = new NodeHttp2Handler({ disableConcurrentStreams: true, maxIsolatedSessionsPerOrigin: 5 });
      handlers.push(h);
      let maxIsolated = 0;
      let maxQueued = 0;
      const sample = () => {
        const stats = h.getPoolStats();
        maxIsolated = Math.max(maxIsolated, stats.origins[0]?.http2?.isolatedSessionsOpen ?? 0);
        maxQueued = Math.max(maxQueued, stats.totals.queued);
      };
      const watcher = setInterval(sample, 1);
      const all = Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          h
            .handle(req(s.port, `/delay?ms=5&i=${i}`, { protocol: "http:" }))
            .then((r) => readBody(r.response.body))
            .then(sample)
        )
      );
      await waitFor(() => h.getPoolStats().totals.queued > 0);
      expect(h.getPoolStats().totals.queued).toBe(35);
      expect(h.getPoolStats().origins[0].http2?.streamsWaiting).toBe(35);
      await all;
      clearInterval(watcher);
      expect(maxIsolated).toBeLessThanOrEqual(5);
      expect(maxQueued).toBe(35);
      expect(s.sessionsAccepted).toBe(40);
      await waitFor(() => inFlight(h) === 0 && h.getPoolStats().origins[0].http2?.isolatedSessionsOpen === 0);
      expect(h.getPoolStats().origins[0].requests.completed).toBe(40);
      // Upstream opens one session per request with no bound: the same 40 requests had 40 sessions at once.
    } finally {
      await s.close();
    }
  });

  it("event streams are neither queued nor counted: they open even with the bound reached by long-lived ones", async () => {
    const s = await startH2Server({ tls: false });
    try {
      const h = new NodeHttp2Handler({ disableConcurrentStreams: true, maxIsolatedSessionsPerOrigin: 1 });
      handlers.push(h);
      const controller = new AbortController();
      const events = [1, 2, 3].map(() =>
        outcome(
          h.handle(req(s.port, "/never", { protocol: "http:" }), {
            isEventStream: true,
            abortSignal: controller.signal,
          } as never)
        )
      );
      await waitFor(() => s.openStreams === 3);
      expect(h.getPoolStats().totals.queued).toBe(0);
      // Plain requests share the one bounded place, one after the other, beside the three event streams.
      const plain = await Promise.all(
        [1, 2].map(() => h.handle(req(s.port, "/echo", { protocol: "http:" })).then((r) => readBody(r.response.body)))
      );
      expect(plain).toHaveLength(2);
      controller.abort();
      for (const r of await Promise.all(events)) expect(r.ok === false && r.error.name).toBe("AbortError");
      await waitFor(() => inFlight(h) === 0);
      expect(h.getPoolStats().origins[0].http2?.isolatedSessionsOpen).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("a refused origin fails the waiting isolated requests with the connection error (no connect storm)", async () => {
    const s = await startH2Server({ tls: false });
    const port = s.port;
    await s.close();
    const h = new NodeHttp2Handler({ disableConcurrentStreams: true, maxIsolatedSessionsPerOrigin: 2 });
    handlers.push(h);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => outcome(h.handle(req(port, "/echo", { protocol: "http:" }))))
    );
    for (const r of results) expect(r.ok === false && (r.error as Error & { code?: string }).code).toBe("ECONNREFUSED");
    expect(h.getPoolStats().origins[0].http2?.sessionsCreated).toBe(2);
    expect(inFlight(h)).toBe(0);
  });
});

describe("aborts and timeouts", () => {
  it("rejects an already-aborted signal without opening a session", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const controller = new AbortController();
      controller.abort(new Error("why"));
      const result = await outcome(h.handle(req(s.port, "/echo"), { abortSignal: controller.signal as never }));
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.name).toBe("AbortError");
        expect((result.error.cause as Error).message).toBe("why");
      }
      expect(s.sessionsAccepted).toBe(0);
    } finally {
      await s.close();
    }
  });

  it("aborts during a stream and while queued; the session stays usable", async () => {
    const s = await startH2Server({ settings: { maxConcurrentStreams: 1 } });
    try {
      const h = handler({ maxSessionsPerOrigin: 1 });
      const a = new AbortController();
      const b = new AbortController();
      const first = h.handle(req(s.port, "/never"), { abortSignal: a.signal as never });
      const queued = h.handle(req(s.port, "/never"), { abortSignal: b.signal as never });
      await waitFor(() => s.openStreams === 1 && h.getPoolStats().totals.queued === 1);
      b.abort();
      const q = await outcome(queued);
      expect(q.ok === false && q.error.name).toBe("AbortError");
      expect(h.getPoolStats().totals.queued).toBe(0);
      a.abort();
      const f = await outcome(first);
      expect(f.ok === false && f.error.name).toBe("AbortError");
      await waitFor(() => s.openStreams === 0 && inFlight(h) === 0);
      const next = await h.handle(req(s.port, "/echo"));
      expect(next.response.statusCode).toBe(200);
      await readBody(next.response.body);
      expect(s.sessionsAccepted).toBe(1);
      await waitFor(() => inFlight(h) === 0);
      expect(h.getPoolStats().origins[0].requests).toMatchObject({ aborted: 2, completed: 1 });
    } finally {
      await s.close();
    }
  });

  it("requestTimeout fails a stream that never answers with upstream's TimeoutError; the silent session is retired", async () => {
    const s = await startH2Server();
    try {
      const h = handler({ requestTimeout: 300 });
      const result = await outcome(h.handle(req(s.port, "/never")));
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error.name).toBe("TimeoutError");
        expect(result.error.message).toBe("Stream timed out because of no activity for 300 ms");
      }
      await waitFor(() => s.openStreams === 0 && s.sessionsOpen === 0);
      const next = await h.handle(req(s.port, "/echo"));
      await readBody(next.response.body);
      expect(s.sessionsAccepted).toBe(2);
      await waitFor(() => inFlight(h) === 0);
      const stats = h.getPoolStats().origins[0];
      expect(stats.requests.timedOut).toBe(1);
      expect(stats.http2?.closed.idle_timeout).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("requestTimeout is per stream, side by side with upstream: a silent stream beside busy siblings fails at its limit", async () => {
    const s = await startH2Server();
    try {
      for (const kind of ["upstream", "sockeye"] as const) {
        const options = { nodeHttp2ConnectOptions: { ca: CA }, requestTimeout: 200 };
        const h = kind === "upstream" ? new UpstreamNodeHttp2Handler(options) : handler(options);
        const accepted = s.sessionsAccepted;
        // Siblings stream a byte every 20 ms for ~600 ms, on the same session as the silent stream.
        let siblingsDone = 0;
        const siblings = [1, 2, 3].map((i) =>
          h.handle(req(s.port, `/trickle?n=30&ms=20&i=${i}`)).then(async (r) => {
            const text = await readBody(r.response.body);
            siblingsDone++;
            return text;
          })
        );
        const silent = await outcome(h.handle(req(s.port, "/never")));
        expect(silent.ok).toBe(false);
        if (!silent.ok) {
          expect(silent.error.name).toBe("TimeoutError");
          expect(silent.error.message).toBe("Stream timed out because of no activity for 200 ms");
        }
        // It failed while its siblings were still streaming on the same session (Sockeye used to wait for them).
        expect(siblingsDone).toBe(0);
        expect((await Promise.all(siblings)).every((t) => t.length === 30)).toBe(true);
        expect(s.sessionsAccepted).toBe(accepted + 1);
        if (h instanceof NodeHttp2Handler) {
          await waitFor(() => inFlight(h) === 0);
          const stats = h.getPoolStats().origins[0];
          expect(stats.requests).toMatchObject({ timedOut: 1, completed: 3 });
          // The session was busy: it is not retired.
          expect(stats.http2?.closed.idle_timeout).toBe(0);
        }
        h.destroy();
      }
    } finally {
      await s.close();
    }
  });

  it("connectionTimeout bounds TCP + TLS + SETTINGS (a server that never completes the handshake)", async () => {
    const silent = await startSilentTcp();
    try {
      const h = handler({ connectionTimeout: 300 });
      const results = await Promise.all([1, 2, 3].map(() => outcome(h.handle(req(silent.port, "/echo")))));
      for (const r of results) {
        expect(r.ok).toBe(false);
        if (!r.ok) {
          expect(r.error.name).toBe("TimeoutError");
          expect((r.error as Error & { code?: string }).code).toBe("ETIMEDOUT");
          expect(r.error.message).toContain("connectionTimeout=300 ms");
          expect(r.error.message).toContain(`https://localhost:${silent.port}`);
        }
      }
      const stats = h.getPoolStats().origins[0];
      expect(stats.http2?.closed.connect_timeout).toBe(1);
      expect(stats.inFlight).toBe(0);
    } finally {
      await silent.close();
    }
  });

  it("connectionTimeout also covers a cleartext server that never sends SETTINGS", async () => {
    const raw = await startRawH2cServer("silent");
    try {
      const h = handler({ connectionTimeout: 250 });
      const r = await outcome(h.handle(req(raw.port, "/x", { protocol: "http:" })));
      expect(r.ok === false && r.error.name).toBe("TimeoutError");
    } finally {
      await raw.close();
    }
  });
});

describe("faults: every handle() settles, nothing leaks, the next request gets a fresh session", () => {
  async function expectHealthyAfter(h: NodeHttp2Handler, s: H2TestServer, sessionsBefore: number) {
    await waitFor(() => inFlight(h) === 0);
    const next = await h.handle(req(s.port, "/echo"));
    expect(next.response.statusCode).toBe(200);
    await readBody(next.response.body);
    expect(s.sessionsAccepted).toBe(sessionsBefore + 1);
  }

  it("RST_STREAM before the response rejects; RST_STREAM mid-body errors the body", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const r = await outcome(h.handle(req(s.port, "/rst")));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.message).toMatch(/NGHTTP2_INTERNAL_ERROR|result code 2/);
      const mid = await h.handle(req(s.port, "/rst-mid-body"));
      const body = await outcome(readBody(mid.response.body));
      expect(!body.ok && body.error).toMatchObject({ code: "ERR_HTTP2_STREAM_ERROR" });
      await waitFor(() => inFlight(h) === 0);
      // A reset stream does not kill the session.
      const next = await h.handle(req(s.port, "/echo"));
      await readBody(next.response.body);
      expect(s.sessionsAccepted).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("GOAWAY before the response rejects every stream on the session; a fresh session follows", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const results = await Promise.all([
        outcome(h.handle(req(s.port, "/never"))),
        outcome(h.handle(req(s.port, "/goaway"))),
      ]);
      expect(results.every((r) => !r.ok)).toBe(true);
      await waitFor(() => h.getPoolStats().origins[0].http2!.closed.goaway === 1);
      expect(h.getPoolStats().origins[0].http2!.goawayCodes["2"]).toBe(1);
      await expectHealthyAfter(h, s, 1);
    } finally {
      await s.close();
    }
  });

  it("GOAWAY mid-body errors the body; a session closed mid-body (GOAWAY NO_ERROR) too; a fresh session follows", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const { response } = await h.handle(req(s.port, "/goaway-mid-body"));
      const body = await outcome(readBody(response.body));
      expect(!body.ok && body.error).toMatchObject({ code: "ERR_HTTP2_SESSION_ERROR" });
      await expectHealthyAfter(h, s, 1);
      // Node ends this one as if it were complete; Sockeye errors it so a truncated body is never taken for whole.
      const cut = await h.handle(req(s.port, "/close-mid-body"));
      const truncated = await outcome(readBody(cut.response.body));
      expect(!truncated.ok && truncated.error.message).toBe(
        "HTTP/2 stream is abnormally aborted in mid-communication with result code 8."
      );
      expect(h.getPoolStats().origins[0].requests.failed).toBe(2);
      await expectHealthyAfter(h, s, 2);
    } finally {
      await s.close();
    }
  });

  it("the server dies with streams open: all settle with errors", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const pending = [1, 2, 3, 4].map(() => outcome(h.handle(req(s.port, "/never"))));
      await waitFor(() => s.openStreams === 4);
      const die = outcome(h.handle(req(s.port, "/die")));
      const results = await Promise.all([...pending, die]);
      expect(results.every((r) => !r.ok)).toBe(true);
      for (const r of results) if (!r.ok) expect(r.error).toBeInstanceOf(Error);
      await expectHealthyAfter(h, s, 1);
    } finally {
      await s.close();
    }
  });

  // Node 20's client answers a connection PROTOCOL_ERROR with GOAWAY and then reports nothing (no event, the stream
  // stays open): without requestTimeout both upstream and Sockeye wait for the server to close the connection, and
  // with it the silent session is retired. Node 22+ reports ERR_HTTP2_ERROR on the stream and the session at once.
  const nodeReportsProtocolErrors = Number(process.versions.node.split(".")[0]) >= 22;

  it("a bad frame (DATA on stream 0): the request fails and the next request gets a fresh session", async () => {
    const raw = await startRawH2cServer("bad-frame");
    try {
      const h = handler({ requestTimeout: 300 });
      const expected = nodeReportsProtocolErrors ? { code: "ERR_HTTP2_ERROR" } : { name: "TimeoutError" };
      const first = await outcome(h.handle(req(raw.port, "/x", { protocol: "http:" })));
      expect(first.ok).toBe(false);
      expect(!first.ok && first.error).toMatchObject(expected);
      const second = await outcome(h.handle(req(raw.port, "/x", { protocol: "http:" })));
      expect(!second.ok && second.error).toMatchObject(expected);
      expect(raw.connections).toBe(2);
      await waitFor(() => inFlight(h) === 0);
      expect(h.getPoolStats().origins[0].http2?.sessionsCreated).toBe(2);
    } finally {
      await raw.close();
    }
  });

  it.runIf(nodeReportsProtocolErrors)(
    "a bad frame without requestTimeout still settles (Node 22+ reports it)",
    async () => {
      const raw = await startRawH2cServer("bad-frame");
      try {
        const h = handler();
        const first = await outcome(h.handle(req(raw.port, "/x", { protocol: "http:" })));
        expect(!first.ok && first.error).toMatchObject({ code: "ERR_HTTP2_ERROR" });
        await waitFor(() => inFlight(h) === 0);
        expect(h.getPoolStats().origins[0].http2?.sessionsCreated).toBe(1);
      } finally {
        await raw.close();
      }
    }
  );

  it("a refused connection rejects every queued stream (no reconnect loop)", async () => {
    const s = await startH2Server();
    const port = s.port;
    await s.close();
    const h = handler();
    const results = await Promise.all([1, 2, 3].map(() => outcome(h.handle(req(port, "/echo")))));
    for (const r of results) expect(r.ok === false && (r.error as Error & { code?: string }).code).toBe("ECONNREFUSED");
    const stats = h.getPoolStats().origins[0];
    expect(stats.http2?.sessionsCreated).toBe(1);
    expect(stats.http2?.closed.connect_error).toBe(1);
    expect(stats.inFlight).toBe(0);
  });
});

describe("timers, telemetry, lifecycle", () => {
  it("arms no native timer per request or per session: async_hooks counts Timeout objects, upstream for scale", async () => {
    const s = await startH2Server();
    try {
      const counts: Record<string, number> = {};
      for (const kind of ["upstream", "sockeye"] as const) {
        const options = {
          nodeHttp2ConnectOptions: { ca: CA },
          requestTimeout: 5000,
          sessionTimeout: 10_000,
          ...(kind === "sockeye" ? { connectionTimeout: 5000 } : {}),
        };
        const h = kind === "upstream" ? new UpstreamNodeHttp2Handler(options) : handler(options);
        // Warm-up: the session (and the test server's TLS handshake timer) exist before counting.
        await readBody((await h.handle(req(s.port, "/echo"))).response.body);
        let timeouts = 0;
        const hook = createHook({
          init(_id, type) {
            if (type === "Timeout") timeouts++;
          },
        });
        hook.enable();
        try {
          await Promise.all(
            Array.from({ length: 50 }, () => h.handle(req(s.port, "/echo")).then((r) => readBody(r.response.body)))
          );
        } finally {
          hook.disable();
        }
        counts[kind] = timeouts;
        h.destroy();
      }
      // Upstream: a stream timer per request; Sockeye: at most the one shared interval (re)created.
      expect(counts.upstream).toBeGreaterThanOrEqual(50);
      expect(counts.sockeye).toBeLessThanOrEqual(1);
    } finally {
      await s.close();
    }
  });

  it("sessionTimeout destroys an idle session (reason idle_timeout); the next request opens a new one", async () => {
    const s = await startH2Server();
    try {
      const h = handler({ sessionTimeout: 250 });
      await readBody((await h.handle(req(s.port, "/echo"))).response.body);
      await waitFor(() => h.getPoolStats().origins[0].http2?.closed.idle_timeout === 1);
      await readBody((await h.handle(req(s.port, "/echo"))).response.body);
      expect(s.sessionsAccepted).toBe(2);
    } finally {
      await s.close();
    }
  });

  it("publishes connection events on the sockeye diagnostics channels and to subscribers; origins only", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const seen: PoolEvent[] = [];
      const fromChannel: unknown[] = [];
      const onCreated = (message: unknown) => fromChannel.push(message);
      diagnosticsChannel.subscribe(CHANNEL_NAMES.connectionCreated, onCreated);
      const unsubscribe = h.poolMonitor!.subscribe((e) => seen.push(e));
      await readBody((await h.handle(req(s.port, "/echo?secret=1"))).response.body);
      h.destroy();
      await waitFor(() => seen.some((e) => e.type === "connection:closed"));
      unsubscribe();
      diagnosticsChannel.unsubscribe(CHANNEL_NAMES.connectionCreated, onCreated);
      const created = seen.find((e) => e.type === "connection:created");
      expect(created).toMatchObject({ origin: `https://localhost:${s.port}` });
      expect(fromChannel).toHaveLength(1);
      expect(seen.find((e) => e.type === "connection:closed")).toMatchObject({ reason: "local", requests: 1 });
      expect(JSON.stringify(seen)).not.toContain("secret");
      const stats = h.getPoolStats().origins[0];
      expect(stats.connectMs.count).toBe(1);
      expect(stats.tlsMs.count).toBe(1);
      expect(stats.requests.completed).toBe(1);
    } finally {
      await s.close();
    }
  });

  it("destroy() fails open streams and closes every session; the handler stays usable", async () => {
    const s = await startH2Server();
    try {
      const h = handler();
      const pending = outcome(h.handle(req(s.port, "/never")));
      await waitFor(() => s.openStreams === 1);
      h.destroy();
      const r = await pending;
      expect(r.ok).toBe(false);
      await waitFor(() => s.sessionsOpen === 0);
      await readBody((await h.handle(req(s.port, "/echo"))).response.body);
      expect(s.sessionsAccepted).toBe(2);
    } finally {
      await s.close();
    }
  });
});
