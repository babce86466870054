/**
 * `TelemetryRig`: one handler under test (`NodeHttpHandler`, `NodeHttp2Handler` or `UndiciHttpHandler`) in front of
 * one or more holding servers (`holding-server.ts`), driven in sample periods, recording everything its telemetry
 * says through the PUBLIC API only: `onSaturation` / `onRecovery`, the `logger`, `poolMonitor.subscribe()`, the
 * `sockeye:pool:*` diagnostics channels and `getPoolStats()`.
 *
 * Every transport gets the same pool: 2 connections per origin (`httpAgent.maxSockets: 2` for HTTP/1.1; for HTTP/2
 * `maxSessionsPerOrigin: 1` on a server announcing `maxConcurrentStreams: 2`, i.e. 2 stream slots) and the same
 * `saturation` block (passed to `NodeHttp2Handler` too, which has no such option today).
 *
 * Time: the spec fakes `performance` and the timers (`setTimeout`, `setInterval` and their clears); sockets and
 * `setImmediate` stay real. `period()` is one sample period: arrivals and releases happen for real, the rig waits
 * (polling on the real `setTimeout`) until the client saw them (responses, bodies read, the freed slots refilled
 * from the queue), then advances the fake clock by one period and lets one real event-loop turn run (the schedulers
 * confirm expiries from `setImmediate`). The clock stands still while real I/O happens, so every duration the
 * handlers measure is an exact multiple of the period.
 *
 * Costs: one closure per request (test code, not a hot path); a report, event and log line are kept with the period
 * (1-based: the n-th `period()` call) during which it arrived.
 */
import diagnosticsChannel from "node:diagnostics_channel";
import type { Readable } from "node:stream";
import { HttpRequest } from "@smithy/protocol-http";
import { NodeHttp2Handler, NodeHttpHandler } from "@sockeye/node-http-handler";
import { CHANNEL_NAMES, type PoolEvent, type PoolStats, type SaturationReport } from "@sockeye/pool-monitor";
import { vi } from "vitest";
import { UndiciHttpHandler } from "../src/index";
import { HOLDING_SERVER_CA, type HoldingProtocol, type HoldingServer, startHoldingServer } from "./holding-server";

/** The three handlers compared. */
export type TransportName = "NodeHttpHandler" | "NodeHttp2Handler" | "UndiciHttpHandler";

/** Every transport, in table order. */
export const TRANSPORTS: readonly TransportName[] = ["NodeHttpHandler", "NodeHttp2Handler", "UndiciHttpHandler"];

/** Connections (HTTP/1.1 sockets, HTTP/2 stream slots) per origin. */
export const SLOTS = 2;

/** The log prefix each handler should use: `<its package>:WARN - `. */
export const EXPECTED_PREFIX: Record<TransportName, string> = {
  NodeHttpHandler: "@sockeye/node-http-handler:WARN - ",
  NodeHttp2Handler: "@sockeye/node-http-handler:WARN - ",
  UndiciHttpHandler: "@sockeye/undici-http-handler:WARN - ",
};

/** How a rig is built. */
export interface RigOptions {
  /** The handler's `saturation` block. */
  saturation?: Record<string, number>;
  /** Sample period the rig advances by, ms. @defaultValue `saturation.sampleIntervalMs` or 1000 */
  periodMs?: number;
  /** Number of origins (one holding server each). @defaultValue 1 */
  origins?: number;
  /** Callbacks and `subscribe()` listeners record, then throw. */
  throwingCallbacks?: boolean;
  /** The logger records, then throws. */
  throwingLogger?: boolean;
  /** The handler's `socketMonitor`. @defaultValue unset (`"interval"`) */
  socketMonitor?: "interval" | "per-request" | "off";
  /** https / h2 over TLS (the fixture certificate, trusted through `ca`) instead of cleartext. */
  tls?: boolean;
}

/** Something the telemetry said, with the period it arrived in. */
export interface Seen<T> {
  period: number;
  /** Fake-clock time, ms. */
  at: number;
  value: T;
}

interface OriginCounters {
  started: number;
  responded: number;
  completed: number;
  failed: number;
  unread: Readable[];
}

/** See the header. */
export class TelemetryRig {
  /** What `onSaturation` and `onRecovery` received, in order. */
  readonly reports: Seen<SaturationReport>[] = [];
  readonly events: Seen<PoolEvent>[] = [];
  readonly channelEvents: Seen<PoolEvent>[] = [];
  readonly lines: Seen<string>[] = [];
  /** Periods advanced so far. */
  period = 0;
  /** Fake-clock time the rig was built at (the first requests start then), ms. */
  readonly createdAt = performance.now();
  readonly periodMs: number;
  private readonly counters: OriginCounters[];
  private readonly pending: Promise<void>[] = [];
  /** Requests whose `handle()` promise settled and whose body (if read) was handled. */
  private settled = 0;
  private readonly unsubscribe: (() => void)[] = [];

