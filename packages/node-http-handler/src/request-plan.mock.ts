/**
 * A `RequestPlan` for unit specs that build `InFlightRequest`s directly: plain http on `agent`, throwing connection,
 * request and idle deadlines of 5 s, 10 s and 20 s, no acquisition deadline, no free-socket sweeps; `overrides` replace
 * any field.
 */
import type { Agent } from "node:http";
import { RequestPlan } from "./request-plan";

export function testPlan(agent: Agent, overrides: Partial<RequestPlan> = {}): RequestPlan {
  const plan = new RequestPlan(
    agent,
    false,
    false,
    false,
    false,
    5_000,
    10_000,
    true,
    20_000,
    false,
    undefined,
    undefined,
    undefined,
    false,
    undefined
  );
  return Object.assign(plan, overrides);
}
