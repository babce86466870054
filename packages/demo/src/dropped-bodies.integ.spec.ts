/**
 * The demo's dropped-body phase, run for real: the demo's S3 endpoint, a real `S3Client` on Sockeye's
 * `NodeHttpHandler` and a twin on upstream's `NodeHttpHandler`, both with maxSockets 8. Each drops eight 1 MiB
 * `GetObject` bodies unread (metadata read, no reference kept), sends a probe, and a full garbage collection runs while
 * the probes wait. Upstream's client is dead: its probe gets no socket and is aborted at the deadline, with all eight
 * sockets still in use. Sockeye's is served after the collection, counts the reclaimed bodies in `getPoolStats()`
 * and says so in the episode's saturation report. Bounded: probes are aborted after 6 s (the collection runs 1 s
 * before at the latest), the twin is destroyed.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterEach, describe, expect, it } from "vitest";
import { collectGarbage } from "./collect-garbage.mjs";
import { runDroppedBodies, upstreamTwin } from "./dropped-bodies.mjs";
import { startS3Server } from "./s3-server.mjs";

const MAX_SOCKETS = 8;
const DEADLINE_MS = 6000;
const big = { Bucket: "dropped", Key: "object-1m.bin" };
const small = { Bucket: "dropped", Key: "object-16k.bin" };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!predicate() && performance.now() < end) await new Promise((r) => setTimeout(r, 50));
}

describe("the demo's dropped-body phase", () => {
  it("upstream's client dies; Sockeye's is served after a gc() and says it reclaimed the connections", async () => {
    const server = await startS3Server({ latencyMs: 80 });
    cleanups.push(() => server.close());
    /** Everything Sockeye said: onSaturation / onRecovery reports and logger.warn messages. */
    const said: string[] = [];
    let saturated = 0;
    let recovered = 0;
    const handler = new NodeHttpHandler({
      httpAgent: { maxSockets: MAX_SOCKETS },
      saturation: { sampleIntervalMs: 500, windowSamples: 5, unconsumedBodyMs: 2000 },
      onSaturation: (report) => {
        saturated++;
        said.push(JSON.stringify(report));
      },
      onRecovery: (report) => {
        recovered++;
        said.push(JSON.stringify(report));
      },
      logger: { debug() {}, info() {}, warn: (m: string) => said.push(m), error: (m: string) => said.push(m) },
    });
    const s3 = new S3Client({ ...server.clientConfig, requestHandler: handler });
    cleanups.push(() => s3.destroy());
    const upstreamWarnings: string[] = [];
    const twin = upstreamTwin(server.clientConfig, MAX_SOCKETS, (m) => upstreamWarnings.push(m));
    cleanups.push(() => twin.destroy());
    await s3.send(new CreateBucketCommand({ Bucket: big.Bucket }));
    await s3.send(new PutObjectCommand({ ...big, Body: Buffer.alloc(1024 * 1024, 1) }));
    await s3.send(new PutObjectCommand({ ...small, Body: Buffer.alloc(16 * 1024, 2) }));

    const steps: string[] = [];
    const result = await runDroppedBodies({
      sockeye: s3,
      upstream: twin,
      dropped: big,
      probed: small,
      count: MAX_SOCKETS,
      deadlineMs: DEADLINE_MS,
      beforeCollect: () => until(() => saturated > 0, DEADLINE_MS),
      collect: collectGarbage,
      onStep: (step, { sizes }) => {
        steps.push(step);
        expect(sizes).toEqual(Array(MAX_SOCKETS).fill(1024 * 1024));
      },
    });
    expect(steps).toEqual(["dropped", "collecting"]);

    // Upstream's behaviour: the eight dropped bodies pin all eight sockets, gc() frees none, the probe never gets one.
    expect(result.upstream.served).toBe(false);
    expect(result.upstream.error).toBe("AbortError");
    expect(result.upstream.ms).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(result.upstreamSocketsInUse).toBe(MAX_SOCKETS);
    expect(upstreamWarnings).toEqual([]); // one request queued is below its 2 × maxSockets criterion: dead and silent

    // Sockeye saw the unread bodies before the collection.
    expect(saturated).toBe(1);
    expect(said.join("\n")).toMatch(/unconsumed_bodies/);

    // Sockeye's behaviour: the collection frees the bodies, their connections are reclaimed, the probe is served.
    expect(result.sockeye).toMatchObject({ served: true });
    expect(result.sockeye.ms).toBeLessThan(DEADLINE_MS);
    expect(handler.getPoolStats().origins.find((o) => o.origin === server.endpoint)?.bodiesReclaimed).toBe(MAX_SOCKETS);
    await until(() => recovered > 0, 5000);
    expect(said.join("\n")).toContain(`${MAX_SOCKETS} responses were dropped unread; their connections were reclaimed`);
  }, 30_000);
});
