/**
 * The link queue list (`enqueueOnLink` / `dequeueFromLink` / `queueHead`): FIFO order, lazy skipping of requests
 * that left from behind the head, and no pointer from an entry that left the list to the requests queued after it
 * (a dead entry the young-generation GC has promoted would otherwise keep the whole younger queue alive). An origin's
 * agent link is forgotten as soon as its name holds nothing.
 */
import { describe, expect, test as it } from "vitest";
import { resolvePoolMonitorOptions } from "./pool-monitor-options";
import { TrackedRequestState } from "./request-forwarding";
import {
  AgentLinks,
  dequeueFromLink,
  dropLinkIfIdle,
  enqueueOnLink,
  OriginState,
  PoolLink,
  queueHead,
  type RequestState,
} from "./tracking-state";

function newLink(): PoolLink {
  return new PoolLink({} as never, "127.0.0.1:1:", {} as never);
}

/** A queued request's state on `link` (only the fields the list reads are meaningful). */
function enqueue(link: PoolLink, startedAt: number): RequestState {
  const st = new TrackedRequestState({} as never, startedAt);
  st.isQueued = true;
  enqueueOnLink(link, st);
  return st;
}

/** Leaves the queue as `leaveQueue()` does: flag first, then the list. */
function leave(st: RequestState): void {
  st.isQueued = false;
  dequeueFromLink(st);
}

describe("link queue list", () => {
  it("serves in FIFO order; the head that leaves drops its pointer to the next request", () => {
    const link = newLink();
    const [a, b, c] = [enqueue(link, 1), enqueue(link, 2), enqueue(link, 3)];
    expect(queueHead(link)).toBe(a);
    leave(a);
    expect(a.qNext).toBeUndefined();
    expect(a.queueLink).toBeUndefined();
    expect(queueHead(link)).toBe(b);
    leave(b);
    expect(b.qNext).toBeUndefined();
    leave(c);
    expect(queueHead(link)).toBeUndefined();
    expect(link.queueTail).toBeUndefined();
  });

  it("skips a request that left from behind the head, and unlinks it once it reaches the head", () => {
    const link = newLink();
    const [a, b, c] = [enqueue(link, 1), enqueue(link, 2), enqueue(link, 3)];
    leave(b); // aborted while queued: still linked, so the chain a -> b -> c stays intact
    expect(a.qNext).toBe(b);
    expect(b.qNext).toBe(c);
    expect(queueHead(link)).toBe(a);
    leave(a);
    expect(a.qNext).toBeUndefined();
    // Behind the head that left is the stale b: it is dropped with it, and its pointer cleared.
    expect(queueHead(link)).toBe(c);
    expect(b.qNext).toBeUndefined();
    expect(link.queueHead).toBe(c);
  });

  it("empties when the last entries all left from behind the head", () => {
    const link = newLink();
    const [a, b] = [enqueue(link, 1), enqueue(link, 2)];
    leave(b);
    leave(a);
    expect(queueHead(link)).toBeUndefined();
    expect(link.queueTail).toBeUndefined();
    expect(b.qNext).toBeUndefined();
    // A request queued afterwards starts a fresh list.
    const c = enqueue(link, 3);
    expect(queueHead(link)).toBe(c);
    expect(b.qNext).toBeUndefined();
  });
});

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
