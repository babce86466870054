/**
 * One way out per HTTP/2 stream request (`Http2StreamRequest.finish()` → the pool's `streamFinished`), against real
 * loopback HTTP/2 servers (TLS, port 0). One stream slot per test (the server allows one stream, the handler one
 * session), so "the slot was released once" shows as: the next stream gets it, on the same session, and the
 * session's `activeStreams` is back to 0 (a second release would make it negative, a missed one would hang the
 * next stream). For every way a request ends — response complete, abort while waiting and while streaming, a
 * request-body error, a body that failed before its stream opened, GOAWAY, handler `destroy()`, Node refusing the
 * request (a pseudo-header it does not know), a stream Node never closes (its session closed, or the handler
 * destroyed) — and for two causes racing (an abort inside the body's `'end'` listener; an abort listener that destroys
 * the handler), it asserts: each outcome counted exactly once in `getStats().origins[0].requests` and `sockets`,
 * the pool told exactly once per request, and nothing left: no abort or stream listener, no deadline, no session.
 * Deadlines (requestTimeout, connectionTimeout) are in `src/http2-stream-request.spec.ts` under fake timers.
 */
import type { OriginStats } from "@sockeye/pool-monitor";
import { getEventListeners } from "node:events";
import { Readable } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NodeHttp2Handler, type NodeHttp2HandlerOptions } from "../../src/index";
import { CA, h2Request, inFlight, outcome, type Pool, readBody, startH2Server, waitFor } from "./h2-servers";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A server allowing one stream per session, and a handler allowing one session: one stream slot in all. */
async function oneSlot(options: NodeHttp2HandlerOptions = {}) {
  const server = await startH2Server({ settings: { maxConcurrentStreams: 1 } });
  cleanups.push(() => server.close());
  const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA }, maxSessionsPerOrigin: 1, ...options });
  cleanups.push(() => h.destroy());
  const pool = (h as unknown as { pool: Pool }).pool;
  /** Every call of the pool's single way out, by request. */
  const finished = new Map<object, string[]>();
  const original = pool.streamFinished.bind(pool);
  vi.spyOn(pool, "streamFinished").mockImplementation((req) => {
    finished.set(req, [...(finished.get(req) ?? []), req.outcome ?? "failed"]);
    original(req);
  });
  return { server, h, pool, finished };
}

const req = h2Request;

function origin(h: NodeHttp2Handler): OriginStats {
  return h.getPoolStats().origins[0];
}

/** Each request told the pool exactly once; returns the outcomes, sorted. */
function toldOnce(finished: Map<object, string[]>, requests: number): string[] {
  expect(finished.size).toBe(requests);
  for (const calls of finished.values()) expect(calls).toHaveLength(1);
  return [...finished.values()].map((calls) => calls[0]).sort();
}

/**
 * Nothing of the requests is left: none in flight, no stream on any session, no deadline armed, nothing watched;
 * the one slot serves a next stream on the same session; after `destroy()`, no session on either side.
 */
async function expectReleased(t: Awaited<ReturnType<typeof oneSlot>>, sessionsBefore: number): Promise<void> {
  const { server, h, pool } = t;
  await waitFor(() => inFlight(pool) === 0);
  expect(h.getPoolStats().totals.inFlight).toBe(0);
  for (const session of origin(h).http2?.sessions ?? []) expect(session.activeStreams).toBe(0);
  expect(pool.sharedScheduler.size).toBe(0); // no idle watch, no request deadline
  const next = await h.handle(req(server, "/echo"));
  expect(await readBody(next.response.body)).toContain('"method":"GET"');
  await waitFor(() => inFlight(pool) === 0);
  expect(server.sessionsAccepted).toBe(sessionsBefore);
  h.destroy();
  expect(pool.sharedScheduler.size).toBe(0);
  await waitFor(() => server.sessionsOpen === 0);
  const http2 = origin(h).http2;
  expect((http2?.sessionsOpen ?? 0) + (http2?.isolatedSessionsOpen ?? 0)).toBe(0);
}

