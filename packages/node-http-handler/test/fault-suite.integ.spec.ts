/**
 * Fault suite: every scenario runs through upstream `NodeHttpHandler` (`@smithy/node-http-handler` 4.14.2) and
 * through Sockeye's, side by side, against the same real loopback servers, over http AND https.
 *
 * After each run (and the handler's `destroy()`, unless the scenario is about not destroying), the suite counts
 * what is left, never sleeping for a guessed time (it polls with a cap, and the cap only bounds a failing run; where
 * upstream's defect is the very thing a scenario shows, upstream's run is that failing run, so its cap is shorter):
 *
 * - `pending`: `handle()` promises still unsettled;
 * - `openConnections`: TCP connections the server still has open (each is a client socket left open);
 * - `newConnections`: connections opened after `destroy()`;
 * - `abortListeners`: `'abort'` listeners left on the callers' signals;
 * - `refTimers` / `refHandles`: ref'd `Timeout`s and other ref'd handles (`process.getActiveResourcesInfo()`) more
 *   than before the run;
 * - `queued`: requests left in the agents' queues (zombies);
 * - Sockeye only: its in-flight count, armed deadlines, whether its interval runs, and the monitor's totals.
 *
 * Sockeye must leave every count at 0 and be never worse than upstream on any of them.
 *
 * The classic faults (resets before and mid-body, refused, never answers, stalled handshake, slow and stalled bodies,
 * aborts at every phase) run for all four handlers in `packages/undici-http-handler/test/fault-suite.integ.spec.ts`;
 * this file keeps NodeHttpHandler's own defects and what needs its agents' internals.
 */
import { NodeHttpHandler as UpstreamNodeHttpHandler } from "@smithy/node-http-handler";
import type { HttpRequest } from "@smithy/protocol-http";
import type { HttpHandlerOptions, Logger } from "@smithy/types";
import { getEventListeners } from "node:events";
import type { Agent, IncomingMessage } from "node:http";
import { DEFAULT_IDLE_SOCKET_TIMEOUT_MS, timing } from "@sockeye/pool-monitor/internal";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { activeResources } from "./active-resources";
import { NodeHttpHandler, type NodeHttpHandlerOptions } from "../src/index";
import {
  CA,
  readAll,
  requestTo,
  type RequestInit,
  type ServerKind,
  startServer,
  startSilentTcpServer,
  type TestServer,
  waitFor,
} from "./servers";
import { settleAll } from "./settle-all";

const KINDS: ServerKind[] = ["http", "https"];
/** Upper bound for anything to settle or close; a passing run never waits for it. */
const CAP_MS = 2000;
/**
 * The cap in upstream's run of a scenario marked `upstreamHangs`: what upstream leaves unsettled or open there stays
 * so for the rest of the run, so each of its capped waits ends at this bound instead of `CAP_MS`.
 */
const UPSTREAM_HANG_CAP_MS = 500;

type Impl = "upstream" | "sockeye";
type AnyHandler = UpstreamNodeHttpHandler | NodeHttpHandler;

interface Settled {
  status?: number;
  body?: string;
  bodyError?: string;
  error?: { name: string; code?: unknown; message: string };
}

interface Leftovers {
  pending: number;
  openConnections: number;
  newConnections: number;
  abortListeners: number;
  refTimers: number;
  refHandles: number;
  queued: number;
}

interface RunResult {
  outcomes: (Settled | "pending")[];
  left: Leftovers;
  /** Sockeye's own accounting after the run (undefined for upstream). */
  internal?: { inFlight: number; armed: number; ticking: boolean; monitorInFlight: number; monitorQueued: number };
  notes: Record<string, unknown>;
}

interface Ctx {
  impl: Impl;
  kind: ServerKind;
  server: TestServer;
  /** A TCP server that accepts and never writes (https: the TLS handshake never completes). */
  silentPort: number;
  handler: AnyHandler;
  controllers: AbortController[];
  pending: Promise<{ response: { statusCode: number; body: IncomingMessage } }>[];
  /** Indexes into `pending` of the requests meant to stay unanswered until `destroy()` (see `start`). */
  held: Set<number>;
  /** The bound of this run's capped waits: `CAP_MS`, or `UPSTREAM_HANG_CAP_MS` (see `Scenario.upstreamHangs`). */
  capMs: number;
  notes: Record<string, unknown>;
  /**
   * Starts a request and returns its index in `pending`. `held`: the request is meant to stay unanswered until the
   * handler's `destroy()` (e.g. `/never` on the one socket, to queue others behind it), so the wait for the run's
   * requests to settle before `destroy()` does not wait for it; its outcome is the state it is in by then.
   */
  start(init: RequestInit, options?: HttpHandlerOptions & { signal?: boolean; held?: boolean }): number;
}

