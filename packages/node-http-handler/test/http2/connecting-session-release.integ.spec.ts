/**
 * A session closed while it is still connecting leaves nothing behind. Node emits no `'close'` for such a session and,
 * on `destroy()`, only `end()`s its socket, which waits for a connect that may never come: the pool must release the
 * entry itself and destroy the socket. Two real peers: a never-accepting listener (the TCP connect stays pending) and
 * a TCP server that never answers the TLS ClientHello (the handshake stays pending). Paths: the handler's
 * `destroy()`, abort of the only waiting request (isolated: its session closes; pooled: the session stays for reuse
 * but no longer holds the process), and `connectionTimeout` (`sessionTimeout` watches established sessions only; a
 * GOAWAY needs an established connection, so neither closes a connecting session).
 *
 * After each: every promise settled, `getPoolStats()` shows no session, no socket open (counted at the TLS peer; for
 * the black hole, the process's ref'd handles and pending connects against a baseline), no ref'd timer, and nothing
 * armed on the handler's scheduler.
 */
import { HttpRequest } from "@smithy/protocol-http";
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { NodeHttp2Handler } from "../../src/index";
import { activeResources } from "../active-resources";
import { startBlackHole } from "../black-hole.mock";
import { startSilentTcpServer, waitFor } from "../servers";
import { settleAll } from "../settle-all";
import { CA } from "./h2-servers";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Peer = { port: number; openSockets: () => number };

/** Pending connects (`ConnectWrap`) and ref'd handles, beside ref'd timers. */
function resources(): { timers: number; handles: number; connects: number } {
  const connects = process.getActiveResourcesInfo().filter((t) => t === "ConnectWrap").length;
  return { ...activeResources(), connects };
}

/**
 * Client sockets to `port` the kernel holds open (connecting, established or closing; TIME_WAIT and CLOSE excluded),
 * from /proc/net/tcp: the never-accepting peer cannot count its connections itself.
 */
function kernelSocketsTo(port: number): number {
  const hex = port.toString(16).toUpperCase().padStart(4, "0");
  let n = 0;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 4 || !fields[2].endsWith(`:${hex}`)) continue;
    if (fields[3] !== "06" && fields[3] !== "07") n++;
  }
  return n;
}

const PEERS: Record<string, () => Promise<Peer>> = {
  "TCP connect pending (never-accepting listener)": async () => {
    const hole = await startBlackHole();
    cleanups.push(() => hole.close());
    // The black hole's own fillers hold the accept queue: count beyond them.
    const fillers = kernelSocketsTo(hole.port);
    return { port: hole.port, openSockets: () => kernelSocketsTo(hole.port) - fillers };
  },
  "TLS handshake pending (server never answers)": async () => {
    const silent = await startSilentTcpServer();
    cleanups.push(() => silent.close());
    return { port: silent.port, openSockets: () => silent.openConnections };
  },
};

function request(port: number): HttpRequest {
  return new HttpRequest({ protocol: "https:", hostname: "localhost", port, method: "GET", path: "/", headers: {} });
}

function sessionsOpen(h: NodeHttp2Handler): number {
  return h
    .getPoolStats()
    .origins.reduce((n, o) => n + (o.http2?.sessionsOpen ?? 0) + (o.http2?.isolatedSessionsOpen ?? 0), 0);
}

/** Starts `n` requests once the peer holds their connection attempt (TCP pending, or TLS pending at the peer). */
async function start(peer: Peer, h: NodeHttp2Handler, signals: (AbortSignal | undefined)[]) {
  const promises = signals.map((abortSignal) => h.handle(request(peer.port), { abortSignal }));
  for (const p of promises) p.catch(() => {});
  await waitFor(() => peer.openSockets() === signals.length, "the connect attempts at the peer");
  return promises;
}

