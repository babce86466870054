/**
 * A `RequestPlan` for unit specs that build `InFlightRequest`s directly: plain http on `agent`, throwing connection,
 * request and idle deadlines of 5 s, 10 s and 20 s, no acquisition deadline, no free-socket sweeps; `overrides` replace
 * any field.
 */
import type { Agent } from "node:http";
import type { RequestPlan } from "./request-plan";

export function testPlan(agent: Agent, overrides: Partial<RequestPlan> = {}): RequestPlan {
  return {
    agent,
    isSSL: false,
    oneOffAgent: false,
    swept: false,
    expectContinue: false,
    connectWaitMs: 5_000,
    requestMs: 10_000,
    requestTimeoutThrows: true,
    socketIdleMs: 20_000,
    socketTimeoutIsServiceDefault: false,
    acquireMs: undefined,
    maxQueued: Number.POSITIVE_INFINITY,
    unreadBodyMs: undefined,
    lifetimeMs: undefined,
    logger: undefined,
    callerAgent: false,
    agentGate: undefined,
    ...overrides,
  };
}
