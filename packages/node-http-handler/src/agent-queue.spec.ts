import { Agent, type ClientRequest } from "node:http";
import { describe, expect, test as it } from "vitest";
import { describeAgentQueue, leaveAgentQueue } from "./agent-queue";

// A real Agent; its queue is filled by hand with stand-in requests (only identity matters to the surgery).
function agentWith(queues: Record<string, unknown[]>): Agent {
  const agent = new Agent({ maxSockets: 2 });
  Object.assign(agent.requests, queues);
  return agent;
}

describe("leaveAgentQueue", () => {
  it("removes the request from its queue and reports it was queued", () => {
    const a = {} as ClientRequest;
    const b = {} as ClientRequest;
    const agent = agentWith({ "h:1:": [a, b] });
    expect(leaveAgentQueue(agent, a)).toBe(true);
    expect(agent.requests["h:1:"]).toEqual([b]);
    agent.destroy();
  });

  it("deletes an emptied queue and returns false for a request that is not queued", () => {
    const a = {} as ClientRequest;
    const agent = agentWith({ "h:1:": [a] });
    expect(leaveAgentQueue(agent, a)).toBe(true);
    expect("h:1:" in agent.requests).toBe(false);
    expect(leaveAgentQueue(agent, a)).toBe(false);
    agent.destroy();
  });

  it("copes with duck-typed agents that have no queue", () => {
    expect(leaveAgentQueue({} as Agent, {} as ClientRequest)).toBe(false);
  });
});

describe("describeAgentQueue", () => {
  it("names maxSockets and the number queued over every key", () => {
    const agent = agentWith({ a: [{}, {}], b: [{}] });
    expect(describeAgentQueue(agent)).toBe("maxSockets=2, 3 requests queued");
    agent.destroy();
  });
});
