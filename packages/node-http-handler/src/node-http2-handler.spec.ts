/**
 * NodeHttp2Handler unit tests: public surface, option validation, config updates, and every deadline under fake
 * timers (an explicit `toFake` list: the scheduler's one timer, the session pool's `setImmediate`, the test server's
 * interval and the monotonic clock), with loopback sockets for the I/O the deadlines watch. No sleeps of guessed
 * length: fake time moves only through `vi.advanceTimersByTimeAsync`; `until` polls real I/O on the real timer.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { timing } from "@sockeye/pool-monitor/internal";
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startBlackHole } from "../test/black-hole.mock";
import { NodeHttp2Handler, NodeHttpHandler } from "./index";

const FIXTURES = join(__dirname, "..", "test", "fixtures");
const CA = readFileSync(join(FIXTURES, "localhost-cert.pem"));
const KEY = readFileSync(join(FIXTURES, "localhost-key.pem"));

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

function request(port: number, path = "/", protocol = "https:"): HttpRequest {
  return new HttpRequest({ protocol, hostname: "localhost", port, method: "GET", path, headers: {} });
}

/** The real `setTimeout`, captured before any test fakes it. */
const realSetTimeout = globalThis.setTimeout;

/** Real-time poll for loopback I/O to happen (on the real timer, whatever is faked). */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !predicate(); i++) await new Promise((r) => realSetTimeout(r, 5));
  if (!predicate()) throw new Error("condition not met");
}

/** Every native timer created went to the handler's one scheduler (none per stream or per session). */
function onlySchedulerTimers(spy: { mock: { calls: unknown[][] } }, h: NodeHttp2Handler): boolean {
  const scheduler = (h as any).pool.sharedScheduler;
  return spy.mock.calls.every((call) => call[2] === scheduler);
}

async function silentTcp(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    connections++;
    sockets.add(s);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      })
  );
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections };
}

/**
 * `/never` reads the body and never answers; `/ok` answers at once; `/large` answers 100 KB at once (enough for the
 * client to send WINDOW_UPDATE frames as it reads); `/held` answers and then writes only when the test calls
 * `write()`; `/refuse` resets the stream with REFUSED_STREAM before answering; `/trickle` answers, then writes "." on every (possibly fake) 50 ms interval tick until the client goes
 * away. `settings()` sends a SETTINGS frame on every server session (a control frame, no stream) and resolves once
 * the client acknowledged it. `tls: false`: cleartext h2c (its client socket counts every byte the session moves; over TLS the
 * counters miss some control frames).
 */
async function neverAnsweringH2({ tls = true } = {}): Promise<{
  port: number;
  streams: () => number;
  sessions: () => number;
  write: (chunk: string) => void;
  settings: () => Promise<void>;
}> {
  let streams = 0;
  let sessions = 0;
  const server = tls ? http2.createSecureServer({ key: KEY, cert: CA }) : http2.createServer();
  const sockets = new Set<net.Socket>();
  const serverSessions = new Set<http2.ServerHttp2Session>();
  const held = new Set<http2.ServerHttp2Stream>();
  server.on("connection", (s: net.Socket) => sockets.add(s));
  server.on("session", (session) => {
    sessions++;
    serverSessions.add(session);
    session.on("close", () => serverSessions.delete(session));
    session.on("error", () => {});
  });
  server.on("stream", (stream, headers) => {
    streams++;
    stream.on("error", () => {});
    stream.resume();
    if (headers[":path"] === "/ok") {
      stream.respond({ ":status": 200 });
      stream.end("ok");
    } else if (headers[":path"] === "/large") {
      stream.respond({ ":status": 200 });
      stream.end(Buffer.alloc(100_000, "x"));
    } else if (headers[":path"] === "/refuse") {
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    } else if (headers[":path"] === "/held") {
      stream.respond({ ":status": 200 });
      held.add(stream);
      stream.on("close", () => held.delete(stream));
    } else if (headers[":path"] === "/trickle") {
      stream.respond({ ":status": 200 });
      const timer = setInterval(() => {
        if (stream.destroyed) clearInterval(timer);
        else stream.write(".");
      }, 50);
      stream.on("close", () => clearInterval(timer));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      })
  );
  return {
    port: (server.address() as net.AddressInfo).port,
    streams: () => streams,
    sessions: () => sessions,
    write: (chunk) => {
      for (const stream of held) stream.write(chunk);
    },
    settings: () =>
      Promise.all(
        [...serverSessions].map(
          (session) => new Promise<void>((r) => session.settings({ maxHeaderListSize: 65_536 }, () => r()))
        )
      ).then(() => {}),
  };
}

