/**
 * Saturation detection on real AWS SDK v3 traffic against moto, through Sockeye's `NodeHttpHandler` with its default
 * detector settings (`socketMonitor: "interval"`, 1 s samples, K = 5, `unconsumedBodyMs` 10 s, `stallAfterMs` 30 s);
 * only `maxSockets` is lowered, so that a few calls fill the pool:
 * - SQS long polling (`WaitTimeSeconds` 10) with more polls than sockets: the pool is full for the whole wait and
 *   nothing completes, yet the server answers exactly when asked. Not a stall: exactly one capacity report
 *   (`pool_capacity` / `long_holds`, sized for the polls), never `no_progress`, no recovery/re-report cycle.
 * - An S3 `GetObject` loop that never reads the bodies: `unconsumed_bodies` is named within 15 s (before
 *   `unconsumedBodyMs`, because requests queue behind the unread bodies) and kept, with no recovery, while they stay
 *   unread; one recovery once they are destroyed.
 * Upstream has no such detector (its per-request check needs 2 × maxSockets queued requests), so these run for
 * Sockeye only.
 */
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { describe, expect, it } from "vitest";
import { s3Client, sqsClient, uniqueName } from "./support/aws-clients.js";
import type { HandlerOptions } from "./support/handlers-under-test.js";
import { RecordingLogger } from "./support/recording-logger.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

type SaturationReport = Parameters<NonNullable<HandlerOptions["onSaturation"]>>[0];

async function until(condition: () => boolean, what: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(50);
  }
}

function recordingHandler() {
  const logger = new RecordingLogger();
  const reports: SaturationReport[] = [];
  const handler = new NodeHttpHandler({
    httpAgent: { maxSockets: 2 },
    onSaturation: (report) => reports.push(report),
    onRecovery: (report) => reports.push(report),
    logger,
  });
  return { handler, logger, reports };
}

describe("saturation detection through Sockeye's NodeHttpHandler (default detector settings) against moto", () => {
  it("SQS long polls (WaitTimeSeconds 10), 3 polls on 2 sockets: exactly one capacity report, no stall claim, no flapping", async () => {
    const { handler, logger, reports } = recordingHandler();
    const sqs = sqsClient(handler);
    try {
      // Fast calls first on the same origin: their hold times must not make a long poll look like a stall.
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-longpoll") }));
      const poll = async () => {
        const t = Date.now();
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 10, MaxNumberOfMessages: 1 })
        );
        expect(out.Messages ?? []).toEqual([]);
        return Date.now() - t;
      };
      // Two polls hold both sockets for 10 s; the third waits 10 s in the queue, then is held 10 s itself.
      const started = Date.now();
      const durations = await Promise.all([poll(), poll(), poll()]);
      const elapsed = Date.now() - started;
      // The server answered every poll when asked: ~10 s for the first two, ~20 s for the queued one.
      expect(durations.filter((ms) => ms >= 9_000 && ms < 15_000)).toHaveLength(2);
      expect(Math.max(...durations)).toBeGreaterThanOrEqual(18_000);
      expect(reports.map((r) => [r.state, r.cause, r.trigger])).toEqual([["saturated", "pool_capacity", "long_holds"]]);
      const [report] = reports;
      expect(report).toMatchObject({ maxSockets: 2, active: 2, queued: 1 });
      // The hint counts the long requests: 3 polls want a socket (x 1.25 -> 4).
      expect(report!.sizing).toMatchObject({ method: "concurrent_requests", needed: 3, recommended: 4 });
      // Reported once the pool had been stuck for K = 5 samples, well before the 30 s stall deadline.
      expect(report!.stallDeadlineMs).toBe(30_000);
      expect(report!.oldestActiveMs).toBeLessThan(10_000);
      const warnings = logger.warnings();
      expect(warnings.filter((w) => w.includes("state=stalled"))).toEqual([]);
      // Fast calls completed first, so the message names both explanations; the sizing hint is for long requests.
      expect(report!.message).toContain("or these are long requests (long polls, streams)");
      expect(report!.message).toContain("If these are long requests, about 4 sockets are needed");
      expect(warnings.filter((w) => /socket usage at capacity/.test(w))).toHaveLength(1);
      const origin = handler.getPoolStats().origins.find((o) => o.saturation.episodes > 0);
      expect(origin?.saturation).toMatchObject({ episodes: 1, cause: "pool_capacity" });
      if (process.env.SOCKEYE_SIM_REPORT) {
        console.log(
          `aws long polls: ${durations.join(", ")} ms in ${elapsed} ms; reported at ${report!.oldestActiveMs} ms held`
        );
      }
    } finally {
      sqs.destroy();
    }
  }, 40_000);

  it("GetObject loop that never reads bodies: unconsumed_bodies within 15 s, kept while unread, one recovery after", async () => {
    const { handler, logger, reports } = recordingHandler();
    const s3 = s3Client(handler);
    const Bucket = uniqueName("sockeye-unread");
    const unread: Readable[] = [];
    try {
      await s3.send(new CreateBucketCommand({ Bucket }));
      // 4 MiB: larger than the loopback socket buffers, so the server cannot finish writing an unread body.
      await s3.send(new PutObjectCommand({ Bucket, Key: "big", Body: Buffer.alloc(4 * 1024 * 1024, 0x61) }));
      let running = true;
      const loop = async () => {
        while (running) {
          const out = await s3.send(new GetObjectCommand({ Bucket, Key: "big" }));
          unread.push(out.Body as Readable); // never read: each pins its socket
        }
      };
      const t0 = Date.now();
      const loops = [loop(), loop(), loop()];
      await until(() => reports.some((r) => r.cause === "unconsumed_bodies"), "unconsumed_bodies report", 15_000);
      const namedAfterMs = Date.now() - t0;
      expect(reports.map((r) => [r.state, r.cause])).toEqual([["saturated", "unconsumed_bodies"]]);
      expect(reports[0]!.unconsumed.count).toBe(2);
      expect(logger.warnings().some((w) => w.includes("have not been read or destroyed"))).toBe(true);
      // Kept: 8 more seconds (8 samples) with the bodies unread: no other cause, no recovery.
      await sleep(8_000);
      expect(reports).toHaveLength(1);
      const origin = handler.getPoolStats().origins.find((o) => o.saturation.state !== "ok");
      expect(origin?.saturation.cause).toBe("unconsumed_bodies");
      expect(origin?.unconsumed.count).toBe(2);
      // Destroy them: the queued GetObjects get the sockets; read (destroy) their bodies too, and stop the loops.
      running = false;
      for (const body of unread.splice(0)) body.destroy();
      await until(() => unread.length >= 1, "queued GetObjects served", 10_000);
      const drain = setInterval(() => {
        for (const body of unread.splice(0)) body.destroy();
      }, 20);
      try {
        await Promise.all(loops);
        for (const body of unread.splice(0)) body.destroy();
        await until(() => reports.some((r) => r.state === "ok"), "recovery", 15_000);
      } finally {
        clearInterval(drain);
      }
      expect(reports.map((r) => [r.state, r.cause ?? r.previousCause])).toEqual([
        ["saturated", "unconsumed_bodies"],
        ["ok", "unconsumed_bodies"],
      ]);
      if (process.env.SOCKEYE_SIM_REPORT) console.log(`aws unread bodies: named after ${namedAfterMs} ms`);
    } finally {
      for (const body of unread) body.destroy();
      s3.destroy();
    }
  }, 60_000);
});
