/**
 * Issue 36's table through a real `S3Client` against moto: a pool of 4 sockets, four `GetObjectCommand` outputs
 * dropped with their `Body` unread and no reference kept, a full garbage collection, then one more `GetObject`.
 * Sockeye's `NodeHttpHandler` and `UndiciHttpHandler` serve it and count the reclaimed bodies (none for a 1 KiB object,
 * received in full; four for a 32 MiB one, still on the wire); upstream's `NodeHttpHandler` never serves it after
 * 32 MiB bodies (aborted after 2 s, so the suite cannot hang), and destroying that client then throws one uncaught
 * `aborted` error per dropped body (the SDK's checksum stream piped from each has no error listener). Through S3,
 * upstream survives the 1 KiB cell: the SDK's response-checksum stream reads a small body in full, which frees its
 * socket (through `handle()` alone upstream dies there too: `dropped-bodies.integ.spec.ts`).
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler as SmithyNodeHttpHandler } from "@smithy/node-http-handler";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { UndiciHttpHandler } from "@sockeye/undici-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectGarbage } from "../../pool-monitor/test/heap-after-gc.js";
import { s3Client, uniqueName } from "./support/aws-clients.js";
import { processFaultCapture } from "../../node-http-handler/test/process-fault-capture.js";
import type { HandlerInstance } from "./support/handlers-under-test.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

const POOL = 4;
const OBJECTS = [
  { key: "small", label: "1 KiB", size: 1024, reclaimed: 0 },
  { key: "large", label: "32 MiB", size: 32 * 1024 * 1024, reclaimed: POOL },
];
const Bucket = uniqueName("sockeye-dropped");
const digests = new Map<string, string>();

beforeAll(async () => {
  const setup = s3Client(new SmithyNodeHttpHandler() as unknown as HandlerInstance);
  try {
    await setup.send(new CreateBucketCommand({ Bucket }));
    for (const o of OBJECTS) {
      const bytes = Buffer.alloc(o.size);
      for (let i = 0; i < o.size; i++) bytes[i] = (i * 7 + (i >>> 10)) & 0xff;
      digests.set(o.key, createHash("sha256").update(bytes).digest("hex"));
      await setup.send(new PutObjectCommand({ Bucket, Key: o.key, Body: bytes }));
    }
  } finally {
    setup.destroy();
  }
}, 60_000);

/** Four GetObject outputs, dropped once their headers are in (nothing of them survives this function). */
async function dropFour(s3: S3Client, Key: string): Promise<void> {
  const statuses = await Promise.all(
    Array.from({ length: POOL }, () =>
      s3.send(new GetObjectCommand({ Bucket, Key })).then((out) => out.$metadata.httpStatusCode)
    )
  );
  expect(statuses).toEqual(Array(POOL).fill(200));
}

async function sha256Of(body: Readable): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of body) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

const SOCKEYE = {
  NodeHttpHandler: () => new NodeHttpHandler({ httpAgent: { maxSockets: POOL } }),
  UndiciHttpHandler: () => new UndiciHttpHandler({ httpAgent: { maxSockets: POOL } }),
};

for (const [name, create] of Object.entries(SOCKEYE)) {
  describe(`S3 GetObject bodies dropped unread through Sockeye's ${name} (pool of ${POOL})`, () => {
    let handler: NodeHttpHandler | UndiciHttpHandler;
    let s3: S3Client;
    beforeAll(() => {
      handler = create();
      s3 = s3Client(handler as unknown as HandlerInstance);
    });
    afterAll(() => s3?.destroy());

    for (const o of OBJECTS) {
      it(`${o.label}: the next GetObject is served after gc(), ${o.reclaimed} bodies reclaimed`, async () => {
        const before = originReclaimed(handler);
        await dropFour(s3, o.key);
        let done = false;
        const next = s3.send(new GetObjectCommand({ Bucket, Key: o.key }));
        next.then(
          () => (done = true),
          () => (done = true)
        );
        for (let i = 0; i < 50 && !done; i++) {
          await collectGarbage();
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const out = await next;
        expect(await sha256Of(out.Body as Readable)).toBe(digests.get(o.key));
        for (let i = 0; i < 50 && (i < 3 || originReclaimed(handler) - before !== o.reclaimed); i++) {
          await collectGarbage();
        }
        expect(originReclaimed(handler) - before).toBe(o.reclaimed);
        expect(handler.getPoolStats().totals.inFlight).toBe(0);
      }, 60_000);
    }
  });
}

describe(`S3 GetObject bodies dropped unread through upstream's NodeHttpHandler (pool of ${POOL})`, () => {
  const capture = processFaultCapture();
  afterAll(() => capture.uninstall());

  it("32 MiB: the next GetObject is never served, even after gc() (aborted after 2 s)", async () => {
    const handler = new SmithyNodeHttpHandler({ httpAgent: { maxSockets: POOL } } as any);
    const s3 = s3Client(handler as unknown as HandlerInstance);
    await dropFour(s3, "large");
    const next = s3.send(new GetObjectCommand({ Bucket, Key: "large" }), { abortSignal: AbortSignal.timeout(2000) });
    await collectGarbage();
    await expect(next).rejects.toMatchObject({ name: "AbortError" });
    // Upstream's own fault when the pinned sockets are destroyed: captured here, asserted to be only that.
    capture.install();
    s3.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const faults = capture.take();
    capture.uninstall();
    for (const fault of faults.uncaught) expect(fault).toMatch(/aborted/);
    expect(faults.unhandled).toEqual([]);
  }, 30_000);
});

function originReclaimed(handler: NodeHttpHandler | UndiciHttpHandler): number {
  return handler.getPoolStats().origins.reduce((sum, o) => sum + o.bodiesReclaimed, 0);
}
