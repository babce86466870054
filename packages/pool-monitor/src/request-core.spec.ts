import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { DeadlineKind } from "./deadline-kind";
import { DeadlineScheduler } from "./deadline-scheduler";
import { FAKE_TIMERS } from "./fake-timers.mock";
import { IdleWatch } from "./idle-watch";
import { OriginTelemetry, type RequestOutcome } from "./origin-telemetry";
import type { PoolReading } from "./pool-reading";
import type { PoolEvent } from "./pool-stats";
import { RequestCore } from "./request-core";
import { DeadlinePlan } from "./request-core-plan";
import { RequestPhase } from "./request-core-phase";
import type { WireFacts } from "./request-finished";
import { TelemetryCore } from "./telemetry-core";
import { timing } from "./timing";

class Origin extends OriginTelemetry {}

class Monitor extends TelemetryCore<Origin> {
  protected newOrigin(key: string): Origin {
    return new Origin(key, this.monitorOptions);
  }
  protected read(_o: Origin, _now: number, _r: PoolReading): void {}
}

/** A transport of tests: records what the core asks of it. */
class TestRequest extends RequestCore<Origin> {
  failures: { error: Error; outcome: RequestOutcome }[] = [];
  continued = 0;
  get errorPrefix(): string {
    return "@test/transport";
  }
  get waitsFor(): "connection" {
    return "connection";
  }
  fail(error: Error, outcome: RequestOutcome): void {
    this.failures.push({ error, outcome });
    this.rejectWith(error, outcome);
    this.finish(outcome);
  }
  protected wireFacts(): WireFacts {
    return {
      scheme: "http",
      method: "GET",
      statusCode: 200,
      protocolVersion: null,
      requestBodySize: undefined,
      responseBodySize: "5",
    };
  }
  protected override deadlineExpired(kind: DeadlineKind, ms: number, now: number): void {
    if (kind === DeadlineKind.Continue) this.continued++;
    else super.deadlineExpired(kind, ms, now);
  }
  start(): Promise<unknown> {
    return new Promise((resolve, reject) => this.begin(resolve, reject));
  }
  queue(): void {
    this.enterQueue(timing.now());
  }
  connect(): void {
    const now = timing.now();
    this.countAcquired(now, false);
    this.enterPhase(RequestPhase.Connected, now);
  }
  respond(): void {
    this.resolveWith({ ok: true }, timing.now());
  }
  end(): void {
    this.countReleased(timing.now());
    this.finish("completed");
  }
}

type Durations = ConstructorParameters<typeof DeadlinePlan<"undici">>[1];

function setup(durations: Partial<Durations>, transportArmed: ("socket_idle" | "request")[] = []) {
  const scheduler = new DeadlineScheduler();
  const plan = new DeadlinePlan<"undici">(
    scheduler,
    {
      connection: undefined,
      acquire: undefined,
      request: undefined,
      socket_idle: undefined,
      unread_body: undefined,
      ...durations,
    },
    transportArmed
  );
  const monitor = new Monitor();
  const origin = monitor.originFor("http://h:80");
  const make = (signal?: AbortController["signal"]) => new TestRequest(plan, monitor, origin, signal);
  return { scheduler, plan, monitor, origin, make };
}

