import type { Logger } from "@smithy/types";
import { DeadlineScheduler, timing } from "@sockeye/pool-monitor/internal";
import { Agent } from "node:http";
import type https from "node:https";
import { afterEach, beforeEach, describe, expect, test as it, vi } from "vitest";
import { MIN_WARNING_WINDOW_MS } from "./constants";
import { FAKE_TIMERS } from "../../pool-monitor/src/fake-timers.mock";
import type { RequestPlan } from "./request-plan";
import { testPlan } from "./request-plan.mock";
import { SocketUsageWarning, type SocketUsageWarningSettings, type WarnedRequest } from "./socket-usage-warning";

/** A real Agent whose maps are filled by hand: `active` sockets in use and `queued` requests for one key. */
function busyAgent(active: number, queued: number): Agent {
  const agent = new Agent({ maxSockets: active });
  Object.assign(agent.sockets, { "h:1:": Array(active).fill({}) });
  Object.assign(agent.requests, { "h:1:": Array(queued).fill({}) });
  return agent;
}

function request(agent: Agent, logger?: { warn: (m: string) => void }): WarnedRequest & { windows: number } {
  const r = {
    requestPlan: testPlan(agent, { logger: logger as RequestPlan["logger"] }),
    usageWarning: undefined,
    warningTimer: undefined,
    windows: 0,
    onDeadline() {
      r.windows++;
      warning.onWindow(r);
    },
  } as WarnedRequest & { windows: number };
  return r;
}

let scheduler: DeadlineScheduler;
let warning: SocketUsageWarning;
const settings = (mode: SocketUsageWarningSettings["socketMonitor"], agent: Agent, logger = { warn: vi.fn() }) => ({
  socketMonitor: mode,
  socketAcquisitionWarningTimeout: 0,
  requestTimeout: undefined,
  connectionTimeout: undefined,
  logger: logger as unknown as Logger & { warn: ReturnType<typeof vi.fn> },
  httpAgent: undefined,
  httpsAgent: agent as https.Agent,
});

describe("SocketUsageWarning", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: [...FAKE_TIMERS] });
    vi.setSystemTime(100_000);
    scheduler = new DeadlineScheduler();
    warning = new SocketUsageWarning(scheduler);
  });
  afterEach(() => {
    scheduler.stop();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('"interval" without telemetry: a Deadline of at least MIN_WARNING_WINDOW_MS, then upstream\'s check', () => {
    const agent = busyAgent(1, 2);
    const s = settings("interval", agent);
    warning.warningSettings = s;
    const r = request(agent);
    warning.arm(r, timing.now(), false);
    expect(scheduler.size).toBe(1);
    vi.advanceTimersByTime(MIN_WARNING_WINDOW_MS - 1);
    expect(s.logger.warn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(s.logger.warn).toHaveBeenCalledTimes(1);
    expect(s.logger.warn.mock.calls[0][0]).toContain("socket usage at capacity=1 and 2 additional requests");
  });

  it('"interval" with telemetry arms nothing per request; "off" and infinite pools arm nothing at all', () => {
    const agent = busyAgent(1, 2);
    warning.warningSettings = settings("interval", agent);
    warning.arm(request(agent), timing.now(), true);
    expect(scheduler.size).toBe(0);
    warning.warningSettings = settings("off", agent);
    warning.arm(request(agent), timing.now(), false);
    warning.warningSettings = settings("interval", agent);
    warning.arm(request(new Agent()), timing.now(), false);
    expect(scheduler.size).toBe(0);
    // The detector samples on its owner's tick (this scheduler has none): no timer, nothing per request.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('"per-request": upstream\'s native timer per request, cleared by clear()', () => {
    const agent = busyAgent(1, 2);
    const logger = { warn: vi.fn() };
    warning.warningSettings = { ...settings("per-request", agent), socketAcquisitionWarningTimeout: 3000 };
    const r = request(agent, logger);
    warning.arm(r, timing.now(), true);
    expect(r.warningTimer).toBeDefined();
    const cleared = request(agent, logger);
    warning.arm(cleared, timing.now(), true);
    warning.clear(cleared);
    vi.advanceTimersByTime(3000);
    expect(logger.warn).toHaveBeenCalledTimes(1); // the first only; the lockout holds afterwards
    expect(r.warningTimer).toBeUndefined();
  });

  it("a throwing logger is isolated", () => {
    const agent = busyAgent(1, 2);
    warning.warningSettings = settings("interval", agent, {
      warn: vi.fn(() => {
        throw new Error("logger down");
      }),
    });
    const r = request(agent);
    warning.arm(r, timing.now(), false);
    expect(() => vi.advanceTimersByTime(MIN_WARNING_WINDOW_MS)).not.toThrow();
    expect(r.windows).toBe(1);
  });
});
