/**
 * Saturation detection on real AWS SDK v3 traffic, through Sockeye's `NodeHttpHandler` AND `UndiciHttpHandler`
 * with their default detector settings (`socketMonitor: "interval"`, 1 s samples, K = 5, `unconsumedBodyMs` 10 s,
 * `stallAfterMs` 30 s); only `maxSockets` is lowered (2), so that a few calls fill the pool. Both handlers must
 * report the SAME exact sequence (state, cause, and the trigger where it is deterministic) in each scenario:
 * - SQS long polling (`WaitTimeSeconds` 10, moto) with more polls than sockets: the pool is full for the whole
 *   wait and nothing completes, yet the server answers exactly when asked. Not a stall: exactly one capacity
 *   report (`pool_capacity` / `long_holds`, sized for the polls), never `no_progress`, no recovery/re-report cycle.
 * - An S3 `GetObject` loop that never reads the bodies (moto): `unconsumed_bodies` is named within 15 s (before
 *   `unconsumedBodyMs`, because requests queue behind the unread bodies) and kept, with no recovery, while they
 *   stay unread; one recovery once they are destroyed.
 * - Batches (moto): a burst of DynamoDB `BatchWriteItem` calls every 1.3 s, more than the sockets, each burst
 *   done well within its period: nothing to report.
 * - Overload (DynamoDB `GetItem` against a local endpoint answering in 400 ms: 5 calls/s on 2 sockets): 8 calls/s
 *   for 10 s, then 1/s: one `pool_capacity` report (queue growth), then one recovery.
 * Upstream has no such detector, so these run for Sockeye's handlers only. Every scenario of both handlers runs at
 * once (in `beforeAll`), so the file takes as long as its longest scenario.
 */