describe("RequestCore", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("costs one arm and one disarm for a request whose deadlines all end in time, with one node", async () => {
    const { scheduler, make } = setup({ connection: 1000, acquire: 2000, request: 5000, socket_idle: 3000 });
    const arm = vi.spyOn(scheduler, "arm");
    const disarm = vi.spyOn(scheduler, "disarm");
    const r = make();
    const p = r.start();
    r.connect();
    r.respond();
    for (let i = 0; i < 10; i++) r.lastActive = timing.now();
    r.end();
    await expect(p).resolves.toEqual({ ok: true });
    expect(arm).toHaveBeenCalledTimes(1);
    expect(disarm).toHaveBeenCalledTimes(1);
    expect(new Set(arm.mock.calls.map((c) => c[0])).size).toBe(1);
    expect(scheduler.size).toBe(0);
  });

  it("fires the earliest armed kind with its rule's error and counts the request timed out", async () => {
    const { make, origin } = setup({ connection: 1000, request: 500 });
    const r = make();
    const p = r.start();
    const failed = expect(p).rejects.toThrow(/500 ms requestTimeout/);
    vi.advanceTimersByTime(500);
    await failed;
    expect(r.failures.map((f) => f.outcome)).toEqual(["timed_out"]);
    expect(origin.timedOut).toBe(1);
    expect(origin.inFlightCount).toBe(0);
  });

  it("an ended kind leaves the node armed early; it re-arms for the next kind without firing", async () => {
    const { scheduler, make } = setup({ connection: 100, request: 1000 });
    const r = make();
    const p = r.start();
    r.connect(); // connection ends
    vi.advanceTimersByTime(100);
    expect(r.failures).toEqual([]);
    expect(scheduler.size).toBe(1);
    const failed = expect(p).rejects.toThrow(/requestTimeout/);
    vi.advanceTimersByTime(900);
    await failed;
  });

  it("an idle kind fires its limit after the last activity, and not while paused", async () => {
    const { make } = setup({ socket_idle: 100 });
    const r = make();
    const p = r.start();
    r.connect();
    r.respond();
    await p;
    vi.advanceTimersByTime(60);
    r.lastActive = timing.now();
    vi.advanceTimersByTime(60);
    expect(r.failures).toEqual([]);
    r.pauseIdle();
    vi.advanceTimersByTime(1000);
    expect(r.failures).toEqual([]);
    r.resumeIdle(timing.now());
    vi.advanceTimersByTime(99);
    expect(r.failures).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(r.failures.map((f) => f.error.message)).toEqual([expect.stringMatching(/100 ms/)]);
  });

  it("a transport-armed kind starts at armDeadline and ends at endDeadline or its phase", async () => {
    const { make } = setup({ socket_idle: 100 }, ["socket_idle"]);
    const r = make();
    void r.start();
    r.connect();
    vi.advanceTimersByTime(500);
    expect(r.failures).toEqual([]);
    r.armDeadline(DeadlineKind.SocketIdle, timing.now());
    expect(r.deadlineArmed(DeadlineKind.SocketIdle)).toBe(true);
    r.endDeadline(DeadlineKind.SocketIdle);
    vi.advanceTimersByTime(500);
    expect(r.failures).toEqual([]);
  });

  it("unread_body runs from the response until bodyReadStarted(), then never fires; unread, it fails with its rule's error", async () => {
    const { scheduler, plan, make } = setup({ unread_body: 200 });
    expect(plan.unreadBodyIndex).toBe(0);
    const read = make();
    const p1 = read.start();
    read.connect();
    vi.advanceTimersByTime(1000); // not armed before the response
    expect(read.deadlineArmed(DeadlineKind.UnreadBody)).toBe(false);
    read.respond();
    await p1;
    expect(read.deadlineDueAt(DeadlineKind.UnreadBody)).toBe(timing.now() + 200);
    vi.advanceTimersByTime(150);
    read.bodyReadStarted();
    read.bodyReadStarted(); // each later read: a no-op
    expect(scheduler.size).toBe(0);
    vi.advanceTimersByTime(1000);
    expect(read.failures).toEqual([]);
    read.end();

    const unread = make();
    const p2 = unread.start();
    unread.connect();
    unread.respond();
    await p2;
    vi.advanceTimersByTime(199);
    expect(unread.failures).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(unread.failures.map((f) => [f.outcome, f.error.message])).toEqual([
      [
        "timed_out",
        "@test/transport - the response body was not read within unreadBodyTimeout=200 ms, so it was destroyed and its connection freed.",
      ],
    ]);
    expect(unread.failures[0].error).toMatchObject({ name: "TimeoutError", deadline: "unread_body" });
  });

  it("bodyReadStarted() is a no-op when unreadBodyTimeout is off", async () => {
    const { plan, make } = setup({ request: 500 });
    expect(plan.unreadBodyIndex).toBe(-1);
    const r = make();
    const p = r.start();
    r.respond();
    await p;
    r.bodyReadStarted();
    r.end();
    expect(r.failures).toEqual([]);
  });

  it("aborts through the signal (the request is the listener) and through a legacy onabort", async () => {
    const { make, origin } = setup({});
    const ac = new AbortController();
    const r = make(ac.signal);
    const p = r.start();
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: "AbortError" });
    expect(origin.aborted).toBe(1);
    const legacy = { aborted: false, onabort: null as null | (() => void) };
    const r2 = make(legacy as never);
    const p2 = r2.start();
    legacy.onabort?.();
    await expect(p2).rejects.toMatchObject({ name: "AbortError" });
    expect(legacy.onabort).toBeNull();
  });

  it("finish() is idempotent and never leaves the promise pending", async () => {
    const { make, origin } = setup({});
    const a = make();
    const b = make();
    const pa = a.start();
    void b.start();
    a.end();
    a.end();
    await expect(pa).rejects.toThrow(/ended without a response/);
    expect(origin.started).toBe(2);
    expect(origin.inFlightCount).toBe(1);
  });

  it("publishes one request:finished with the wire's facts and the core's", async () => {
    const { make, monitor } = setup({});
    const events: PoolEvent[] = [];
    monitor.subscribe((e) => events.push(e));
    const r = make();
    r.queue();
    const p = r.start();
    r.connect();
    r.respond();
    await p;
    r.end();
    expect(events.map((e) => e.type)).toEqual(["request:enqueued", "request:acquired", "request:finished"]);
    expect(events[2]).toMatchObject({
      origin: "http://h:80",
      method: "GET",
      statusCode: 200,
      outcome: "completed",
      responseBodySize: 5,
      queuedMs: null,
    });
  });
});

describe("IdleWatch", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires the limit after the last activity, with one arm per period whatever the activity", () => {
    const scheduler = new DeadlineScheduler();
    const idle: number[] = [];
    const w = new IdleWatch(scheduler, { onIdle: (now) => idle.push(now) });
    const arm = vi.spyOn(scheduler, "arm");
    const t0 = timing.now();
    w.start(100, t0);
    for (let i = 0; i < 9; i++) {
      vi.advanceTimersByTime(10);
      w.lastActive = timing.now();
    }
    vi.advanceTimersByTime(100);
    expect(idle).toEqual([t0 + 190]);
    expect(arm).toHaveBeenCalledTimes(2);
    expect(w.watching).toBe(false);
  });
});
