/** An origin's agent link is forgotten as soon as its name holds nothing. */
import { describe, expect, test as it } from "vitest";
import { resolvePoolMonitorOptions } from "./pool-monitor-options";
import { AgentLinks, dropLinkIfIdle, OriginState, type PoolLink } from "./tracking-state";

describe("dropLinkIfIdle (issue 33)", () => {
  /** An agent's maps, as Node keeps them: a name is present only while its list is non-empty. */
  function agentOf(busy: Record<string, number>) {
    const sockets: Record<string, unknown[]> = {};
    for (const [name, n] of Object.entries(busy)) sockets[name] = Array.from({ length: n }, () => ({}));
    return { sockets, freeSockets: {} as Record<string, unknown[]>, requests: {} as Record<string, unknown[]> };
  }

  it("forgets a link whose name holds nothing, and only then", () => {
    const agent = agentOf({ a: 1, b: 1, c: 1 });
    const links = new AgentLinks();
    const core = { originLinks: links } as never;
    const o = new OriginState("_OTHER", resolvePoolMonitorOptions(undefined));
    const [a, b, c] = ["a", "b", "c"].map((name) => links.link(o, agent as never, name) as PoolLink);
    expect([...o.poolLinks]).toEqual([a, b, c]);
    // Still a socket under the name: kept.
    dropLinkIfIdle(core, a);
    expect(o.poolLinks.size).toBe(3);
    delete agent.sockets.a;
    o.lastQueueLink = a;
    dropLinkIfIdle(core, a);
    expect([...o.poolLinks]).toEqual([b, c]);
    expect(o.lastQueueLink).toBeUndefined();
    expect(links.agentNames.get(agent as never)?.has("a")).toBe(false);
    // A queued request under the name (the agent's or the embedder's) keeps it too.
    delete agent.sockets.c;
    c.gateQueued = 1;
    dropLinkIfIdle(core, c);
    c.gateQueued = 0;
    agent.requests.c = [{}];
    dropLinkIfIdle(core, c);
    expect([...o.poolLinks]).toEqual([b, c]);
    delete agent.requests.c;
    dropLinkIfIdle(core, c);
    dropLinkIfIdle(core, c); // a second drop is a no-op
    expect([...o.poolLinks]).toEqual([b]);
    // The name carries traffic again: linked anew.
    agent.sockets.a = [{}];
    const again = links.link(o, agent as never, "a") as PoolLink;
    expect(again).not.toBe(a);
    expect([...o.poolLinks]).toEqual([b, again]);
  });
});
