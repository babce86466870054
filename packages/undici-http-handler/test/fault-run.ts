/**
 * Runs one fault scenario through one handler against fresh real loopback servers (an http or https server with
 * the router of `servers.ts`, and a silent TCP server that accepts and never answers), then counts, without
 * sleeping for a guessed time (polls, capped; a passing run never waits for the cap):
 *
 * - each request's outcome as a shape string: `"Name/code"` for a rejection, `"200 body=<summary>"`,
 *   `"200 bodyError=Name/code"` (what a `for await` reader got), `"200 unread"`, or `"pending"`; and each error's
 *   message;
 * - `connections`: TCP connections accepted by both servers over the whole run (after `destroy()` included);
 * - what is left after `destroy()`: unsettled promises, connections still open at the servers, `'abort'` listeners
 *   on the callers' signals, ref'd timers and handles more than before the run (`process.getActiveResourcesInfo()`), uncaught exceptions and unhandled
 *   rejections (through the spec file's {@link ProcessFaultCapture}).
 */
import { getEventListeners } from "node:events";
import type { Readable } from "node:stream";
import { activeResources } from "../../node-http-handler/test/active-resources";
import type { ProcessFaultCapture } from "../../node-http-handler/test/process-fault-capture";
import {
  CA,
  type RequestInit,
  requestTo,
  type ServerKind,
  startServer,
  startSilentTcpServer,
  type TestServer,
  waitFor,
} from "../../node-http-handler/test/servers";
import { type SettleState, settleAll } from "../../node-http-handler/test/settle-all";
import {
  type AnyHandler,
  createHandler,
  type HandlerClasses,
  type HandlerKey,
  isSockeye,
  type NeutralConfig,
  perCallOptions,
} from "./handler-matrix";

/**
 * Upper bound for the scenario's requests and bodies to settle (undici's timeouts fire on a coarse timer, up to
 * about a second late); a passing run never waits for it.
 */
export const CAP_MS = 1500;
/** Upper bound, after `destroy()`, for what is left to settle and for connections to close. */
export const AFTER_DESTROY_CAP_MS = 600;

/** How a body read ended. */
export type BodyResult = { text: string } | { error: unknown };

/** A body being read by the suite (`for await`, as the SDK's stream collectors read). */
export interface BodyReader {
  /** Resolves at the first chunk. */
  first: Promise<void>;
  done: Promise<BodyResult>;
}

/** Starts reading `body` to its end. */
export function readBody(body: Readable): BodyReader {
  let onFirst!: () => void;
  const first = new Promise<void>((resolve) => {
    onFirst = resolve;
  });
  const done = (async (): Promise<BodyResult> => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of body) {
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
        onFirst();
      }
      return { text: Buffer.concat(chunks).toString() };
    } catch (error) {
      return { error };
    }
  })();
  return { first, done };
}

/** A short stable summary of a body: an echo's method and URL, a short text as is, else its length. */
export function summarize(text: string): string {
  if (text.startsWith('{"method"')) {
    const echo = JSON.parse(text) as { method: string; url: string };
    return `echo ${echo.method} ${echo.url}`;
  }
  return text.length <= 40 ? text : `${text.length} bytes`;
}

/** What a scenario gets to play its fault. */
export interface FaultCtx {
  readonly key: HandlerKey;
  readonly kind: ServerKind;
  readonly server: TestServer;
  /** A TCP server that accepts and never writes (https: the TLS handshake never completes). */
  readonly silent: { port: number; readonly openConnections: number; readonly connections: number };
  readonly handler: AnyHandler;
  readonly controllers: AbortController[];
  readonly pending: Promise<{ response: { statusCode: number; body: Readable } }>[];
  /** Body readers by request index: started as the response arrives, unless `body: "manual"`. */
  readonly readers: (BodyReader | undefined)[];
  readonly notes: Record<string, unknown>;
  /** Starts a request (with its own AbortController when `signal`); returns its index. */
  start(init: RequestInit, options?: { signal?: boolean }): number;
  /** Calls the handler's `destroy()` during the scenario (what is pending then gets the shorter cap). */
  destroy(): void;
  /** Waits for request `i`'s response and returns its body's reader (started now if not yet). */
  read(i: number): Promise<BodyReader>;
}