import type { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { BatchWriteItemCommand, CreateTableCommand, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { CreateQueueCommand, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { beforeAll, describe, expect, it } from "vitest";
import { dynamoDbClient, s3Client, sqsClient, uniqueName } from "./support/aws-clients.js";
import type { HandlerInstance, HandlerOptions } from "./support/handlers-under-test.js";
import { RecordingLogger } from "./support/recording-logger.js";
import { startSlowServer } from "./support/slow-server.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

type SaturationReport = Parameters<NonNullable<HandlerOptions["onSaturation"]>>[0];

/** Sockeye's two handlers, built with the same options. */
const DETECTING_HANDLERS = {
  NodeHttpHandler: (options: HandlerOptions) => new NodeHttpHandler(options),
  UndiciHttpHandler: (options: HandlerOptions) => new UndiciHttpHandler(options),
} as const;
type DetectingHandler = keyof typeof DETECTING_HANDLERS;

interface Recorded {
  handler: HandlerInstance & { getPoolStats(): ReturnType<NodeHttpHandler["getPoolStats"]> };
  logger: RecordingLogger;
  reports: SaturationReport[];
}

function recording(name: DetectingHandler): Recorded {
  const logger = new RecordingLogger();
  const reports: SaturationReport[] = [];
  const handler = DETECTING_HANDLERS[name]({
    httpAgent: { maxSockets: 2 },
    onSaturation: (report) => reports.push(report),
    onRecovery: (report) => reports.push(report),
    logger,
  }) as Recorded["handler"];
  return { handler, logger, reports };
}

/** `[state, cause (or the previous one, for a recovery), trigger]` per report. */
function sequence(reports: readonly SaturationReport[]): [string, string | null, string | null][] {
  return reports.map((r) => [r.state, r.cause ?? r.previousCause ?? null, r.trigger ?? null]);
}

/** `[state, cause]` of each entry of a {@link sequence}. */
function stateAndCause(reports: ReturnType<typeof sequence>): [string, string | null][] {
  return reports.map(([state, cause]) => [state, cause]);
}

async function until(condition: () => boolean, what: string, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms`);
    await sleep(50);
  }
}

// ---- the scenarios: each runs through one handler and returns what the assertions need ----------------------

async function longPolls(name: DetectingHandler) {
  const { handler, logger, reports } = recording(name);
  const sqs = sqsClient(handler);
  try {
    // Fast calls first on the same origin: their hold times must not make a long poll look like a stall.
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName("sockeye-longpoll") }));
    const poll = async () => {
      const t = Date.now();
      const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 10, MaxNumberOfMessages: 1 }));
      return { ms: Date.now() - t, messages: out.Messages ?? [] };
    };
    // Two polls hold both sockets for 10 s; the third waits 10 s in the queue, then is held 10 s itself.
    const polls = await Promise.all([poll(), poll(), poll()]);
    const origin = handler.getPoolStats().origins.find((o) => o.saturation.episodes > 0);
    return { sequence: sequence(reports), reports, warnings: logger.warnings(), polls, saturation: origin?.saturation };
  } finally {
    sqs.destroy();
  }
}

async function unreadBodies(name: DetectingHandler) {
  const { handler, logger, reports } = recording(name);
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
    // Whatever comes first is asserted; 15 s bounds a run that never names the cause.
    await until(() => reports.length > 0, "a saturation report", 15_000).catch(() => {});
    const namedAfterMs = Date.now() - t0;
    const first = sequence(reports);
    const unconsumedCount = reports[0]?.unconsumed.count;
    const recommended = reports[0]?.recommendedMaxSockets;
    const warnedUnread = logger.warnings().some((w) => w.includes("have not been read or destroyed"));
    // Kept: 8 more seconds (8 samples) with the bodies unread: no other cause, no recovery.
    await sleep(8_000);
    const kept = sequence(reports);
    const origin = handler.getPoolStats().origins.find((o) => o.saturation.state !== "ok");
    const keptState = { cause: origin?.saturation.cause, unconsumed: origin?.unconsumed.count };
    // Destroy them: the queued GetObjects get the sockets; destroy their bodies too, and stop the loops.
    running = false;
    for (const body of unread.splice(0)) body.destroy();
    await until(() => unread.length >= 1, "queued GetObjects served", 10_000).catch(() => {});
    const drain = setInterval(() => {
      for (const body of unread.splice(0)) body.destroy();
    }, 20);
    try {
      await Promise.all(loops);
      for (const body of unread.splice(0)) body.destroy();
      await until(() => reports.some((r) => r.state === "ok"), "recovery", 15_000).catch(() => {});
    } finally {
      clearInterval(drain);
    }
    const all = sequence(reports);
    return { first, unconsumedCount, recommended, warnedUnread, kept, keptState, sequence: all, namedAfterMs };
  } finally {
    for (const body of unread) body.destroy();
    s3.destroy();
  }
}

async function batches(name: DetectingHandler) {
  const { handler, reports } = recording(name);
  const ddb = dynamoDbClient(handler);
  const TableName = uniqueName("sockeye-batches");
  try {
    await ddb.send(
      new CreateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
        KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
        BillingMode: "PAY_PER_REQUEST",
      })
    );
    const batch = (second: number, call: number) =>
      ddb.send(
        new BatchWriteItemCommand({
          RequestItems: {
            [TableName]: Array.from({ length: 25 }, (_, i) => ({
              PutRequest: { Item: { pk: { S: `${second}-${call}-${i}` }, v: { S: "x".repeat(100) } } },
            })),
          },
        })
      );
    // 7 bursts of 6 calls on 2 sockets, one every 1.3 s, then 5 quiet seconds. The period is not a multiple of the
    // detector's 1 s sample: bursts locked to the sample's phase would put every sample inside a burst (on a loaded
    // machine, where moto stretches each burst), which real batch traffic never does.
    const burstMs: number[] = [];
    for (let second = 0; second < 7; second++) {
      const t = Date.now();
      await Promise.all(Array.from({ length: 6 }, (_, call) => batch(second, call)));
      burstMs.push(Date.now() - t);
      await sleep(Math.max(0, 1300 - (Date.now() - t)));
    }
    await sleep(5_000);
    return { sequence: sequence(reports), burstMs };
  } finally {
    ddb.destroy();
  }
}

async function overload(name: DetectingHandler) {
  const slow = await startSlowServer(400);
  const { handler, reports } = recording(name);
  const ddb = dynamoDbClient(handler, { endpoint: slow.endpoint });
  const calls: Promise<unknown>[] = [];
  const getItem = () => ddb.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "k" } } }));
  try {
    // 8 calls/s for 10 s on a pool that completes 5/s: the queue grows every second. The calls are spread evenly (one
    // every 125 ms), as steady traffic arrives: bursts of 8 on the second would make the queue a saw-tooth whose
    // samples go up or down depending on whether the detector's 1 s sample lands just before or just after a burst.
    // 10 s leave room for the 5 growing samples (about 6 s) when a loaded machine stretches the 125 ms sleeps.
    for (let i = 0; i < 10 * 8; i++) {
      calls.push(getItem());
      await sleep(125);
    }
    const saturated = sequence(reports);
    // Then 1 call/s until the queue drained and the recovery came (or 20 s).
    for (let second = 0; second < 20 && !reports.some((r) => r.state === "ok"); second++) {
      calls.push(getItem());
      await sleep(1000);
    }
    await Promise.all(calls);
    return { saturated, sequence: sequence(reports), first: reports[0] };
  } finally {
    ddb.destroy();
    await slow.close();
  }
}

// ---- run everything at once, then assert ----------------------------------------------------------------------

const NAMES = Object.keys(DETECTING_HANDLERS) as DetectingHandler[];
type Results = {
  longPolls: Awaited<ReturnType<typeof longPolls>>;
  unreadBodies: Awaited<ReturnType<typeof unreadBodies>>;
  batches: Awaited<ReturnType<typeof batches>>;
  overload: Awaited<ReturnType<typeof overload>>;
};
const results = {} as Record<DetectingHandler, Results>;

beforeAll(async () => {
  await Promise.all(
    NAMES.map(async (name) => {
      const [a, b, c, d] = await Promise.all([longPolls(name), unreadBodies(name), batches(name), overload(name)]);
      results[name] = { longPolls: a, unreadBodies: b, batches: c, overload: d };
    })
  );
  if (process.env.SOCKEYE_SIM_REPORT) {
    for (const name of NAMES) {
      const r = results[name];
      console.log(
        name,
        JSON.stringify({
          longPolls: {
            sequence: r.longPolls.sequence,
            ms: r.longPolls.polls.map((p) => p.ms),
            oldestActiveMs: r.longPolls.reports[0]?.oldestActiveMs,
          },
          unread: r.unreadBodies,
          batches: r.batches,
          overload: { saturated: r.overload.saturated, sequence: r.overload.sequence },
        })
      );
    }
  }
}, 90_000);

describe.each(NAMES)(
  "saturation detection through Sockeye's %s (default detector settings) against real SDK traffic",
  (name) => {
    it("SQS long polls (WaitTimeSeconds 10), 3 polls on 2 sockets: exactly one capacity report, no stall claim, no flapping", () => {
      const { reports, warnings, polls, saturation } = results[name].longPolls;
      // The server answered every poll when asked: ~10 s for the first two, ~20 s for the queued one.
      expect(polls.flatMap((p) => p.messages)).toEqual([]);
      expect(polls.filter((p) => p.ms >= 9_000 && p.ms < 15_000)).toHaveLength(2);
      expect(Math.max(...polls.map((p) => p.ms))).toBeGreaterThanOrEqual(18_000);
      expect(sequence(reports)).toEqual([["saturated", "pool_capacity", "long_holds"]]);
      const [report] = reports;
      expect(report).toMatchObject({ maxSockets: 2, active: 2, queued: 1 });
      // The hint counts the long requests: 3 polls want a socket (x 1.25 -> 4).
      expect(report!.sizing).toMatchObject({ method: "concurrent_requests", needed: 3, recommended: 4 });
      // Reported once the pool had been stuck for K = 5 samples, well before the 30 s stall deadline.
      expect(report!.stallDeadlineMs).toBe(30_000);
      expect(report!.oldestActiveMs).toBeLessThan(10_000);
      expect(warnings.filter((w) => w.includes("state=stalled"))).toEqual([]);
      expect(warnings.filter((w) => /socket usage at capacity/.test(w))).toHaveLength(1);
      expect(saturation).toMatchObject({ episodes: 1, cause: "pool_capacity" });
    });

    it("SQS long polls: the report says how long the polls have been held and names both explanations", () => {
      const [report] = results[name].longPolls.reports;
      // K = 5 samples of a full pool: the polls have been held for about 5 s.
      expect(report!.oldestActiveMs).toBeGreaterThanOrEqual(3_000);
      // Fast calls completed first, so the message names both explanations; the sizing hint is for long requests.
      expect(report!.message).toContain("or these are long requests (long polls, streams)");
      expect(report!.message).toContain("If these are long requests, about 4 sockets are needed");
    });

    it("GetObject loop that never reads bodies: unconsumed_bodies within 15 s, kept while unread, one recovery after", () => {
      const r = results[name].unreadBodies;
      // The trigger is left out: whether the queue was still growing at the K-th sample (`growth`) or already
      // stuck (`long_holds`) is a matter of timing on a loaded machine.
      expect(stateAndCause(r.first)).toEqual([["saturated", "unconsumed_bodies"]]);
      expect(r.unconsumedCount).toBe(2);
      expect(r.warnedUnread).toBe(true);
      // Kept: no other cause, no recovery while the bodies stay unread.
      expect(r.kept).toEqual(r.first);
      expect(r.keptState).toEqual({ cause: "unconsumed_bodies", unconsumed: 2 });
      expect(stateAndCause(r.sequence)).toEqual([
        ["saturated", "unconsumed_bodies"],
        ["ok", "unconsumed_bodies"],
      ]);
    });

    it("DynamoDB BatchWriteItem bursts (6 calls on 2 sockets every 1.3 s, each burst done within it): no report", () => {
      expect(results[name].batches.sequence).toEqual([]);
    });

    it("overload (8 GetItem/s on 2 sockets completing 5/s, then 1/s): one pool_capacity report (queue growth), then one recovery", () => {
      const r = results[name].overload;
      expect(r.saturated).toEqual([["saturated", "pool_capacity", "growth"]]);
      expect(r.sequence).toEqual([
        ["saturated", "pool_capacity", "growth"],
        ["ok", "pool_capacity", null],
      ]);
      expect(r.first).toMatchObject({ maxSockets: 2 });
    });
  }
);

describe("both handlers report the same sequences", () => {
  it.each(["longPolls", "batches", "overload"] as const)("%s", (scenario) => {
    expect(results.UndiciHttpHandler[scenario].sequence).toEqual(results.NodeHttpHandler[scenario].sequence);
  });

  it("unread GetObject bodies", () => {
    expect(stateAndCause(results.UndiciHttpHandler.unreadBodies.sequence)).toEqual(
      stateAndCause(results.NodeHttpHandler.unreadBodies.sequence)
    );
  });
});
