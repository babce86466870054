/**
 * Socket-pool saturation as a real client produces it, on local servers (so the sockets stay pinned: moto closes
 * every connection after each answer, which would release them):
 * - upstream's per-request check ("socket usage at capacity=… additional requests are enqueued") fires the same way
 *   for Sockeye in `socketMonitor: "per-request"` mode as for upstream itself (the oracle);
 * - Sockeye's `"interval"` monitor diagnoses the classic leak, S3 `GetObject` bodies nobody reads, as
 *   `unconsumed_bodies` through `onSaturation` and the logger, and reports recovery once the bodies are destroyed.
 */
import type { Readable } from "node:stream";
import { GetItemCommand } from "@aws-sdk/client-dynamodb";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dynamoDbClient, s3Client } from "./support/aws-clients.js";
import { HANDLERS_UNDER_TEST, type HandlerOptions } from "./support/handlers-under-test.js";
import { RecordingLogger } from "./support/recording-logger.js";
import { type SlowServer, startSlowServer } from "./support/slow-server.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

type SaturationReport = Parameters<NonNullable<HandlerOptions["onSaturation"]>>[0];

const CAPACITY_PHRASE = /socket usage at capacity=2 and \d+ additional requests are enqueued/;

async function until(condition: () => boolean, what: string, withinMs = 3_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.each(HANDLERS_UNDER_TEST)(
  "socket-pool saturation with the $name NodeHttpHandler",
  ({ name, NodeHttpHandler }) => {
    let slow: SlowServer;
    let instant: SlowServer;
    let large: SlowServer;

    beforeAll(async () => {
      slow = await startSlowServer(250);
      instant = await startSlowServer(0);
      // Bodies larger than the client buffers: an unread one keeps its socket (a small one is received in full).
      large = await startSlowServer(0, 4 * 1024 * 1024);
    });
    afterAll(async () => {
      await slow?.close();
      await instant?.close();
      await large?.close();
    });

    it('6 concurrent calls on 2 sockets trigger the per-request capacity warning once ("per-request" mode)', async () => {
      const logger = new RecordingLogger();
      const handler = new NodeHttpHandler({
        httpAgent: { maxSockets: 2 },
        socketAcquisitionWarningTimeout: 100,
        socketMonitor: "per-request",
        logger,
      });
      const client = dynamoDbClient(handler, { endpoint: slow.endpoint });
      try {
        const outputs = await Promise.all(
          Array.from({ length: 6 }, () => client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "k" } } })))
        );
        expect(outputs.map((o) => o.$metadata.httpStatusCode)).toEqual([200, 200, 200, 200, 200, 200]);
        const warnings = logger.warnings();
        expect(warnings).toHaveLength(1); // one per handler per 15 s lockout
        expect(warnings[0]).toMatch(CAPACITY_PHRASE);
      } finally {
        client.destroy();
      }
    });

    it.runIf(name === "sockeye")(
      'unread GetObject bodies are reported as unconsumed_bodies, then recovery once destroyed ("interval" mode)',
      async () => {
        const logger = new RecordingLogger();
        const reports: SaturationReport[] = [];
        const handler = new NodeHttpHandler({
          httpAgent: { maxSockets: 2 },
          socketMonitor: "interval",
          // The unread bodies count as such (100 ms without progress) well before a growth window (5 samples of
          // 100 ms) could name the episode's cause pool capacity instead.
          saturation: { sampleIntervalMs: 100, windowSamples: 5, unconsumedBodyMs: 100 },
          onSaturation: (report) => reports.push(report),
          onRecovery: (report) => reports.push(report),
          logger,
        });
        const s3 = s3Client(handler, { endpoint: large.endpoint });
        const get = (Key: string) => s3.send(new GetObjectCommand({ Bucket: "b", Key }));
        try {
          // Two responses whose bodies nobody reads: each keeps its keep-alive socket checked out of the agent.
          const unread = [await get("a"), await get("b")];
          // These two can only queue behind them.
          const queued = Promise.all([get("c"), get("d")]);
          // If an assertion below fails, destroy() rejects them: not an unhandled rejection on top.
          queued.catch(() => {});
          await until(() => reports.length > 0, "onSaturation");
          expect(reports[0]).toMatchObject({ state: expect.not.stringMatching(/^ok$/), cause: "unconsumed_bodies" });
          expect(reports[0]!.unconsumed.count).toBe(2);
          expect(reports[0]!.message).toMatch(CAPACITY_PHRASE);
          expect(logger.warnings().some((w) => w.includes("have not been read or destroyed"))).toBe(true);

          for (const output of unread) (output.Body as Readable).destroy();
          const served = await queued;
          expect(served).toHaveLength(2);
          for (const output of served) await output.Body!.transformToString();
          await until(() => reports.some((r) => r.state === "ok"), "onRecovery");
        } finally {
          s3.destroy();
        }
      }
    );
  }
);