/** One scenario of the suite. */
export interface FaultScenario {
  /** Stable id: the expectations table's key. */
  id: string;
  title: string;
  /** Server kinds it runs on (default both). */
  kinds?: ServerKind[];
  /** Handlers it runs on (default all four), e.g. Sockeye-only options. */
  handlers?: HandlerKey[];
  config?: NeutralConfig;
  /** Starts requests and plays the fault; resolves once the scenario's point has been reached. */
  run(ctx: FaultCtx): Promise<void>;
  /**
   * `"read"` (default): each body is read to its end from the moment its response arrives. `"manual"`: only the
   * bodies the scenario reads (`ctx.read`) are read; the others are left unread until the end.
   */
  body?: "read" | "manual";
}

/** What is left after `destroy()`. */
export interface Leftovers {
  pending: number;
  openConnections: number;
  /** `'abort'` listeners left on the callers' signals. */
  abortListeners: number;
  refTimers: number;
  refHandles: number;
  uncaught: string[];
  unhandled: string[];
}

/** Sockeye's own accounting after `destroy()` (every count 0, the interval stopped). */
export interface SockeyeInternals {
  /** `getPoolStats().totals`. */
  inFlight: number;
  queued: number;
  /** Deadlines still armed on the handler's scheduler, and whether its interval still runs. */
  armed: number;
  ticking: boolean;
}

/** The result of one run. */
export interface FaultRunResult {
  outcomes: string[];
  messages: string[];
  connections: number;
  left: Leftovers;
  /** Sockeye's handlers only. */
  internal?: SockeyeInternals;
  notes: Record<string, unknown>;
}

/**
 * Reads a Sockeye handler's internals: `getPoolStats()`, and its deadline scheduler (private: `runtime.hostScheduler`
 * in `NodeHttpHandler`, `scheduler` in `UndiciHttpHandler`). Throws, naming the field, when a refactor moved it, so
 * the suite is updated instead of silently checking less.
 */
export function sockeyeInternals(handler: AnyHandler): SockeyeInternals {
  const h = handler as unknown as {
    getPoolStats(): { totals: { inFlight: number; queued: number } };
    runtime?: { hostScheduler?: { size: number; ticking: boolean } };
    scheduler?: { size: number; ticking: boolean };
  };
  const scheduler = h.runtime?.hostScheduler ?? h.scheduler;
  if (scheduler === undefined || typeof scheduler.size !== "number") {
    throw new Error(
      "fault-run: the handler has no runtime.hostScheduler / scheduler with a size: update sockeyeInternals()"
    );
  }
  const { inFlight, queued } = h.getPoolStats().totals;
  return { inFlight, queued, armed: scheduler.size, ticking: scheduler.ticking };
}

/** `"Name/code"` (`-` for no code). */
export function shapeOf(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown } | null | undefined;
  return `${String(e?.name)}/${e?.code === undefined ? "-" : String(e.code)}`;
}

function messageOf(error: unknown): string {
  return String((error as { message?: unknown } | null | undefined)?.message);
}

