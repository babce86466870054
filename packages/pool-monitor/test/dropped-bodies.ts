/**
 * Helpers of the dropped-body tests of every package (issue 36): send requests and drop their responses with no
 * reference kept, digest a body, and collect garbage until a request settles or a count is reached.
 */
import { createHash } from "node:crypto";
import diagnosticsChannel from "node:diagnostics_channel";
import type { Readable } from "node:stream";
import type { HttpRequest } from "@smithy/protocol-http";
import { CHANNEL_NAMES, type PoolEvent } from "@sockeye/pool-monitor";
import { expect } from "vitest";
import { collectGarbage } from "./heap-after-gc";

/**
 * Sends `count` requests (`request()` builds each) and lets go of every response once its headers are in: nothing of
 * them survives this function (kept out of the caller's frame so no local keeps a body alive). All must be 200.
 */
export async function dropResponses(
  handler: { handle(request: HttpRequest, options?: object): Promise<{ response: any }> },
  request: () => HttpRequest,
  count: number,
  options?: object
): Promise<void> {
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: count }, () =>
      handler.handle(request(), options).then(({ response }) => statuses.push(response.statusCode))
    )
  );
  expect(statuses).toEqual(Array(count).fill(200));
}

/** The SHA-256 and length of everything `body` yields. */
export async function digest(body: Readable): Promise<{ sha: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha: hash.digest("hex"), bytes };
}

/** Collects until `next` settles, at most `rounds` times (a pinned pool never serves it: the test then fails). */
export async function collectUntilSettled(next: Promise<unknown>, rounds: number): Promise<boolean> {
  let settled = false;
  next.then(
    () => (settled = true),
    () => (settled = true)
  );
  for (let i = 0; i < rounds && !settled; i++) {
    await collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return settled;
}

/**
 * Collects a few more times (the next request may be served as soon as one connection is reclaimed; a body last
 * touched in the job a collection ran in survives it) until `count()` reaches `target`, and at least 3 times.
 */
export async function collectUntil(count: () => number | undefined, target: number): Promise<void> {
  for (let i = 0; i < 50 && (i < 3 || count() !== target); i++) await collectGarbage();
}

/** Records the `sockeye:body:reclaimed` events until `stop()`. */
export function listenReclaims(): { events: PoolEvent[]; stop(): void } {
  const events: PoolEvent[] = [];
  const onMessage = (message: unknown) => events.push(message as PoolEvent);
  diagnosticsChannel.subscribe(CHANNEL_NAMES.bodyReclaimed, onMessage);
  return { events, stop: () => diagnosticsChannel.unsubscribe(CHANNEL_NAMES.bodyReclaimed, onMessage) };
}