  private constructor(
    readonly transport: TransportName,
    readonly servers: HoldingServer[],
    readonly handler: NodeHttpHandler | NodeHttp2Handler | UndiciHttpHandler,
    options: RigOptions
  ) {
    this.periodMs = options.periodMs ?? options.saturation?.sampleIntervalMs ?? 1000;
    this.counters = servers.map(() => ({ started: 0, responded: 0, completed: 0, failed: 0, unread: [] }));
  }

  /** Starts the servers and builds the handler (fake timers must already be installed). */
  static async create(transport: TransportName, options: RigOptions = {}): Promise<TelemetryRig> {
    const protocol: HoldingProtocol = transport === "NodeHttp2Handler" ? "h2c" : "http1";
    const servers: HoldingServer[] = [];
    const tls = options.tls === true;
    for (let i = 0; i < (options.origins ?? 1); i++) servers.push(await startHoldingServer(protocol, SLOTS, tls));
    try {
      return TelemetryRig.build(transport, servers, options);
    } catch (error) {
      for (const s of servers) await s.close();
      throw error;
    }
  }

  private static build(transport: TransportName, servers: HoldingServer[], options: RigOptions): TelemetryRig {
    let rig: TelemetryRig | undefined;
    const record =
      <T>(into: () => Seen<T>[], throws: boolean) =>
      (value: T) => {
        into().push({ period: rig!.period, at: performance.now(), value });
        if (throws) throw new Error("user code bug");
      };
    const throwing = options.throwingCallbacks === true;
    const common = {
      ...(options.socketMonitor === undefined ? {} : { socketMonitor: options.socketMonitor }),
      saturation: options.saturation,
      onSaturation: record(() => rig!.reports, throwing),
      onRecovery: record(() => rig!.reports, throwing),
      logger: {
        trace() {},
        debug() {},
        info() {},
        error() {},
        warn: record(() => rig!.lines, options.throwingLogger === true),
      },
    };
    const agents = { httpAgent: { maxSockets: SLOTS }, httpsAgent: { maxSockets: SLOTS, ca: HOLDING_SERVER_CA } };
    const handler =
      transport === "NodeHttpHandler"
        ? new NodeHttpHandler({ ...common, ...agents })
        : transport === "UndiciHttpHandler"
          ? new UndiciHttpHandler({ ...common, ...agents } as never)
          : // NodeHttp2Handler has no `saturation` option (yet): passed all the same, cast.
            new NodeHttp2Handler({
              ...common,
              maxSessionsPerOrigin: 1,
              nodeHttp2ConnectOptions: { ca: HOLDING_SERVER_CA },
            } as never);
    rig = new TelemetryRig(transport, servers, handler, options);
    const monitor = handler.poolMonitor;
    if (monitor === undefined) {
      handler.destroy();
      throw new Error(`${transport}: no poolMonitor`);
    }
    rig.unsubscribe.push(monitor.subscribe(record(() => rig!.events, throwing)));
    const mine = new Set([...servers.map((s) => s.origin), "_OTHER"]);
    for (const name of [CHANNEL_NAMES.poolSaturated, CHANNEL_NAMES.poolRecovered]) {
      const listener = (message: unknown) => {
        const event = message as PoolEvent;
        if (mine.has(event.origin))
          rig!.channelEvents.push({ period: rig!.period, at: performance.now(), value: event });
      };
      diagnosticsChannel.subscribe(name, listener);
      rig.unsubscribe.push(() => diagnosticsChannel.unsubscribe(name, listener));
    }
    return rig;
  }

  /** The `pool:saturated` / `pool:recovered` events `subscribe()` received. */
  get poolEvents(): Seen<PoolEvent>[] {
    return this.events.filter((e) => e.value.type.startsWith("pool:"));
  }

  /** Every saturation and recovery report, in order, as `[state, cause, trigger]` (`previousCause` on recovery). */
  get sequence(): [string, string | null, string | null][] {
    return this.reports.map(({ value: r }) => [r.state, r.state === "ok" ? r.previousCause : r.cause, r.trigger]);
  }

  /** Starts `n` requests to origin `o`; `/big` responses are left unread (they pin their connection). */
  arrive(n: number, path = "/", o = 0): void {
    const c = this.counters[o];
    const server = this.servers[o];
    for (let i = 0; i < n; i++) {
      c.started++;
      const request = new HttpRequest({
        protocol: server.origin.startsWith("https:") ? "https:" : "http:",
        hostname: "127.0.0.1",
        port: server.port,
        method: "GET",
        path,
        headers: { host: `127.0.0.1:${server.port}` },
      });
      this.pending.push(
        this.handler
          .handle(request)
          .then(
            async ({ response }) => {
              c.responded++;
              const body = response.body as Readable;
              if (path.startsWith("/big")) {
                c.unread.push(body);
                body.on("error", () => {});
                return;
              }
              for await (const _ of body) {
                // read to the end
              }
              c.completed++;
            },
            () => {
              c.failed++;
            }
          )
          .finally(() => {
            this.settled++;
          })
      );
    }
  }