/** Runs `scenario` once through `key`'s handler over `kind`. */
export async function runFault(
  classes: HandlerClasses,
  key: HandlerKey,
  kind: ServerKind,
  scenario: FaultScenario,
  capture: ProcessFaultCapture
): Promise<FaultRunResult> {
  const server = await startServer(kind);
  const silent = await startSilentTcpServer();
  capture.take();
  const before = activeResources();
  const config: NeutralConfig = { ...scenario.config, ...(kind === "https" ? { ca: CA } : {}) };
  const handler = createHandler(classes, key, config);
  const perCall = perCallOptions(key, config);
  const notes: Record<string, unknown> = {};
  let destroyedByScenario = false;
  const responses: (Awaited<FaultCtx["pending"][number]>["response"] | undefined)[] = [];
  const ctx: FaultCtx = {
    key,
    kind,
    server,
    silent,
    handler,
    controllers: [],
    pending: [],
    readers: [],
    notes,
    start(init, options = {}) {
      let abortSignal: AbortSignal | undefined;
      if (options.signal) {
        const controller = new AbortController();
        ctx.controllers.push(controller);
        abortSignal = controller.signal;
      }
      const p = handler.handle(requestTo(server, init), { ...perCall, abortSignal }) as FaultCtx["pending"][number];
      const i = ctx.pending.length;
      p.then(
        ({ response }) => {
          responses[i] = response;
          if (scenario.body !== "manual") ctx.readers[i] = readBody(response.body);
        },
        () => {}
      );
      ctx.pending.push(p);
      return i;
    },
    destroy() {
      destroyedByScenario = true;
      handler.destroy();
    },
    async read(i) {
      const { response } = await ctx.pending[i]!;
      ctx.readers[i] ??= readBody(response.body);
      return ctx.readers[i]!;
    },
  };
  try {
    await scenario.run(ctx);
    let states: SettleState<unknown>[] = await settleAll(
      ctx.pending,
      destroyedByScenario ? AFTER_DESTROY_CAP_MS : CAP_MS
    );
    const bodies: (BodyResult | "unread" | "pending" | undefined)[] = [];
    const reading: Promise<void>[] = [];
    states.forEach((state, i) => {
      if (state === "pending" || state.status === "rejected") return;
      const reader = ctx.readers[i];
      if (reader === undefined) {
        bodies[i] = "unread";
        return;
      }
      bodies[i] = "pending";
      reading.push(reader.done.then((result) => void (bodies[i] = result)));
    });
    await settleAll(reading, CAP_MS);
    notes.connectionsBeforeDestroy = server.connections + silent.connections;
    handler.destroy();
    // What destroy() settles: the requests still pending, and (for "unread") the bodies nobody reads.
    states = await settleAll(ctx.pending, AFTER_DESTROY_CAP_MS);
    const open = () => server.openConnections + silent.openConnections;
    await waitFor(() => open() === 0, "connections to close", AFTER_DESTROY_CAP_MS).catch(() => {});
    // Let closes, late errors and timers of this run be processed before counting.
    await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setImmediate(resolve));
    const now = activeResources();
    const outcomes: string[] = [];
    const messages: string[] = [];
    states.forEach((state, i) => {
      if (state === "pending") {
        outcomes.push("pending");
        messages.push("");
      } else if (state.status === "rejected") {
        outcomes.push(shapeOf(state.reason));
        messages.push(messageOf(state.reason));
      } else {
        const body = bodies[i];
        const status = (state.value as { response: { statusCode: number } }).response.statusCode;
        if (body === undefined || body === "pending" || body === "unread") {
          outcomes.push(`${status} ${body ?? "pending"}`);
          messages.push("");
        } else if ("text" in body) {
          outcomes.push(`${status} body=${summarize(body.text)}`);
          messages.push("");
        } else {
          outcomes.push(`${status} bodyError=${shapeOf(body.error)}`);
          messages.push(messageOf(body.error));
        }
      }
    });
    const faults = capture.take();
    const internal = isSockeye(key) ? sockeyeInternals(handler) : undefined;
    return {
      internal,
      outcomes,
      messages,
      connections: server.connections + silent.connections,
      left: {
        pending: states.filter((s) => s === "pending").length,
        openConnections: open(),
        abortListeners: ctx.controllers.reduce((n, c) => n + getEventListeners(c.signal, "abort").length, 0),
        refTimers: Math.max(0, now.timers - before.timers),
        refHandles: Math.max(0, now.handles - before.handles),
        uncaught: faults.uncaught,
        unhandled: faults.unhandled,
      },
      notes,
    };
  } finally {
    handler.destroy();
    await Promise.all([server.close(), silent.close()]);
  }
}