async function expectNothingLeft(
  h: NodeHttp2Handler,
  peer: Peer,
  promises: Promise<unknown>[],
  baseline: ReturnType<typeof resources>
): Promise<void> {
  const states = await settleAll(promises, 2000);
  expect(states.filter((s) => s === "pending")).toHaveLength(0);
  await waitFor(() => sessionsOpen(h) === 0, "no session in getPoolStats()").catch(() => {});
  expect(sessionsOpen(h)).toBe(0);
  await waitFor(() => peer.openSockets() === 0, "sockets closed at the peer").catch(() => {});
  expect(peer.openSockets()).toBe(0);
  await waitFor(() => {
    const now = resources();
    return now.handles <= baseline.handles && now.connects <= baseline.connects;
  }, "handles released").catch(() => {});
  const now = resources();
  expect(now.handles).toBeLessThanOrEqual(baseline.handles);
  expect(now.connects).toBeLessThanOrEqual(baseline.connects);
  expect(now.timers).toBeLessThanOrEqual(baseline.timers);
  expect((h as any).pool.sharedScheduler.size).toBe(0);
  expect(h.getPoolStats().totals.inFlight).toBe(0);
}

describe.each(Object.keys(PEERS))("a session closed while connecting: %s", (peerName) => {
  it("destroy() releases pooled and isolated sessions, their sockets and the waiting requests", async () => {
    const peer = await PEERS[peerName]();
    const baseline = resources();
    const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } });
    const iso = new NodeHttp2Handler({ disableConcurrentStreams: true, nodeHttp2ConnectOptions: { ca: CA } });
    const pooled = await start(peer, h, [undefined]);
    h.destroy();
    await expectNothingLeft(h, peer, pooled, baseline);
    const isolated = await start(peer, iso, [undefined]);
    iso.destroy();
    await expectNothingLeft(iso, peer, isolated, baseline);
    const rejections = (await settleAll([...pooled, ...isolated], 0)) as PromiseSettledResult<unknown>[];
    expect(rejections.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });

  it("abort of the only waiting isolated request closes its session", async () => {
    const peer = await PEERS[peerName]();
    const baseline = resources();
    const h = new NodeHttp2Handler({ disableConcurrentStreams: true, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const ac = new AbortController();
    const promises = await start(peer, h, [ac.signal]);
    ac.abort();
    await expectNothingLeft(h, peer, promises, baseline);
    await expect(promises[0]).rejects.toMatchObject({ name: "AbortError" });
  });

  it("abort of the only waiting pooled request: the session stays for reuse, unref'd; destroy() then releases it", async () => {
    const peer = await PEERS[peerName]();
    const baseline = resources();
    const h = new NodeHttp2Handler({ nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const ac = new AbortController();
    const promises = await start(peer, h, [ac.signal]);
    const waiting = activeResources().handles;
    ac.abort();
    await expect(promises[0]).rejects.toMatchObject({ name: "AbortError" });
    // Nobody waits for the session any more: it stays (a next request may use it) but no longer holds the process.
    expect(sessionsOpen(h)).toBe(1);
    expect(peer.openSockets()).toBe(1);
    expect(activeResources().handles).toBe(waiting - 1);
    h.destroy();
    await expectNothingLeft(h, peer, promises, baseline);
  });

  it("connectionTimeout releases the session and its socket (sessionTimeout, for established sessions only, does not)", async () => {
    const peer = await PEERS[peerName]();
    const baseline = resources();
    const h = new NodeHttp2Handler({ connectionTimeout: 200, sessionTimeout: 50, nodeHttp2ConnectOptions: { ca: CA } });
    cleanups.push(() => h.destroy());
    const promises = await start(peer, h, [undefined]);
    await expectNothingLeft(h, peer, promises, baseline);
    await expect(promises[0]).rejects.toMatchObject({ name: "TimeoutError" });
    const closed = h.getPoolStats().origins[0].http2?.closed;
    expect(closed?.connect_timeout).toBe(1);
    expect(closed?.idle_timeout).toBe(0);
  });
});
