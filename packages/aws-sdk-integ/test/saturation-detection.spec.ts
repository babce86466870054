/**
 * Saturation detection on real AWS SDK v3 traffic against moto, through Sockeye's `NodeHttpHandler` with its default
 * detector settings (`socketMonitor: "interval"`, 1 s samples, K = 5, `unconsumedBodyMs` 10 s, `stallAfterMs` 30 s);
 * only `maxSockets` is lowered, so that a few calls fill the pool:
 * - SQS long polling with more pollers than sockets: the pool is full for the whole wait and nothing completes, yet
 *   the server answers exactly when asked. Not a stall: at most one capacity report (`long_holds`, sized for the
 *   pollers), never `no_progress`, no recovery/re-report cycle.
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
  it("SQS long polls, 3 pollers on 2 sockets: no stall claim, at most one capacity report, no flapping", async () => {
    const { handler, logger, reports } = recordingHandler();
    const sqs = sqsClient(handler);
    try {
      // Fast calls first on the same origin: their hold times must not make a long poll look like a stall.
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-longpoll") }));
      let polling = true;
      let polls = 0;
      const poller = async () => {
        while (polling) {
          const out = await sqs.send(
            new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 6, MaxNumberOfMessages: 1 })
          );
          expect(out.Messages ?? []).toEqual([]);
          polls++;
        }
      };
      const started = Date.now();
      const pollers = [poller(), poller(), poller()];
      await sleep(14_000); // two full rounds of 6 s polls, and part of a third
      polling = false;
      await Promise.all(pollers);
      const elapsed = Date.now() - started;
      expect(polls).toBeGreaterThanOrEqual(4);
      // The server answered every poll exactly when asked: never a stall.
      expect(reports.filter((r) => r.state === "stalled" || r.cause === "no_progress")).toEqual([]);
      const saturated = reports.filter((r) => r.state !== "ok");
      expect(saturated.length).toBeLessThanOrEqual(1);
      for (const r of saturated) {
        expect(r).toMatchObject({ cause: "pool_capacity", trigger: "long_holds", maxSockets: 2 });
        // The hint counts the long requests: 3 pollers want a socket (x 1.25 -> 4).
        expect(r.sizing).toMatchObject({ method: "concurrent_requests", needed: 3, recommended: 4 });
      }
      // While polling, no recovery/re-report cycle: a recovery may only follow the end of polling.
      const recoveries = reports.filter((r) => r.state === "ok");
      expect(recoveries.length).toBeLessThanOrEqual(1);
      const warnings = logger.warnings();
      expect(warnings.filter((w) => w.includes("may not be answering"))).toEqual([]);
      expect(warnings.filter((w) => /socket usage at capacity/.test(w)).length).toBeLessThanOrEqual(1);
      if (process.env.SOCKEYE_SIM_REPORT) {
        console.log(
          `aws long polls: ${polls} polls in ${elapsed} ms; reports ${JSON.stringify(reports.map((r) => [r.state, r.cause, r.trigger]))}`
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
