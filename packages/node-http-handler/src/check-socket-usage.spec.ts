import type { Agent } from "node:http";
import { NodeHttpHandler as Upstream } from "@smithy/node-http-handler";
import { describe, expect, it, vi } from "vitest";
import { checkSocketUsage } from "./check-socket-usage";

/** An agent shaped as the check reads it: `sockets`, `requests` and `maxSockets`. */
function agentWith(maxSockets: number, inUse: number, queued: number): Agent {
  const key = "s3.amazonaws.com:443:";
  return {
    maxSockets,
    sockets: { [key]: Array(inUse).fill({}) },
    requests: { [key]: Array(queued).fill({}) },
  } as unknown as Agent;
}

describe('checkSocketUsage (the check "per-request" mode restores)', () => {
  it("logs upstream's message byte for byte, package name included, and returns a new timestamp as upstream does", () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_000_000 });
    try {
      const ours = { warn: vi.fn() };
      const theirs = { warn: vi.fn() };
      const agent = agentWith(2, 2, 4);
      expect(checkSocketUsage(agent, 0, ours as never)).toBe(Upstream.checkSocketUsage(agent, 0, theirs as never));
      expect(theirs.warn).toHaveBeenCalledTimes(1);
      expect(ours.warn.mock.calls).toEqual(theirs.warn.mock.calls);
      expect(ours.warn.mock.calls[0][0]).toMatch(
        /^@smithy\/node-http-handler:WARN - socket usage at capacity=2 and 4 /
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it("stays silent where upstream does: below 2 × maxSockets queued, or within the 15 s lockout", () => {
    vi.useFakeTimers({ toFake: ["Date"], now: 1_000_000 });
    try {
      for (const [agent, since] of [
        [agentWith(2, 2, 3), 0],
        [agentWith(2, 2, 4), 1_000_000 - 14_000],
      ] as const) {
        const ours = { warn: vi.fn() };
        const theirs = { warn: vi.fn() };
        expect(checkSocketUsage(agent, since, ours as never)).toBe(
          Upstream.checkSocketUsage(agent, since, theirs as never)
        );
        expect(ours.warn).not.toHaveBeenCalled();
        expect(theirs.warn).not.toHaveBeenCalled();
      }
    } finally {
      vi.useRealTimers();
    }
  });
});

it("names the package it is given (Sockeye's interval mode without telemetry names Sockeye)", () => {
  const logger = { warn: vi.fn() };
  checkSocketUsage(agentWith(2, 2, 4), 0, logger as never, "@sockeye/node-http-handler");
  expect(logger.warn.mock.calls[0][0]).toMatch(/^@sockeye\/node-http-handler:WARN - socket usage at capacity=2 and 4 /);
});