interface Scenario {
  name: string;
  options?: NodeHttpHandlerOptions;
  /** Pass the options through a provider function (`async () => options`) instead of as an object. */
  provider?: boolean;
  /** Runs before the handler is built, and `after` once the run is fully counted (e.g. a fake clock). */
  before?(): void;
  after?(): void;
  /** Agent options merged in for both kinds (e.g. `{ maxSockets: 1 }`). */
  agent?: Record<string, unknown>;
  /** Starts requests and plays the fault; resolves once the scenario's point has been reached. */
  run(ctx: Ctx): Promise<void>;
  /** How resolved bodies are handled (default: read to the end). */
  body?: "read" | "destroy";
  /**
   * Do not call destroy() at the end (the scenario checks a handler that is simply dropped): instead of waiting for
   * connections to close, the run waits until every open connection is a free (pooled) socket of the agents.
   */
  noDestroy?: boolean;
  /** Only Sockeye (upstream cannot run it without crashing the test process; the reason is given). */
  sockeyeOnly?: string;
  /**
   * Upstream's run leaves requests unsettled or connections open for longer than a passing run takes (the reason
   * is given): its capped waits end at `UPSTREAM_HANG_CAP_MS`. Its counts are still compared with Sockeye's.
   */
  upstreamHangs?: string;
  /** Scenario-specific assertions on both results. */
  check?(ours: RunResult, upstream: RunResult | undefined, kind: ServerKind): void;
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

function agentsOf(handler: AnyHandler): Agent[] {
  const config = handler.httpHandlerConfigs() as { httpAgent?: Agent; httpsAgent?: Agent };
  return [config.httpAgent, config.httpsAgent].filter((a): a is Agent => a !== undefined && a !== null);
}

function socketsIn(agents: Agent[], pool: "sockets" | "freeSockets"): number {
  let n = 0;
  for (const agent of agents) for (const key in agent[pool]) n += agent[pool][key]?.length ?? 0;
  return n;
}

/** Requests queued in the handler's agents, plus (Sockeye) in the handler's own gate in front of them. */
function queuedIn(handler: AnyHandler): number {
  let n = 0;
  for (const agent of agentsOf(handler)) {
    for (const key in agent.requests) n += agent.requests[key]?.length ?? 0;
    const runtime = (handler as { runtime?: { gateFor(agent: Agent): { queued: number } | undefined } }).runtime;
    if (runtime !== undefined) n += runtime.gateFor(agent)?.queued ?? 0;
  }
  return n;
}

function errorOf(e: unknown): Settled["error"] {
  const error = e as Error & { code?: unknown };
  return { name: error?.name, code: error?.code, message: String(error?.message) };
}

async function runOnce(impl: Impl, kind: ServerKind, scenario: Scenario): Promise<RunResult> {
  scenario.before?.();
  try {
    return await runBetween(impl, kind, scenario);
  } finally {
    scenario.after?.();
  }
}

async function runBetween(impl: Impl, kind: ServerKind, scenario: Scenario): Promise<RunResult> {
  // Fresh servers per run: whatever a previous run left behind (upstream's hung or late connections) is not
  // counted against this one.
  const server = await startServer(kind);
  const silent = await startSilentTcpServer();
  const before = activeResources();
  const agentOptions: Record<string, unknown> = { ...(kind === "https" ? { ca: CA } : {}), ...scenario.agent };
  const options: NodeHttpHandlerOptions = {
    ...scenario.options,
    ...(kind === "https" ? { httpsAgent: agentOptions } : { httpAgent: agentOptions }),
  };
  const given = scenario.provider ? async () => options : options;
  const handler: AnyHandler = impl === "upstream" ? new UpstreamNodeHttpHandler(given) : new NodeHttpHandler(given);
  const notes: Record<string, unknown> = {};
  const capMs = impl === "upstream" && scenario.upstreamHangs !== undefined ? UPSTREAM_HANG_CAP_MS : CAP_MS;
  const ctx: Ctx = {
    impl,
    kind,
    server,
    silentPort: silent.port,
    handler,
    controllers: [],
    pending: [],
    held: new Set(),
    capMs,
    notes,
    start(init, handleOptions = {}) {
      const { signal, held, ...rest } = handleOptions;
      let abortSignal = rest.abortSignal;
      if (signal) {
        const controller = new AbortController();
        ctx.controllers.push(controller);
        abortSignal = controller.signal as never;
      }
      const request: HttpRequest = requestTo(server, init);
      const p = handler.handle(request, { ...rest, abortSignal }) as Ctx["pending"][number];
      p.catch(() => {});
      ctx.pending.push(p);
      if (held) ctx.held.add(ctx.pending.length - 1);
      return ctx.pending.length - 1;
    },
  };
  let destroyedAt = -1;
  try {
    await scenario.run(ctx);
    const states = await settleAll(ctx.pending, capMs, ctx.held);
    const outcomes: (Settled | "pending")[] = [];
    for (const state of states) {
      if (state === "pending") {
        outcomes.push("pending");
      } else if (state.status === "rejected") {
        outcomes.push({ error: errorOf(state.reason) });
      } else {
        const { response } = state.value;
        const out: Settled = { status: response.statusCode };
        if (scenario.body === "destroy") {
          response.body.destroy();
        } else {
          try {
            out.body = (await readAll(response.body)).toString();
          } catch (error) {
            out.bodyError = errorOf(error)?.message;
          }
        }
        outcomes.push(out);
      }
    }
    notes.queuedBeforeDestroy = queuedIn(handler);
    const agents = agentsOf(handler);
    if (!scenario.noDestroy) {
      destroyedAt = server.connections;
      handler.destroy();
    }
    // Whatever destroy() left pending gets the cap to settle; open connections get the cap to close.
    const after = await settleAll(ctx.pending, capMs);
    if (scenario.noDestroy && impl === "sockeye") {
      // Not destroyed: the interval stops itself at the first tick that finds nothing to do.
      const runtime = (handler as unknown as { runtime: { hostScheduler: { ticking: boolean } } }).runtime;
      await waitFor(() => !runtime.hostScheduler.ticking, "the interval to stop itself", capMs).catch(() => {});
    }
    const open = () => server.openConnections + silent.openConnections;
    if (scenario.noDestroy) {
      // Dropped, not destroyed: the keep-alive sockets stay pooled; wait until every open connection is one of them.
      await waitFor(
        () => socketsIn(agents, "sockets") === 0 && socketsIn(agents, "freeSockets") === open(),
        "every open connection to be a free pooled socket",
        capMs
      ).catch(() => {});
      notes.freeSockets = socketsIn(agents, "freeSockets");
    } else {
      await waitFor(() => open() === 0, "connections to close", capMs).catch(() => {});
    }
    // Let closes and timers of this run be processed before counting handles.
    await new Promise((resolve) => setImmediate(resolve));
    const now = activeResources();
    const left: Leftovers = {
      pending: after.filter((s) => s === "pending").length,
      openConnections: open(),
      newConnections: destroyedAt < 0 ? 0 : server.connections - destroyedAt,
      abortListeners: ctx.controllers.reduce((n, c) => n + getEventListeners(c.signal, "abort").length, 0),
      refTimers: Math.max(0, now.timers - before.timers),
      refHandles: Math.max(0, now.handles - before.handles),
      queued: queuedIn(handler),
    };
    const result: RunResult = { outcomes, left, notes };
    if (impl === "sockeye") result.internal = internals(handler as NodeHttpHandler);
    return result;
  } finally {
    handler.destroy();
    await Promise.all([server.close(), silent.close()]);
  }
}

function internals(handler: NodeHttpHandler): NonNullable<RunResult["internal"]> {
  const runtime = (handler as unknown as { runtime: any }).runtime;
  const totals = handler.getPoolStats().totals;
  return {
    inFlight: runtime.inFlightCount,
    armed: runtime.hostScheduler.size,
    ticking: runtime.hostScheduler.ticking,
    monitorInFlight: totals.inFlight,
    monitorQueued: totals.queued,
  };
}

function errorName(o: Settled | "pending"): string {
  if (o === "pending") return "pending";
  return o.error ? o.error.name : `status ${o.status}`;
}

async function sawRequests(ctx: Ctx, n: number, baseline: number): Promise<void> {
  await ctx.server.waitForRequests(baseline + n);
}

const holdQueue = (ctx: Ctx) => ctx.server.received.length;

/** The scenarios: the ten defects, then the classic faults. */
const SCENARIOS: Scenario[] = [
  {
    name: "1. acquisition timeout: the queued request settles and nothing of it is left",
    agent: { maxSockets: 1 },
    options: { socketAcquisitionTimeout: 300 },
    upstreamHangs:
      "no socketAcquisitionTimeout: the queued request waits until destroy(); a connection stays open after it",
    async run(ctx) {
      const base = holdQueue(ctx);
      ctx.start({ path: "/never" }, { held: true });
      await sawRequests(ctx, 1, base);
      const second = ctx.start({ path: "/echo" }, { signal: true });
      await settleAll([ctx.pending[second]], ctx.capMs);
      // Before destroy(): the queued request is gone everywhere.
      ctx.notes.listenersAfterTimeout = getEventListeners(ctx.controllers[0].signal, "abort").length;
      ctx.notes.queuedAfterTimeout = queuedIn(ctx.handler);
      if (ctx.impl === "sockeye") {
        const h = ctx.handler as NodeHttpHandler;
        const origin = h.getPoolStats().origins[0];
        ctx.notes.timedOut = origin?.requests.timedOut;
        ctx.notes.monitorInFlight = origin?.inFlight;
        ctx.notes.runtimeInFlight = (h as any).runtime.inFlightCount;
      }
    },
    check(ours, upstream) {
      expect(errorName(ours.outcomes[1])).toBe("TimeoutError");
      expect(ours.notes).toMatchObject({
        listenersAfterTimeout: 0,
        queuedAfterTimeout: 0,
        timedOut: 1,
        monitorInFlight: 1,
        runtimeInFlight: 1,
      });
      // Upstream has no socketAcquisitionTimeout: its queued request waits until destroy().
      expect(upstream?.notes.listenersAfterTimeout).toBe(1);
    },
  },
  {
    name: "3. destroy() with requests queued: all settle with HandlerDestroyedError, no new connection",
    agent: { maxSockets: 1 },
    upstreamHangs: "destroy() hands the queued requests new sockets, where they hang",
    async run(ctx) {
      const base = holdQueue(ctx);
      ctx.start({ path: "/never" }, { signal: true });
      ctx.start({ path: "/never" }, { signal: true });
      ctx.start({ path: "/never" }, { signal: true });
      await sawRequests(ctx, 1, base);
      await waitFor(() => queuedIn(ctx.handler) === 2, "two queued requests");
      const connections = ctx.server.connections;
      ctx.handler.destroy();
      if (ctx.impl === "upstream") {
        // Upstream's new connections are what its check counts: wait for them rather than for its hanging requests.
        await waitFor(() => ctx.server.connections > connections, "upstream's new connections", CAP_MS).catch(() => {});
      }
      await settleAll(ctx.pending, ctx.capMs);
      ctx.notes.connectionsOpenedByDestroy = ctx.server.connections - connections;
    },
    check(ours, upstream) {
      for (const o of ours.outcomes) {
        expect(o).not.toBe("pending");
        expect((o as Settled).error).toMatchObject({ name: "HandlerDestroyedError", code: "ERR_HANDLER_DESTROYED" });
        expect((o as Settled).error?.message).toContain("destroyed");
      }
      expect(ours.notes.connectionsOpenedByDestroy).toBe(0);
      // Upstream hands the queued requests fresh sockets, which hang.
      expect(upstream?.notes.connectionsOpenedByDestroy).toBeGreaterThan(0);
    },
  },
  {
    name: "3b. destroy() with requests queued under requestTimeout + throw",
    agent: { maxSockets: 1 },
    options: { requestTimeout: 1500, throwOnRequestTimeout: true },
    async run(ctx) {
      const base = holdQueue(ctx);
      for (let i = 0; i < 3; i++) ctx.start({ path: "/never" });
      await sawRequests(ctx, 1, base);
      await waitFor(() => queuedIn(ctx.handler) === 2, "two queued requests");
      ctx.handler.destroy();
    },
    check(ours) {
      expect(ours.outcomes.map(errorName)).toEqual(Array(3).fill("HandlerDestroyedError"));
    },
  },
  {
    name: "4. a throwing logger does not drop another request's deadline of the same tick",
    sockeyeOnly: "upstream's warn-only requestTimeout throws from its timer callback: an uncaught exception",
    agent: { maxSockets: 1 },
    options: {
      requestTimeout: 300,
      connectionTimeout: 300,
      logger: {
        debug() {},
        info() {},
        warn() {
          throw new Error("logger down");
        },
        error() {},
      } as Logger,
    },
    async run(ctx) {
      const base = holdQueue(ctx);
      // Armed in the same turn with the same duration: one list, expiring in the same tick in arm order. The first
      // request's requestTimeout warning (throwing logger) comes before the queued second request's
      // connectionTimeout.
      ctx.start({ path: "/never" });
      ctx.start({ path: "/never" });
      await sawRequests(ctx, 1, base);
      await settleAll([ctx.pending[1]], ctx.capMs);
      // The warn-only first request is still running: end it.
      ctx.handler.destroy();
    },
    check(ours) {
      expect(ours.outcomes[1]).toMatchObject({ error: { name: "TimeoutError" } });
      expect((ours.outcomes[1] as Settled).error?.message).toContain("still waiting for a free socket");
      expect(errorName(ours.outcomes[0])).toBe("HandlerDestroyedError");
    },
  },
  {
    name: "5. handle(request, null) is not a synchronous throw",
    async run(ctx) {
      const request = requestTo(ctx.server, { path: "/echo" });
      let threw = false;
      try {
        const p = (ctx.handler.handle as any)(request, null);
        p.catch(() => {});
        ctx.pending.push(p);
        const q = (ctx.handler.handle as any)(null);
        q.catch(() => {});
        ctx.pending.push(q);
      } catch {
        threw = true;
      }
      ctx.notes.threw = threw;
    },
    check(ours, upstream) {
      expect(ours.notes.threw).toBe(false);
      expect(upstream?.notes.threw).toBe(false);
      expect(ours.outcomes[0]).toMatchObject({ status: 200 });
      expect(ours.outcomes[1]).toMatchObject({ error: { name: "TypeError" } });
      expect((ours.outcomes[1] as Settled).error?.message).toContain("handle(request) expects an HttpRequest");
    },
  },
  {
    name: "7. bad request ports and a missing hostname: clear rejection, no socket",
    async run(ctx) {
      const connections = ctx.server.connections;
      for (const port of [-1, 70000, "abc"]) ctx.start({ path: "/echo", port: port as number });
      const request = requestTo(ctx.server, { path: "/echo" });
      (request as any).hostname = undefined;
      const p = ctx.handler.handle(request) as Ctx["pending"][number];
      p.catch(() => {});
      ctx.pending.push(p);
      await settleAll(ctx.pending, ctx.capMs);
      ctx.notes.connections = ctx.server.connections - connections;
      ctx.notes.sockets = agentsOf(ctx.handler).reduce(
        (n, a) => n + Object.values(a.sockets).reduce((m, s) => m + (s?.length ?? 0), 0),
        0
      );
    },
    check(ours) {
      const names = ours.outcomes.map(errorName);
      expect(names).toEqual(["TypeError", "TypeError", "TypeError", "TypeError"]);
      expect((ours.outcomes[0] as Settled).error?.message).toContain("invalid request port: -1");
      expect((ours.outcomes[2] as Settled).error?.message).toContain('invalid request port: "abc"');
      expect((ours.outcomes[3] as Settled).error?.message).toContain("invalid request hostname: undefined");
      expect(ours.notes).toMatchObject({ connections: 0, sockets: 0 });
    },
  },
  {
    name: "8. aborting a queued request while the pool is stuck: it leaves the agent queue",
    agent: { maxSockets: 1 },
    async run(ctx) {
      const base = holdQueue(ctx);
      ctx.start({ path: "/never" }, { held: true });
      await sawRequests(ctx, 1, base);
      ctx.start({ path: "/echo" }, { signal: true });
      await waitFor(() => queuedIn(ctx.handler) === 1, "the queued request");
      ctx.controllers[0].abort();
      await settleAll([ctx.pending[1]], ctx.capMs);
      ctx.notes.queuedAfterAbort = queuedIn(ctx.handler);
      if (ctx.impl === "sockeye") {
        const origin = (ctx.handler as NodeHttpHandler).getPoolStats().origins[0];
        ctx.notes.aborted = origin?.requests.aborted;
        ctx.notes.monitorInFlight = origin?.inFlight;
      }
    },
    check(ours, upstream) {
      expect(errorName(ours.outcomes[1])).toBe("AbortError");
      expect(ours.notes).toMatchObject({ queuedAfterAbort: 0, aborted: 1, monitorInFlight: 1 });
      expect(upstream?.notes.queuedAfterAbort).toBe(1);
    },
  },
  {
    name: "9. a synchronous throw from http.request (header with a newline) keeps the count at 0",
    async run(ctx) {
      ctx.start({ path: "/echo", headers: { "x-bad": "a\nb" } });
      await settleAll(ctx.pending, ctx.capMs);
      if (ctx.impl === "sockeye") ctx.notes.inFlight = (ctx.handler as any).runtime.inFlightCount;
    },
    check(ours) {
      expect(ours.outcomes[0]).toMatchObject({ error: { code: "ERR_INVALID_CHAR" } });
      expect(ours.notes.inFlight).toBe(0);
    },
  },
  // ---- classic faults (resets, refused, timeouts, slow and stalled bodies, aborts in flight and mid-body run in
  // the cross-handler suite, packages/undici-http-handler/test/fault-suite.integ.spec.ts) -------------------------
  {
    name: "server never answers, no timeout: destroy() ends it",
    async run(ctx) {
      const base = holdQueue(ctx);
      ctx.start({ path: "/never" }, { signal: true });
      await sawRequests(ctx, 1, base);
      ctx.handler.destroy();
    },
    check(ours) {
      expect(errorName(ours.outcomes[0])).toBe("HandlerDestroyedError");
    },
  },
  {
    name: "half-close: the server ends the connection without a response",
    async run(ctx) {
      ctx.start({ path: "/half-close" }, { signal: true });
    },
    check(ours, upstream) {
      expect(ours.outcomes.map(errorName)).toEqual(upstream!.outcomes.map(errorName));
      expect((ours.outcomes[0] as Settled).error?.message).toBe("socket hang up");
    },
  },
  {
    name: "malformed response",
    async run(ctx) {
      ctx.start({ path: "/malformed" }, { signal: true });
    },
    check(ours, upstream) {
      expect(ours.outcomes.map(errorName)).toEqual(upstream!.outcomes.map(errorName));
      expect((ours.outcomes[0] as Settled).error?.code).toMatch(/^HPE_/);
    },
  },
  {
    name: "abort before handle()",
    async run(ctx) {
      const controller = new AbortController();
      ctx.controllers.push(controller);
      controller.abort();
      ctx.start({ path: "/echo" }, { abortSignal: controller.signal as never });
    },
    check(ours, upstream) {
      expect(ours.outcomes.map(errorName)).toEqual(["AbortError"]);
      expect(upstream!.outcomes.map(errorName)).toEqual(["AbortError"]);
    },
  },
  {
    name: "destroy() under load (20 requests, maxSockets 5)",
    agent: { maxSockets: 5 },
    upstreamHangs: "destroy() hands the queued requests new sockets, where they wait for the slow answers",
    async run(ctx) {
      const base = holdQueue(ctx);
      for (let i = 0; i < 20; i++) ctx.start({ path: "/delay", query: { ms: "2000" } }, { signal: true });
      await sawRequests(ctx, 5, base);
      ctx.handler.destroy();
    },
    check(ours) {
      expect(ours.outcomes.map(errorName)).toEqual(Array(20).fill("HandlerDestroyedError"));
    },
  },
  {
    name: "event-loop block while the response arrives (requestTimeout + throw)",
    options: { requestTimeout: 300, throwOnRequestTimeout: true },
    async run(ctx) {
      const base = holdQueue(ctx);
      ctx.start({ path: "/delay", query: { ms: "20" } }, { signal: true });
      await sawRequests(ctx, 1, base);
      const until = Date.now() + 500;
      while (Date.now() < until) {
        // Block the loop past the deadline.
      }
    },
    check(ours) {
      // Sockeye processes the response that arrived during the block before its deadline (see deadline-stall).
      expect(ours.outcomes[0]).toMatchObject({ status: 200 });
    },
  },
  {
    name: "a body consumed, handler simply dropped (no destroy): nothing ref'd is left",
    noDestroy: true,
    async run(ctx) {
      ctx.start({ path: "/echo" }, { signal: true });
      ctx.start({ path: "/large", query: { bytes: "100000" } }, { signal: true });
    },
    check(ours, upstream) {
      expect(ours.outcomes.map(errorName)).toEqual(["status 200", "status 200"]);
      // What stays open is exactly the pooled keep-alive sockets (unref'd), as upstream's.
      expect(ours.notes.freeSockets).toBeGreaterThanOrEqual(1);
      expect(ours.left.openConnections).toBe(ours.notes.freeSockets);
      expect(upstream!.left.openConnections).toBe(upstream!.notes.freeSockets);
    },
  },
  ...destroyDuringSetupScenarios(),
  {
    name: '"per-request" socketMonitor: upstream\'s warning timer per request, none left after destroy()',
    options: { socketMonitor: "per-request" },
    agent: { maxSockets: 1 },
    async run(ctx) {
      const base = holdQueue(ctx);
      const armed: ReturnType<typeof setTimeout>[] = [];
      const cleared = new Set<unknown>();
      const set = vi.spyOn(timing, "setTimeout");
      const clear = vi.spyOn(timing, "clearTimeout").mockImplementation((handle) => {
        cleared.add(handle);
        clearTimeout(handle);
      });
      try {
        // One on the socket, one queued, both answered after 200 ms (upstream's queued request, handed a fresh
        // socket after its destroy(), then finishes instead of hanging the run).
        for (let i = 0; i < 2; i++) ctx.start({ path: "/delay", query: { ms: "200" } }, { signal: true });
        await sawRequests(ctx, 1, base);
        await waitFor(() => queuedIn(ctx.handler) === 1, "the queued request");
        for (const result of set.mock.results) armed.push(result.value);
        // Sockeye clears every request's timer inside destroy() (each request's finish()).
        ctx.handler.destroy();
      } finally {
        set.mockRestore();
        clear.mockRestore();
      }
      ctx.notes.warningTimersArmed = armed.length;
      ctx.notes.warningTimersLeft = armed.filter((t) => !cleared.has(t)).length;
    },
    check(ours) {
      expect(ours.outcomes.map(errorName)).toEqual(Array(2).fill("HandlerDestroyedError"));
      // One native warning timer per request (upstream's design, on purpose in this mode), each cleared.
      expect(ours.notes).toMatchObject({ warningTimersArmed: 2, warningTimersLeft: 0 });
    },
  },
  {
    name: '"interval" socketMonitor with telemetry: false: the warning windows on the shared interval, none left after destroy()',
    options: { socketMonitor: "interval", telemetry: false },
    agent: { maxSockets: 1 },
    async run(ctx) {
      const base = holdQueue(ctx);
      // As above: one on the socket, one queued, both answered after 200 ms.
      for (let i = 0; i < 2; i++) ctx.start({ path: "/delay", query: { ms: "200" } }, { signal: true });
      await sawRequests(ctx, 1, base);
      await waitFor(() => queuedIn(ctx.handler) === 1, "the queued request");
      if (ctx.impl === "sockeye") {
        const runtime = (ctx.handler as any).runtime;
        // Two warning windows (telemetry off: no detector), no native timer, the interval running.
        ctx.notes.armedBeforeDestroy = runtime.hostScheduler.size;
        ctx.notes.tickingBeforeDestroy = runtime.hostScheduler.ticking;
        ctx.notes.poolStats = (ctx.handler as NodeHttpHandler).getPoolStats().origins.length;
      }
      ctx.handler.destroy();
    },
    check(ours) {
      expect(ours.outcomes.map(errorName)).toEqual(Array(2).fill("HandlerDestroyedError"));
      expect(ours.notes).toMatchObject({ armedBeforeDestroy: 2, tickingBeforeDestroy: true, poolStats: 0 });
    },
  },
  {
    name: "2. idleSocketTimeout's default closes the handler's own idle socket before reuse (server keep-alive is longer)",
    // The handler's clock (`performance`, read through the `timing` seam) is faked so the socket can idle for the
    // default idleSocketTimeout without the test waiting 4 s; sockets and servers stay real. The test server keeps
    // Node's default 5 s keep-alive timeout (longer than the 4 s default), so it never closes the socket itself.
    before() {
      vi.useFakeTimers({ toFake: ["performance"] });
    },
    after() {
      vi.useRealTimers();
    },
    async run(ctx) {
      const first = ctx.start({ path: "/echo" });
      const { response } = await ctx.pending[first];
      await readAll(response.body);
      const agents = agentsOf(ctx.handler);
      await waitFor(() => socketsIn(agents, "freeSockets") === 1, "the socket back in the pool");
      const connections = ctx.server.connections;
      // The pooled socket idles for the default idleSocketTimeout (no option set) on the handler's clock.
      vi.advanceTimersByTime(DEFAULT_IDLE_SOCKET_TIMEOUT_MS);
      const second = ctx.start({ path: "/echo" });
      await settleAll([ctx.pending[second]], ctx.capMs);
      ctx.notes.newConnectionsForSecond = ctx.server.connections - connections;
      if (ctx.impl === "sockeye") {
        const origin = (ctx.handler as NodeHttpHandler).getPoolStats().origins[0];
        ctx.notes.closedIdleTimeout = origin?.sockets.closed.idle_timeout;
        ctx.notes.reusedAcquisitions = origin?.sockets.reusedAcquisitions;
      }
    },
    check(ours, upstream) {
      expect(ours.outcomes.map(errorName)).toEqual(["status 200", "status 200"]);
      // Sockeye closed the idle socket (reason idle_timeout) before the second request could take it.
      expect(ours.notes).toMatchObject({ newConnectionsForSecond: 1, closedIdleTimeout: 1, reusedAcquisitions: 0 });
      // Upstream hands the second request the socket that idled past the limit (the ECONNRESET race window).
      expect(upstream!.outcomes.map(errorName)).toEqual(["status 200", "status 200"]);
      expect(upstream!.notes.newConnectionsForSecond).toBe(0);
    },
  },
];

/**
 * Defect 3's last gap: `destroy()` while the first `handle()` is still in setup (the config provider resolving, the
 * http agent being created: every handler's first call), with object and provider options. Upstream's `destroy()`
 * sees no config yet, does nothing, and the request is then sent; Sockeye rejects it and opens no connection. A
 * `handle()` called after `destroy()` works in both, as upstream.
 */
function destroyDuringSetupScenarios(): Scenario[] {
  return ([false, true] as const).map((provider) => ({
    name: `3c. destroy() during the first handle()'s setup (${provider ? "provider" : "object"} options): no connection`,
    provider,
    async run(ctx: Ctx) {
      const connections = ctx.server.connections;
      ctx.start({ path: "/echo" }, { signal: true });
      // Same turn: the handle() above is still awaiting its config (and, for http:, its lazily created agent).
      ctx.handler.destroy();
      await settleAll([ctx.pending[0]], ctx.capMs);
      ctx.notes.connectionsAfterDestroy = ctx.server.connections - connections;
      ctx.notes.configAfterDestroy = Object.keys(ctx.handler.httpHandlerConfigs()).length > 0;
      // handle() after destroy() works (new connection), as upstream.
      const later = ctx.start({ path: "/echo" });
      await settleAll([ctx.pending[later]], ctx.capMs);
    },
    check(ours: RunResult, upstream: RunResult | undefined) {
      expect((ours.outcomes[0] as Settled).error).toMatchObject({
        name: "HandlerDestroyedError",
        code: "ERR_HANDLER_DESTROYED",
      });
      expect((ours.outcomes[0] as Settled).error?.message).toContain("while handle() was still resolving");
      expect(ours.notes.connectionsAfterDestroy).toBe(0);
      expect(errorName(ours.outcomes[1])).toBe("status 200");
      // Upstream: destroy() found no config, so the request was sent on a new connection anyway.
      expect(upstream!.outcomes.map(errorName)).toEqual(["status 200", "status 200"]);
      expect(upstream!.notes.connectionsAfterDestroy).toBe(1);
    },
  }));
}

/** `String(value)`, strings quoted: how Sockeye's errors print a bad value. */
function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe.each(KINDS)("fault suite: bad options vs @smithy/node-http-handler over %s", (kind) => {
  it("rejects bad option values with a clear error naming option and value; no connection, nothing pending", async () => {
    const server = await startServer(kind);
    const agentOptions = kind === "https" ? { httpsAgent: { ca: CA } } : {};
    try {
      const bad: [keyof NodeHttpHandlerOptions, unknown][] = [
        ["requestTimeout", -1],
        ["connectionTimeout", "5s"],
        ["throwOnRequestTimeout", "true"],
        ["throwOnRequestTimeout", 1],
        ["throwOnRequestTimeout", "false"],
        ["socketMonitor", "sometimes"],
        ["httpAgent", 5],
      ];
      for (const [name, value] of bad) {
        const named = new RegExp(`invalid (option|environment variable) ${name}: ${escapeRegExp(shown(value))}`);
        // Object options: the constructor throws, naming the option and the value.
        expect(() => new NodeHttpHandler({ ...agentOptions, [name]: value } as NodeHttpHandlerOptions)).toThrow(named);
        // Provider: every handle() rejects with the same error; no connection, nothing pending.
        const handler = new NodeHttpHandler(async () => ({ ...agentOptions, [name]: value }) as NodeHttpHandlerOptions);
        await expect(handler.handle(requestTo(server))).rejects.toThrow(named);
        handler.destroy();
      }
      expect(server.connections).toBe(0);
    } finally {
      await server.close();
    }
  });

  it.each([1, "false"])(
    "throwOnRequestTimeout %j: upstream takes any truthy value as true and throws; Sockeye refuses the value",
    async (value) => {
      const server = await startServer(kind);
      const agentOptions = kind === "https" ? { httpsAgent: { ca: CA } } : {};
      const options = { ...agentOptions, requestTimeout: 100, throwOnRequestTimeout: value } as never;
      try {
        const upstream = new UpstreamNodeHttpHandler(options);
        const outcome = await upstream.handle(requestTo(server, { path: "/never" })).then(
          () => "resolved",
          (error: Error & { code?: string }) => `${error.name} ${error.code}: ${error.message}`
        );
        upstream.destroy();
        // Observed: even "false" turns the warning into an error.
        expect(outcome).toContain("TimeoutError ETIMEDOUT: @smithy/node-http-handler - [ERROR]");
        expect(() => new NodeHttpHandler(options)).toThrow(
          `invalid option throwOnRequestTimeout: ${shown(value)}; expected a boolean (true or false).`
        );
        expect(server.connections).toBe(1);
      } finally {
        await server.close();
      }
    }
  );

  it('updateHttpClientConfig("requestTimeout", "abc"): Sockeye throws naming option and value and keeps its config; upstream accepts it', async () => {
    const server = await startServer(kind);
    const agentOptions = kind === "https" ? { httpsAgent: { ca: CA } } : {};
    const warnings: { upstream: string[]; sockeye: string[] } = { upstream: [], sockeye: [] };
    const loggerFor = (into: string[]) => ({ ...console, warn: (message: string) => into.push(message) });
    const upstream = new UpstreamNodeHttpHandler({ ...agentOptions, logger: loggerFor(warnings.upstream) });
    const ours = new NodeHttpHandler({ ...agentOptions, logger: loggerFor(warnings.sockeye) });
    try {
      upstream.updateHttpClientConfig("requestTimeout", "abc" as never);
      expect(() => ours.updateHttpClientConfig("requestTimeout", "abc" as never)).toThrow(
        'invalid option requestTimeout: "abc"; expected a number of milliseconds >= 0'
      );
      const statusOf = async (handler: AnyHandler) => {
        const { response } = await handler.handle(requestTo(server, { path: "/delay", query: { ms: "30" } }));
        await readAll(response.body as IncomingMessage);
        return response.statusCode;
      };
      expect(await statusOf(ours)).toBe(200);
      expect(ours.httpHandlerConfigs().requestTimeout).toBeUndefined();
      expect(warnings.sockeye).toEqual([]);
      // Upstream keeps "abc": its timer coerces it to 1 ms, so every request logs a bogus requestTimeout warning.
      expect(await statusOf(upstream)).toBe(200);
      expect(upstream.httpHandlerConfigs().requestTimeout).toBe("abc");
      expect(warnings.upstream.join("\n")).toContain("exceeded the configured abc ms requestTimeout");
    } finally {
      upstream.destroy();
      ours.destroy();
      await server.close();
    }
  });
});

describe.each(KINDS)("fault suite vs @smithy/node-http-handler over %s", (kind) => {
  it.each(SCENARIOS.map((s) => [s.name, s] as const))("%s", async (_name, scenario) => {
    const upstream = scenario.sockeyeOnly ? undefined : await runOnce("upstream", kind, scenario);
    const ours = await runOnce("sockeye", kind, scenario);
    scenario.check?.(ours, upstream, kind);
    // Nothing of ours is left...
    // Not destroyed: pooled keep-alive sockets stay open, unref'd (they never keep the process alive).
    const keepAlive = scenario.noDestroy ? { openConnections: ours.left.openConnections } : {};
    expect(ours.left).toEqual({
      pending: 0,
      openConnections: 0,
      newConnections: 0,
      abortListeners: 0,
      refTimers: 0,
      refHandles: 0,
      queued: 0,
      ...keepAlive,
    });
    expect(ours.internal).toEqual({ inFlight: 0, armed: 0, ticking: false, monitorInFlight: 0, monitorQueued: 0 });
    // ...and never worse than upstream on any count.
    if (upstream !== undefined) {
      for (const key of Object.keys(ours.left) as (keyof Leftovers)[]) {
        expect(
          ours.left[key],
          `${key}: sockeye ${ours.left[key]} vs upstream ${upstream.left[key]}`
        ).toBeLessThanOrEqual(upstream.left[key]);
      }
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled.splice(0)).toEqual([]);
  });
});