/** The `ClientHttp2Session` of the handler's first pooled session (to see it destroyed the moment a deadline fires). */
function firstSession(h: NodeHttp2Handler): http2.ClientHttp2Session {
  const origin = (h as any).pool.origins.values().next().value;
  return origin.sessions[0].session;
}

/**
 * Holds every `timing.afterPoll` callback (work that waits for the next poll phase) until the test runs it, so a test can put real I/O (what a poll phase
 * reads) before the immediates, as the event loop does.
 */
function holdImmediates() {
  const held: (() => void)[] = [];
  vi.spyOn(timing, "afterPoll").mockImplementation((fn: () => void) => {
    held.push(fn);
    return undefined as never;
  });
  const turn = async () => {
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return {
    /** Runs held immediates, oldest first, until `done()` (those they hold back in turn stay held). */
    async runUntil(done: () => boolean): Promise<void> {
      await turn();
      while (!done() && held.length > 0) {
        held.shift()!();
        await turn();
      }
    },
    /** Runs every held immediate, and those they hold in turn. */
    async runAll(): Promise<void> {
      while (held.length > 0) {
        held.shift()!();
        await turn();
      }
    },
  };
}

function settled<T>(promise: Promise<T>): { done: boolean; error?: Error } {
  const state: { done: boolean; error?: Error } = { done: false };
  promise.then(
    () => {
      state.done = true;
    },
    (error) => {
      state.done = true;
      state.error = error;
    }
  );
  return state;
}

const FAKE: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: [
    "setTimeout",
    "clearTimeout",
    "setInterval",
    "clearInterval",
    "setImmediate",
    "clearImmediate",
    "performance",
  ],
};