describe("every way a stream request ends goes through finish(), once", () => {
  it("response complete: the waiting stream gets the slot, both counted completed once", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    const first = h.handle(req(server, "/delay?ms=30"));
    const second = h.handle(req(server, "/echo"));
    await waitFor(() => h.getPoolStats().totals.queued === 1);
    const bodies = await Promise.all([first, second].map(async (p) => readBody((await p).response.body)));
    expect(bodies.every((b) => b.includes('"method":"GET"'))).toBe(true);
    await waitFor(() => inFlight(t.pool) === 0);
    expect(toldOnce(finished, 2)).toEqual(["completed", "completed"]);
    expect(origin(h).requests).toEqual({ started: 2, completed: 2, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(origin(h).sockets).toMatchObject({ created: 1, acquisitions: 2, reusedAcquisitions: 1, errors: 0 });
    await expectReleased(t, 1);
    expect(origin(h).requests.completed).toBe(3);
  });

  it("abort racing the end of the body (in the body's 'end' listener, before the stream's 'close'): counted completed once, no error for the reader", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    const controller = new AbortController();
    const { response } = await h.handle(req(server, "/large?bytes=64"), { abortSignal: controller.signal as never });
    const body = response.body as Readable;
    const errors: Error[] = [];
    body.on("error", (e) => errors.push(e));
    let text = "";
    await new Promise<void>((resolve) => {
      body.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      body.on("end", () => {
        controller.abort();
        resolve();
      });
    });
    await waitFor(() => inFlight(t.pool) === 0);
    expect(text).toHaveLength(64);
    expect(errors).toEqual([]);
    expect(body.errored).toBeNull();
    // Before: the abort turned the complete response into "aborted" and destroyed its body with an AbortError.
    expect(toldOnce(finished, 1)).toEqual(["completed"]);
    expect(origin(h).requests).toEqual({ started: 1, completed: 1, failed: 0, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(body.listenerCount("aborted") + body.listenerCount("frameError")).toBe(0);
    await expectReleased(t, 1);
  });

  it("abort while waiting and while streaming, and a request-body error: each counted once, the slot passes on", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    const holding = new AbortController();
    const waiting = new AbortController();
    const first = h.handle(req(server, "/never"), { abortSignal: holding.signal as never });
    const queued = h.handle(req(server, "/never"), { abortSignal: waiting.signal as never });
    await waitFor(() => server.openStreams === 1 && h.getPoolStats().totals.queued === 1);
    waiting.abort();
    expect(await outcome(queued)).toMatchObject({ ok: false, error: { name: "AbortError" } });
    expect(h.getPoolStats().totals.queued).toBe(0);
    holding.abort();
    expect(await outcome(first)).toMatchObject({ ok: false, error: { name: "AbortError" } });
    await waitFor(() => inFlight(t.pool) === 0);
    // A request body that fails mid-upload: the server waits for its end (/echo), the request rejects with its error.
    const failing = new Readable({ read() {} });
    failing.push("a");
    const failed = h.handle(req(server, "/echo", { method: "POST", body: failing }));
    await waitFor(() => server.openStreams === 1);
    failing.destroy(new Error("body failed"));
    expect(await outcome(failed)).toMatchObject({ ok: false, error: { message: "body failed" } });
    await waitFor(() => inFlight(t.pool) === 0);
    // Node 22+'s server counts a stream reset with INTERNAL_ERROR a moment longer: a stream sent before it let go
    // would be refused (and replayed on a fresh session), which is not what this row is about.
    await waitFor(() => server.openStreams === 0);
    expect(failing.listenerCount("error")).toBe(0);
    expect(toldOnce(finished, 3)).toEqual(["aborted", "aborted", "failed"]);
    expect(origin(h).requests).toEqual({ started: 3, completed: 0, failed: 1, aborted: 2, timedOut: 0, queueFull: 0 });
    expect(getEventListeners(holding.signal, "abort")).toHaveLength(0);
    expect(getEventListeners(waiting.signal, "abort")).toHaveLength(0);
    // The waiting request never held the slot: two acquisitions, one session.
    expect(origin(h).sockets).toMatchObject({ created: 1, acquisitions: 2 });
    await expectReleased(t, 1);
  });

  it("abort while the request body is still being sent: AbortError, counted aborted once, the reset reaches the server", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    const controller = new AbortController();
    const body = new Readable({ read() {} });
    body.push("a");
    const uploading = h.handle(req(server, "/echo", { method: "POST", body }), {
      abortSignal: controller.signal as never,
    });
    await waitFor(() => server.openStreams === 1);
    controller.abort();
    // Before: Node's 'aborted' for the handler's own reset rejected with "abnormally aborted … code 8" (counted
    // failed), and destroyed the stream before the RST_STREAM went out: the server kept the stream open, so with one
    // stream allowed the next stream never started.
    expect(await outcome(uploading)).toMatchObject({ ok: false, error: { name: "AbortError" } });
    await waitFor(() => server.openStreams === 0);
    await waitFor(() => inFlight(t.pool) === 0);
    expect(toldOnce(finished, 1)).toEqual(["aborted"]);
    expect(origin(h).requests).toEqual({ started: 1, completed: 0, failed: 0, aborted: 1, timedOut: 0, queueFull: 0 });
    expect(body.listenerCount("error")).toBe(0);
    await expectReleased(t, 1);
  });

  it("a request body that failed while the request waited for its stream rejects with its error at once", async () => {
    const t = await oneSlot({ requestTimeout: 5000 });
    const { server, h, finished } = t;
    const holding = new AbortController();
    const first = h.handle(req(server, "/never"), { abortSignal: holding.signal as never });
    await waitFor(() => server.openStreams === 1);
    const body = new Readable({ read() {} });
    body.on("error", () => {}); // the caller's own listener: the body fails before the handler listens to it
    const queued = h.handle(req(server, "/echo", { method: "POST", body }));
    await waitFor(() => h.getPoolStats().totals.queued === 1);
    body.destroy(new Error("failed while waiting"));
    await new Promise((r) => setImmediate(r));
    const startedAt = Date.now();
    holding.abort();
    await outcome(first);
    // Before: the errored body was piped into the stream, which then waited for requestTimeout (5 s).
    expect(await outcome(queued)).toMatchObject({ ok: false, error: { message: "failed while waiting" } });
    expect(Date.now() - startedAt).toBeLessThan(4000);
    await waitFor(() => inFlight(t.pool) === 0);
    expect(toldOnce(finished, 2)).toEqual(["aborted", "failed"]);
    expect(origin(h).requests).toEqual({ started: 2, completed: 0, failed: 1, aborted: 1, timedOut: 0, queueFull: 0 });
    await expectReleased(t, 1);
  });

  it("GOAWAY fails the streams on the session once each; the waiting stream gets a fresh session", async () => {
    const server = await startH2Server({ settings: { maxConcurrentStreams: 2 } });
    cleanups.push(() => server.close());
    const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA }, maxSessionsPerOrigin: 1 });
    cleanups.push(() => h.destroy());
    const pool = (h as unknown as { pool: Pool }).pool;
    const never = h.handle(req(server, "/never"));
    await waitFor(() => server.openStreams === 1);
    const goaway = h.handle(req(server, "/goaway"));
    const waiting = h.handle(req(server, "/echo"));
    const results = await Promise.all([never, goaway, waiting].map(outcome));
    expect(results.map((r) => r.ok)).toEqual([false, false, true]);
    if (results[2].ok) await readBody((results[2].value as { response: { body: unknown } }).response.body);
    await waitFor(() => inFlight(pool) === 0);
    expect(origin(h).requests).toEqual({ started: 3, completed: 1, failed: 2, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(origin(h).sockets).toMatchObject({ created: 2, acquisitions: 3 });
    expect(origin(h).http2?.closed.goaway).toBe(1);
    expect(server.sessionsAccepted).toBe(2);
    expect(pool.sharedScheduler.size).toBe(0); // no idle watch, no request deadline
    h.destroy();
    expect(pool.sharedScheduler.size).toBe(0);
    await waitFor(() => server.sessionsOpen === 0);
  });

  it("handler destroy(): the open and the waiting stream reject once each; the handler works again", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    const open = h.handle(req(server, "/never"));
    await waitFor(() => server.openStreams === 1);
    const waiting = h.handle(req(server, "/never"));
    await waitFor(() => h.getPoolStats().totals.queued === 1);
    h.destroy();
    const results = await Promise.all([open, waiting].map(outcome));
    expect(results.map((r) => r.ok)).toEqual([false, false]);
    expect(!results[1].ok && results[1].error.message).toMatch(/destroyed before a stream slot was free/);
    await waitFor(() => inFlight(t.pool) === 0);
    expect(toldOnce(finished, 2)).toEqual(["failed", "failed"]);
    expect(origin(h).requests).toEqual({ started: 2, completed: 0, failed: 2, aborted: 0, timedOut: 0, queueFull: 0 });
    expect(t.pool.sharedScheduler.size).toBe(0);
    await waitFor(() => server.sessionsOpen === 0 && origin(h).http2?.closed.local === 1);
    await expectReleased(t, 2);
  });

  it("Node refuses the request (a pseudo-header it does not know): rejected, counted failed once, the slot freed", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    await readBody((await h.handle(req(server, "/echo"))).response.body);
    /** Settles `p`, reading the body of a response at once (the next stream needs the one slot). */
    const settle = async (p: Promise<{ response: { body?: unknown } }>) => {
      const r = await outcome(p);
      if (r.ok) await readBody((r.value as { response: { body: unknown } }).response.body);
      return r;
    };
    const waiting = settle(h.handle(req(server, "/echo")));
    // A token name, so it passes the handler's own checks; Node refuses it when the stream is requested.
    const bad = settle(h.handle(req(server, "/echo", { headers: { ":bogus": "x" } })));
    const after = settle(h.handle(req(server, "/echo")));
    const results = await Promise.all([waiting, bad, after]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(!results[1].ok && results[1].error).toMatchObject({ code: "ERR_HTTP2_INVALID_PSEUDOHEADER" });
    await waitFor(() => inFlight(t.pool) === 0);
    expect(toldOnce(finished, 4)).toEqual(["completed", "completed", "completed", "failed"]);
    expect(origin(h).requests).toEqual({ started: 4, completed: 3, failed: 1, aborted: 0, timedOut: 0, queueFull: 0 });
    // Refused before nghttp2 sees it: the session serves the next stream.
    expect(origin(h).http2?.closed.error).toBe(0);
    expect(origin(h).sockets).toMatchObject({ created: 1, acquisitions: 4 });
    await expectReleased(t, 1);
  });

  it("abort and destroy() in one turn (the caller's abort listener destroys the handler first): ends once", async () => {
    const t = await oneSlot();
    const { server, h, finished } = t;
    const controller = new AbortController();
    controller.signal.addEventListener("abort", () => h.destroy(), { once: true });
    const open = h.handle(req(server, "/never"), { abortSignal: controller.signal as never });
    await waitFor(() => server.openStreams === 1);
    controller.abort();
    const result = await outcome(open);
    expect(result.ok).toBe(false);
    await waitFor(() => inFlight(t.pool) === 0);
    const [how] = toldOnce(finished, 1);
    const counted = origin(h).requests;
    expect(counted.started).toBe(1);
    expect(counted.completed + counted.failed + counted.aborted + counted.timedOut).toBe(1);
    expect(counted[how === "aborted" ? "aborted" : "failed"]).toBe(1);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    expect(t.pool.sharedScheduler.size).toBe(0);
    await waitFor(() => server.sessionsOpen === 0);
    await expectReleased(t, 2);
  });
  /**
   * Starts a request to `/never` and, once the server has its stream, silences that stream on the client: Node's
   * events for it (`'close'`, `'error'`, `'aborted'`) are dropped, as when a protocol error tears its session down
   * without ever closing it. Returns the request's settled outcome (or "pending").
   */
  async function silencedStream(t: Awaited<ReturnType<typeof oneSlot>>) {
    const { server, h } = t;
    let state: "pending" | "rejected" | "resolved" = "pending";
    h.handle(req(server, "/never")).then(
      () => (state = "resolved"),
      () => (state = "rejected")
    );
    await waitFor(() => server.openStreams === 1);
    const origins = (
      h as unknown as { pool: { origins: Map<string, { holders: { firstNode?: { stream?: object } } }> } }
    ).pool.origins;
    const stream = [...origins.values()][0].holders.firstNode?.stream as { emit: (...args: unknown[]) => boolean };
    stream.emit = () => false;
    return () => state;
  }

  it("a stream Node never closes: destroy() still settles its request and frees everything", async () => {
    const t = await oneSlot();
    const state = await silencedStream(t);
    t.h.destroy();
    await waitFor(() => state() !== "pending");
    expect(state()).toBe("rejected");
    expect(inFlight(t.pool)).toBe(0);
    expect(toldOnce(t.finished, 1)).toEqual(["failed"]);
    expect(t.pool.sharedScheduler.size).toBe(0);
  });

  it("a stream Node never closes: its session's close ends the request, without destroy()", async () => {
    const t = await oneSlot();
    const state = await silencedStream(t);
    await t.server.close();
    await waitFor(() => state() !== "pending");
    expect(state()).toBe("rejected");
    expect(inFlight(t.pool)).toBe(0);
    expect(toldOnce(t.finished, 1)).toEqual(["failed"]);
    expect(origin(t.h).requests).toMatchObject({ started: 1, failed: 1 });
  });
});