  /** Answers the `n` oldest requests held by origin `o`'s server. */
  release(n?: number, o = 0): number {
    return this.servers[o].release(n);
  }

  /** Unread bodies still open, all origins. */
  get unread(): number {
    return this.counters.reduce((sum, c) => sum + c.unread.length, 0);
  }

  /** Destroys the unread bodies of origin `o` (the caller finally releases them). */
  destroyUnread(o = 0): void {
    const c = this.counters[o];
    for (const body of c.unread.splice(0)) {
      body.destroy();
      c.completed++;
    }
  }

  /** Requests started and not yet answered by origin `o`. */
  outstanding(o = 0): number {
    const c = this.counters[o];
    return c.started - c.responded - c.failed;
  }

  /** Waits until the client saw every arrival, response and body, and the servers hold what the pools allow. */
  async settle(): Promise<void> {
    const started = this.counters.reduce((sum, c) => sum + c.started, 0);
    await waitFor(
      () =>
        this.startedInHandler() === started &&
        this.counters.every((c, o) => {
          const pinned = c.unread.length;
          return (
            c.completed + pinned === c.responded &&
            this.servers[o].held === Math.min(SLOTS - pinned, c.started - c.responded - c.failed)
          );
        }),
      () =>
        `${this.transport}: client and servers to settle (period ${this.period}, started ${started}, handler ${this.startedInHandler()}, ` +
        `${JSON.stringify(this.counters.map((c, o) => ({ ...c, unread: c.unread.length, held: this.servers[o].held })))})`
    );
    if (this.unread > 0) await this.unreadBodiesStill();
  }

  /**
   * Waits until the unread bodies' data stopped moving: the servers' unsent `/big` bytes unchanged over 5 event-loop
   * turns (the client reads what the kernel holds in those turns). Without it, a body still filling its window when
   * the clock advances counts as progress, and a loaded machine reports it unread a sample late.
   */
  private async unreadBodiesStill(): Promise<void> {
    const unsent = () => this.servers.reduce((sum, s) => sum + s.unsentBigBytes, 0);
    let last = -1;
    let still = 0;
    await waitFor(
      () => {
        const now = unsent();
        still = now === last ? still + 1 : 0;
        last = now;
        return still >= 5;
      },
      () => `${this.transport}: the unread bodies' data to stop moving (${unsent()} bytes unsent)`
    );
  }

  /** One sample period: `arrivals` new requests and `releases` answers (origin `o`), settle, advance the clock. */
  async step(arrivals: number, releases: number, path = "/", o = 0): Promise<void> {
    this.arrive(arrivals, path, o);
    if (releases > 0) this.release(releases, o);
    await this.settle();
    await this.advance();
  }

  /** Advances the fake clock by one period, then one real event-loop turn. */
  async advance(): Promise<void> {
    this.period++;
    vi.advanceTimersByTime(this.periodMs);
    await new Promise((resolve) => setImmediate(resolve));
  }

  stats(): PoolStats {
    return this.handler.getPoolStats();
  }

  /** Ends everything: unread bodies destroyed, held requests answered, every request settled, handler destroyed. */
  async close(): Promise<void> {
    for (let o = 0; o < this.servers.length; o++) this.destroyUnread(o);
    for (
      let i = 0;
      i < 200 && this.counters.some((c, o) => c.started > c.responded + c.failed || this.servers[o].held > 0);
      i++
    ) {
      for (const s of this.servers) s.release();
      await realDelay(2);
      for (let o = 0; o < this.servers.length; o++) this.destroyUnread(o);
    }
    this.handler.destroy();
    await waitFor(
      () => this.settled === this.pending.length,
      () => `${this.transport}: every request to settle (${this.settled} of ${this.pending.length})`
    );
    for (const u of this.unsubscribe) u();
    for (const s of this.servers) await s.close();
  }

  private startedInHandler(): number {
    return this.handler.getPoolStats().origins.reduce((sum, o) => sum + o.requests.started, 0);
  }
}

/** The real `setTimeout`, captured before any spec fakes it. */
const realSetTimeout = globalThis.setTimeout;

function realDelay(ms: number): Promise<void> {
  return new Promise((resolve) => realSetTimeout(resolve, ms));
}

/** The rig itself could not drive a scenario (not an assertion about telemetry). */
export class RigError extends Error {
  override name = "RigError";
}

/** Polls `predicate` on the real clock every 2 ms; rejects with a `RigError` after 3 s naming `what`. */
export async function waitFor(predicate: () => boolean, what: () => string): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > 3000) throw new RigError(`timed out waiting for ${what()}`);
    await realDelay(2);
  }
}