describe("public surface", () => {
  it("create() returns any handler as is and builds one from options or nothing", () => {
    const other = { handle: async () => ({ response: {} }) };
    expect(NodeHttp2Handler.create(other as never)).toBe(other);
    expect(NodeHttp2Handler.create()).toBeInstanceOf(NodeHttp2Handler);
    expect(NodeHttp2Handler.create({ requestTimeout: 5 })).toBeInstanceOf(NodeHttp2Handler);
    expect(new NodeHttp2Handler().metadata).toEqual({ handlerProtocol: "h2" });
  });

  it("httpHandlerConfigs() is {} until the first handle(), then the options plus defaultSocketTimeout", async () => {
    const h = new NodeHttp2Handler({ requestTimeout: 1234, disableConcurrentStreams: true });
    expect(h.httpHandlerConfigs()).toEqual({});
    const ac = new AbortController();
    ac.abort();
    await expect(h.handle(request(1), { abortSignal: ac.signal as never })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(h.httpHandlerConfigs()).toEqual({
      requestTimeout: 1234,
      disableConcurrentStreams: true,
      defaultSocketTimeout: undefined,
    });
  });

  it("updateHttpClientConfig: plain keys and the default-socket-timeout symbol (an existing value wins)", async () => {
    const h = new NodeHttp2Handler({});
    h.updateHttpClientConfig("sessionTimeout", 99);
    h.updateHttpClientConfig(Symbol.for("@smithy/defaultSocketTimeout") as never, 5000);
    h.updateHttpClientConfig(Symbol.for("@smithy/defaultSocketTimeout") as never, 7000);
    const ac = new AbortController();
    ac.abort();
    await h.handle(request(1), { abortSignal: ac.signal as never }).catch(() => {});
    expect(h.httpHandlerConfigs()).toMatchObject({ sessionTimeout: 99, defaultSocketTimeout: 5000 });
  });

  it("updateHttpClientConfig: a bad value throws now and changes nothing (later handle() calls are not poisoned)", async () => {
    const h = new NodeHttp2Handler({ sessionTimeout: 50 });
    expect(() => h.updateHttpClientConfig("sessionTimeout", -1)).toThrow(/invalid option sessionTimeout: -1;/);
    expect(() => h.updateHttpClientConfig("maxConcurrentStreams", "many")).toThrow(
      /invalid option maxConcurrentStreams: "many";/
    );
    expect(() => h.updateHttpClientConfig("saturation", { windowSamples: 2 })).toThrow(
      /invalid option saturation\.windowSamples: 2;/
    );
    const ac = new AbortController();
    ac.abort();
    await expect(h.handle(request(1), { abortSignal: ac.signal as never })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(h.httpHandlerConfigs()).toMatchObject({ sessionTimeout: 50 });
    h.destroy();
  });

  it("updateHttpClientConfig('saturation', block): the block replaces the old one, omitted fields back to defaults", async () => {
    const h = new NodeHttp2Handler({ saturation: { windowSamples: 7, sampleIntervalMs: 500 } });
    h.updateHttpClientConfig("saturation", { windowSamples: 9 });
    const ac = new AbortController();
    ac.abort();
    await h.handle(request(1), { abortSignal: ac.signal as never }).catch(() => {});
    const options = (
      h.poolMonitor as unknown as { monitorOptions: { windowSamples: number; sampleIntervalMs: number } }
    ).monitorOptions;
    expect(options.windowSamples).toBe(9);
    expect(options.sampleIntervalMs).toBe(1000);
    h.destroy();
  });

  it("updateHttpClientConfig: a monitor option reaches the monitor at once, before the next handle() (as on HTTP/1.1)", () => {
    const h = new NodeHttp2Handler({});
    const monitor = h.poolMonitor as unknown as { monitorOptions: { windowSamples: number; onSaturation: unknown } };
    const onSaturation = () => {};
    h.updateHttpClientConfig("saturation", { windowSamples: 9 });
    h.updateHttpClientConfig("onSaturation", onSaturation);
    expect(monitor.monitorOptions.windowSamples).toBe(9);
    expect(monitor.monitorOptions.onSaturation).toBe(onSaturation);
    h.destroy();
  });

  it("a provider is called once; its bad value rejects handle() with the option named", async () => {
    const provider = vi.fn(async () => ({ requestTimeout: -1 }));
    const h = new NodeHttp2Handler(provider);
    await expect(h.handle(request(1))).rejects.toThrow(/invalid option requestTimeout: -1/);
    expect(provider).toHaveBeenCalledTimes(1);
  });
});

describe("option validation: a TypeError naming the option and the value", () => {
  it.each([
    [{ requestTimeout: -1 }, /invalid option requestTimeout: -1;/],
    [{ requestTimeout: "5s" }, /invalid option requestTimeout: "5s";/],
    [{ sessionTimeout: Number.NaN }, /invalid option sessionTimeout: NaN;/],
    [{ connectionTimeout: -5 }, /invalid option connectionTimeout: -5;/],
    [{ maxConcurrentStreams: -1 }, /invalid option maxConcurrentStreams: -1;/],
    [{ maxConcurrentStreams: 1.5 }, /invalid option maxConcurrentStreams: 1.5;/],
    [{ maxSessionsPerOrigin: 0 }, /invalid option maxSessionsPerOrigin: 0; expected an integer >= 1 or Infinity\.$/],
    [{ maxIsolatedSessionsPerOrigin: "2" }, /invalid option maxIsolatedSessionsPerOrigin: "2";/],
    [{ nodeHttp2ConnectOptions: [] }, /invalid option nodeHttp2ConnectOptions: an array; expected an object/],
    [{ disableConcurrentStreams: "yes" }, /invalid option disableConcurrentStreams: "yes";/],
    [{ nodeHttp2ConnectOptions: 5 }, /invalid option nodeHttp2ConnectOptions: 5;/],
    [{ telemetry: 1 }, /invalid option telemetry: 1;/],
    [{ socketMonitor: "bogus" }, /invalid option socketMonitor: "bogus"/],
    [{ onSaturation: "x" }, /invalid option onSaturation: "x";/],
  ])("%o", (options, message) => {
    expect(() => new NodeHttp2Handler(options as never)).toThrow(TypeError);
    expect(() => new NodeHttp2Handler(options as never)).toThrow(message);
  });

  it.each([
    { connectionTimeout: { ms: 5 } },
    { requestTimeout: [5] },
    { telemetry: "yes" },
    { onSaturation: 5 },
    { onRecovery: "x" },
    { socketMonitor: null },
  ])("the options it shares with NodeHttpHandler fail with NodeHttpHandler's one-line message: %o", (options) => {
    const messageOf = (make: () => unknown): string => {
      try {
        make();
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    const h1 = messageOf(() => new NodeHttpHandler(options as never).destroy());
    const h2 = messageOf(() => new NodeHttp2Handler(options as never).destroy());
    expect(h1).not.toBe("accepted");
    expect(h2).toBe(h1);
    expect(h2).not.toContain("\n");
  });

  it("accepts upstream's forms: 0 and undefined disable, numeric strings convert, Infinity sessions", () => {
    expect(
      () => new NodeHttp2Handler({ requestTimeout: 0, maxConcurrentStreams: 0, sessionTimeout: "100" as never })
    ).not.toThrow();
    expect(() => new NodeHttp2Handler({ maxSessionsPerOrigin: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});

describe("deadlines on the shared scheduler (fake timers)", () => {
  it("connectionTimeout: a session whose TLS never completes fails at the deadline, not before", async () => {
    const silent = await silentTcp();
    vi.useFakeTimers(FAKE);
    const setTimeoutSpy = vi.spyOn(timing, "setTimeout");
    const h = new NodeHttp2Handler({ connectionTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const state = settled(h.handle(request(silent.port)));
    await until(() => silent.connections() === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => state.done);
    expect(state.error?.name).toBe("TimeoutError");
    expect(state.error?.message).toContain("connectionTimeout=1000 ms");
    expect(onlySchedulerTimers(setTimeoutSpy, h)).toBe(true);
    expect(h.getPoolStats().origins[0].http2?.closed.connect_timeout).toBe(1);
  });

  it("connectionTimeout counts from handle(): the time http2.connect() itself takes (a TLS context built from the CA option) is inside the limit (#34)", async () => {
    const silent = await silentTcp();
    vi.useFakeTimers(FAKE);
    const connect = http2.connect;
    vi.spyOn(http2, "connect").mockImplementation(((...args: Parameters<typeof http2.connect>) => {
      const session = connect(...args);
      vi.advanceTimersByTime(50); // its synchronous work, on the fake clock
      return session;
    }) as typeof http2.connect);
    const h = new NodeHttp2Handler({ connectionTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const state = settled(h.handle(request(silent.port)));
    await until(() => silent.connections() === 1);
    await vi.advanceTimersByTimeAsync(949);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(state.done).toBe(true);
    expect(state.error?.message).toContain("connectionTimeout=1000 ms");
  });

  it("connectionTimeout: a session whose TCP connect never completes fails at the deadline too", async () => {
    const hole = await startBlackHole();
    cleanups.push(() => hole.close());
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ connectionTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const state = settled(h.handle(request(hole.port)));
    await vi.advanceTimersByTimeAsync(999);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => state.done);
    expect(state.error?.name).toBe("TimeoutError");
    expect(state.error?.message).toContain("connectionTimeout=1000 ms");
    const stats = h.getPoolStats().origins[0];
    expect(stats.http2?.closed.connect_timeout).toBe(1);
    expect(stats.http2?.sessionsOpen).toBe(0);
    expect(h.getPoolStats().totals.inFlight).toBe(0);
  });

  it("requestTimeout: a stream with no activity fails exactly at the limit after its last progress; the timer then lapses", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const setTimeoutSpy = vi.spyOn(timing, "setTimeout");
    const h = new NodeHttp2Handler({ requestTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const state = settled(h.handle(request(server.port, "/never")));
    await until(() => server.streams() === 1);
    // The stream's last progress (its request sent) happened at fake time 0: it times out at 1000, not before.
    await vi.advanceTimersByTimeAsync(999);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => state.done);
    expect(state.error?.name).toBe("TimeoutError");
    expect(state.error?.message).toBe("Stream timed out because of no activity for 1000 ms");
    expect(onlySchedulerTimers(setTimeoutSpy, h)).toBe(true);
    await until(() => h.getPoolStats().totals.inFlight === 0);
    await vi.advanceTimersByTimeAsync(2000);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("requestTimeout is per stream: a silent stream fails at its limit while a sibling on the same session streams", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ requestTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    // The sibling has no timeout of its own (per-call 0), so only the silent stream can time out.
    const sibling = await (async () => {
      const pending = h.handle(request(server.port, "/trickle"), { requestTimeout: 0 });
      await until(() => server.streams() === 1);
      await vi.advanceTimersByTimeAsync(0);
      return pending;
    })();
    let received = 0;
    sibling.response.body.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    const silent = settled(h.handle(request(server.port, "/never")));
    await until(() => server.streams() === 2);
    // Each 100 ms step: the server's (fake) interval writes to the sibling and real I/O delivers it; the silent
    // stream's deadline comes at exactly 1000 ms (the 10th step), the sibling's traffic notwithstanding.
    for (let step = 1; step <= 11; step++) {
      const before = received;
      await vi.advanceTimersByTimeAsync(100);
      await until(() => received > before);
      if (step <= 9) expect(silent.done).toBe(false);
    }
    await until(() => silent.done);
    expect(silent.error?.name).toBe("TimeoutError");
    expect(silent.error?.message).toBe("Stream timed out because of no activity for 1000 ms");
    // The busy session is neither retired nor replaced: the sibling keeps streaming on it.
    const before = received;
    await vi.advanceTimersByTimeAsync(100);
    await until(() => received > before);
    const stats = h.getPoolStats().origins[0];
    expect(stats.http2?.closed.idle_timeout).toBe(0);
    expect(stats.http2?.sessionsOpen).toBe(1);
    expect(server.sessions()).toBe(1);
    expect(stats.requests.timedOut).toBe(1);
  });

  it("requestTimeout bounds a refused request waiting for its refusing session: it fails at the limit from handle()", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const setTimeoutSpy = vi.spyOn(timing, "setTimeout");
    const h = new NodeHttp2Handler({
      requestTimeout: 1000,
      maxSessionsPerOrigin: 1,
      nodeHttp2ConnectOptions: { ca: CA },
    });
    cleanups.push(() => h.destroy());
    // A body held open (no timeout of its own) keeps a stream open on the one session.
    const heldPending = h.handle(request(server.port, "/held"), { requestTimeout: 0 });
    await until(() => server.streams() === 1);
    await vi.advanceTimersByTimeAsync(0);
    const held = await heldPending;
    // Refused while that stream is open: the session takes no new stream, so the request waits (queued), not fails.
    const refused = settled(h.handle(request(server.port, "/refuse")));
    await until(() => server.streams() === 2 && h.getPoolStats().totals.queued === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(refused.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => refused.done);
    expect(refused.error?.name).toBe("TimeoutError");
    expect(refused.error?.message).toBe("Stream timed out because of no activity for 1000 ms");
    expect(server.streams()).toBe(2);
    expect(h.getPoolStats().totals.queued).toBe(0);
    expect(onlySchedulerTimers(setTimeoutSpy, h)).toBe(true);
    // The held stream ends: the session takes streams again (no second session).
    held.response.body.destroy();
    await until(() => h.getPoolStats().totals.inFlight === 0);
    const next = h.handle(request(server.port, "/ok"));
    await until(() => server.streams() === 3);
    await vi.advanceTimersByTimeAsync(0);
    expect((await next).response.statusCode).toBe(200);
    expect(server.sessions()).toBe(1);
  });

  it("sessionTimeout: an idle session is destroyed at the limit, not before", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ sessionTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const { response } = await h.handle(request(server.port, "/ok"));
    response.body.resume();
    await until(() => h.getPoolStats().totals.inFlight === 0);
    // The session's last activity (the response's end) was at fake time 0.
    await vi.advanceTimersByTimeAsync(999);
    expect(h.getPoolStats().origins[0].http2?.sessionsOpen).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => h.getPoolStats().origins[0].http2?.sessionsOpen === 0);
    expect(h.getPoolStats().origins[0].http2?.closed.idle_timeout).toBe(1);
  });

  it("sessionTimeout counts from the last activity, exactly: after a 100 KB response (WINDOW_UPDATE frames sent as it is read) the session closes at the limit, not one limit later (#34)", async () => {
    const server = await neverAnsweringH2({ tls: false });
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ sessionTimeout: 1000 });
    cleanups.push(() => h.destroy());
    const { response } = await h.handle(request(server.port, "/large", "http:"));
    let received = 0;
    response.body.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    await until(() => received === 100_000 && h.getPoolStats().totals.inFlight === 0);
    const session = firstSession(h);
    // All of it (the body, its end, the client's WINDOW_UPDATEs) happened at fake time 0.
    await vi.advanceTimersByTimeAsync(999);
    expect(session.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(session.destroyed).toBe(true);
    await until(() => h.getPoolStats().origins[0].http2?.sessionsOpen === 0);
    expect(h.getPoolStats().origins[0].http2?.closed.idle_timeout).toBe(1);
  });

  it("sessionTimeout: a frame Node reports is activity, as for upstream's session.setTimeout(): SETTINGS at 600 ms moves the close to exactly 1600 ms (#34)", async () => {
    const server = await neverAnsweringH2({ tls: false });
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ sessionTimeout: 1000 });
    cleanups.push(() => h.destroy());
    const { response } = await h.handle(request(server.port, "/ok", "http:"));
    response.body.resume();
    await until(() => h.getPoolStats().totals.inFlight === 0);
    const session = firstSession(h);
    await vi.advanceTimersByTimeAsync(600);
    await server.settings();
    await vi.advanceTimersByTimeAsync(999);
    expect(session.destroyed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(session.destroyed).toBe(true);
    await until(() => h.getPoolStats().origins[0].http2?.sessionsOpen === 0);
    expect(h.getPoolStats().origins[0].http2?.closed.idle_timeout).toBe(1);
  });

  it("requestTimeout after the response: each body chunk restarts it, and a stalled body fails exactly the limit after its last chunk", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ requestTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const { response } = await h.handle(request(server.port, "/held"));
    let received = 0;
    let failure: Error | undefined;
    response.body.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    response.body.on("error", (error: Error) => {
      failure = error;
    });
    // The response headers arrived at fake time 0; a chunk at 600 ms restarts the limit.
    await vi.advanceTimersByTimeAsync(600);
    server.write("x");
    await until(() => received === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(failure).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await until(() => failure !== undefined);
    expect(failure?.name).toBe("TimeoutError");
    expect(failure?.message).toBe("Stream timed out because of no activity for 1000 ms");
  });

  it("a stream that times out before the poll phase read its session's traffic (a blocked event loop) leaves the busy session alone (#34)", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const immediates = holdImmediates();
    const h = new NodeHttp2Handler({ requestTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const { response } = await h.handle(request(server.port, "/held"), { requestTimeout: 0 });
    let received = 0;
    response.body.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    const silent = settled(h.handle(request(server.port, "/never")));
    await until(() => server.streams() === 2);
    // No I/O is read while fake time moves: the silent stream's deadline fires as after a blocked loop, before the
    // poll phase that reads what the busy stream received meanwhile.
    await vi.advanceTimersByTimeAsync(1000);
    await immediates.runUntil(() => silent.done);
    expect(silent.error?.name).toBe("TimeoutError");
    // That poll phase: the busy stream's chunk is read; then the immediates that wait for it run.
    server.write("x");
    await until(() => received === 1);
    await immediates.runAll();
    const { response: next } = await h.handle(request(server.port, "/ok"));
    next.body.resume();
    expect(server.sessions()).toBe(1);
    expect(h.getPoolStats().origins[0].http2?.sessionsCreated).toBe(1);
  });

  it("a stream that times out while no stream on its session progresses retires the session: the next stream gets a new one", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const immediates = holdImmediates();
    const h = new NodeHttp2Handler({ requestTimeout: 1000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const { response } = await h.handle(request(server.port, "/held"), { requestTimeout: 0 });
    response.body.resume();
    const silent = settled(h.handle(request(server.port, "/never")));
    await until(() => server.streams() === 2);
    await vi.advanceTimersByTimeAsync(1000);
    await immediates.runUntil(() => silent.done);
    await immediates.runAll();
    const { response: next } = await h.handle(request(server.port, "/ok"));
    next.body.resume();
    expect(server.sessions()).toBe(2);
    expect(h.getPoolStats().origins[0].http2?.sessionsCreated).toBe(2);
  });

  it("the SDK's default socket timeout (updateHttpClientConfig symbol) bounds a silent stream when nothing else is set", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    h.updateHttpClientConfig(Symbol.for("@smithy/defaultSocketTimeout") as never, 1000);
    const state = settled(h.handle(request(server.port, "/never")));
    await until(() => server.streams() === 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(state.done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => state.done);
    expect(state.error?.name).toBe("TimeoutError");
    expect(state.error?.message).toBe("Stream timed out because of no activity for 1000 ms");
  });

  it("the one timer exists only while something is armed, and lapses at its due time once nothing is", async () => {
    const server = await neverAnsweringH2();
    vi.useFakeTimers(FAKE);
    const h = new NodeHttp2Handler({ requestTimeout: 5000, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    expect(vi.getTimerCount()).toBe(0);
    const ac = new AbortController();
    const state = settled(h.handle(request(server.port, "/never"), { abortSignal: ac.signal as never }));
    await until(() => server.streams() === 1);
    expect(vi.getTimerCount()).toBe(1);
    ac.abort();
    await until(() => state.done && h.getPoolStats().totals.inFlight === 0);
    // Not re-armed: it lapses at the cancelled deadline's due time (5000 ms), and nothing replaces it.
    await vi.advanceTimersByTimeAsync(5000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("poolMonitor", () => {
  it("exists from construction for a provider too, and is dropped when the provider says telemetry: false", async () => {
    const on = new NodeHttp2Handler(async () => ({}));
    expect(on.poolMonitor).toBeDefined();
    const off = new NodeHttp2Handler(async () => ({ telemetry: false }));
    expect(off.poolMonitor).toBeDefined();
    const ac = new AbortController();
    ac.abort();
    await off.handle(request(1), { abortSignal: ac.signal as never }).catch(() => {});
    expect(off.poolMonitor).toBeUndefined();
    expect(new NodeHttp2Handler({ telemetry: false }).poolMonitor).toBeUndefined();
  });
});

describe("bad requests reject, never throw", () => {
  it("a null request or an invalid header rejects; nothing stays in flight", async () => {
    const server = await neverAnsweringH2();
    const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const ac = new AbortController();
    ac.abort();
    await h.handle(request(server.port), { abortSignal: ac.signal as never }).catch(() => {});
    let rejection: Promise<unknown> | undefined;
    expect(() => {
      rejection = h.handle(null as never);
    }).not.toThrow();
    await expect(rejection).rejects.toBeInstanceOf(TypeError);
    const bad = new HttpRequest({
      protocol: "https:",
      hostname: "localhost",
      port: server.port,
      method: "GET",
      path: "/",
      headers: { connection: "keep-alive" },
    });
    // Refused before a session is opened (Node would refuse it only once a session exists): nothing is started.
    await expect(h.handle(bad)).rejects.toMatchObject({ code: "ERR_HTTP2_INVALID_CONNECTION_HEADERS" });
    expect(h.getPoolStats().totals.inFlight).toBe(0);
    expect(h.getPoolStats().origins).toEqual([]);
    expect(server.sessions()).toBe(0);
  });
});
