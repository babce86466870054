/**
 * The demo's upstream lane tells the truth with Sockeye's handler-side queue: the emulation gives upstream's real
 * `checkSocketUsage()` the queue upstream's agent would hold (Sockeye's own queue plus `agent.requests`), so it warns in
 * an overload, as upstream would, and stays silent under a healthy load even when every request's timer fires.
 *
 * A real run of the demo's pieces: its embedded S3 endpoint (80 ms per response), a real `S3Client` on Sockeye's
 * `NodeHttpHandler` (maxSockets 8), the demo's load shapes. Bounded: the demo's W of 3 s is shortened (1 s in the
 * overload, 50 ms in the healthy load, so that every request's timer fires there) and each load lasts 2–3 s.
 */
import { CreateBucketCommand, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { NodeHttpHandler } from "@sockeye/node-http-handler";
import { afterEach, describe, expect, it } from "vitest";
import { OpenLoop } from "./load.mjs";
import { startS3Server } from "./s3-server.mjs";
import { queuedPerAgentKey, UpstreamCheckEmulator } from "./upstream-check.mjs";

const MAX_SOCKETS = 8;
const SERVICE_MS = 80;
const NOMINAL_CAPACITY = (MAX_SOCKETS * 1000) / SERVICE_MS; // req/s, before SDK overhead
const object = { Bucket: "lane", Key: "object-16k.bin" };

type UpstreamEvent = { kind: "warn" | "suppressed"; at: number; message: string };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The demo's server, handler and client, with the upstream emulation at `warningTimeoutMs`. */
async function rig(warningTimeoutMs: number) {
  const server = await startS3Server({ latencyMs: SERVICE_MS });
  cleanups.push(() => server.close());
  const handler = new NodeHttpHandler({ httpAgent: { maxSockets: MAX_SOCKETS } });
  const s3 = new S3Client({ ...server.clientConfig, requestHandler: handler });
  cleanups.push(() => s3.destroy());
  await s3.send(new CreateBucketCommand({ Bucket: object.Bucket }));
  await s3.send(new PutObjectCommand({ ...object, Body: Buffer.alloc(16 * 1024, 7) }));
  const agent = (handler.httpHandlerConfigs() as { httpAgent?: import("node:http").Agent }).httpAgent;
  const events: UpstreamEvent[] = [];
  const upstream = new UpstreamCheckEmulator({
    getAgent: () => agent,
    queuedUnder: queuedPerAgentKey(handler),
    warningTimeoutMs,
    onEvent: (e: UpstreamEvent) => events.push(e),
  });
  upstream.install(s3);
  return { s3, upstream, events };
}

async function until(predicate: () => boolean, timeoutMs: number): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!predicate() && performance.now() < end) await new Promise((r) => setTimeout(r, 50));
}

describe("the demo's upstream lane on Sockeye's handler-side queue", () => {
  it("warns in an overload with upstream's own message, counting the requests Sockeye queues", async () => {
    const { s3, upstream, events } = await rig(1000);
    const load = new OpenLoop(s3, object, 2 * NOMINAL_CAPACITY, 3000);
    await until(() => events.some((e) => e.kind === "warn"), 6000);
    load.stop();
    await load.drain();

    const warn = events.find((e) => e.kind === "warn");
    expect(warn, `no upstream warning; ${upstream.fired} timers fired`).toBeDefined();
    const m = /capacity=(\d+) and (\d+) additional requests are enqueued/.exec(warn?.message ?? "");
    expect(m?.[1]).toBe(String(MAX_SOCKETS));
    expect(Number(m?.[2])).toBeGreaterThanOrEqual(2 * MAX_SOCKETS);
    expect(warn?.message).toMatch(/^@smithy\/node-http-handler:WARN - socket usage at capacity=/);
    expect(upstream.warnings).toBe(1); // one 15 s lockout per handler, as upstream's
    expect(load.errors).toBe(0);
  }, 20_000);

  it("stays silent under a healthy load, although every request's timer fires and runs the check", async () => {
    const { s3, upstream, events } = await rig(50);
    const load = new OpenLoop(s3, object, 0.4 * NOMINAL_CAPACITY, 2000);
    await new Promise((r) => setTimeout(r, 2000));
    load.stop();
    await load.drain();

    expect(upstream.fired).toBeGreaterThanOrEqual(0.5 * load.started);
    expect(events).toEqual([]);
    expect(upstream.warnings).toBe(0);
    expect(upstream.pending).toBe(0);
    expect(load.errors).toBe(0);
  }, 20_000);
});
