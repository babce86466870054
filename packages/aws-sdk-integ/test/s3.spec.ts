/**
 * S3 through each handler under test, against moto: every body kind the SDK hands the handler (string, Buffer,
 * Readable with ContentLength, an 8 MiB Buffer sent with `Expect: 100-continue`), streamed downloads verified by
 * SHA-256, HeadObject, the modelled 404 error, the ListObjectsV2 paginator over several pages, DeleteObjects.
 */
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { motoEndpoint, s3Client, uniqueName } from "./support/aws-clients.js";
import { startExpectContinueProbe } from "./support/expect-continue-probe.js";
import { HANDLERS_UNDER_TEST, type HandlerInstance } from "./support/handlers-under-test.js";
import { sha256, sha256OfStream } from "./support/sha256.js";
import { failOnUnhandledRejections } from "./support/unhandled-rejections.js";

failOnUnhandledRejections();

const EIGHT_MIB = 8 * 1024 * 1024;

describe.each(HANDLERS_UNDER_TEST)("S3 through the $name NodeHttpHandler", ({ NodeHttpHandler }) => {
  let handler: HandlerInstance;
  let client: S3Client;
  const Bucket = uniqueName("sockeye-s3");

  beforeAll(async () => {
    handler = new NodeHttpHandler({});
    client = s3Client(handler);
    const created = await client.send(new CreateBucketCommand({ Bucket }));
    expect(created.$metadata.httpStatusCode).toBe(200);
  });

  afterAll(() => {
    client?.destroy();
  });

  /** Downloads `Key` as a stream, consuming it fully, and returns its digest and length. */
  async function download(Key: string): Promise<{ hex: string; bytes: number }> {
    const got = await client.send(new GetObjectCommand({ Bucket, Key }));
    expect(got.$metadata.httpStatusCode).toBe(200);
    const body = got.Body as Readable;
    expect(body).toBeInstanceOf(Readable);
    const digest = await sha256OfStream(body);
    expect(body.readableEnded).toBe(true);
    return digest;
  }

  it("PutObject with a string body round-trips", async () => {
    const text = `Sockeye says hello ✓ ${"x".repeat(1000)}`;
    await client.send(new PutObjectCommand({ Bucket, Key: "string.txt", Body: text, ContentType: "text/plain" }));
    expect(await download("string.txt")).toEqual({ hex: sha256(text), bytes: Buffer.byteLength(text) });
  });

  it("PutObject with a Buffer body round-trips", async () => {
    const bytes = randomBytes(256 * 1024);
    await client.send(new PutObjectCommand({ Bucket, Key: "buffer.bin", Body: bytes }));
    expect(await download("buffer.bin")).toEqual({ hex: sha256(bytes), bytes: bytes.length });
  });

  it("PutObject with a Readable body and ContentLength round-trips", async () => {
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(130_000)];
    const whole = Buffer.concat(parts);
    await client.send(
      new PutObjectCommand({ Bucket, Key: "stream.bin", Body: Readable.from(parts), ContentLength: whole.length })
    );
    expect(await download("stream.bin")).toEqual({ hex: sha256(whole), bytes: whole.length });
  });

  it("PutObject of 8 MiB waits for 100 Continue, then round-trips (GetObject streamed, HeadObject)", async () => {
    const bytes = randomBytes(EIGHT_MIB);
    const probe = await startExpectContinueProbe(motoEndpoint());
    const probeHandler = new NodeHttpHandler({});
    const viaProbe = s3Client(probeHandler, { endpoint: probe.endpoint });
    try {
      const put = await viaProbe.send(new PutObjectCommand({ Bucket, Key: "big.bin", Body: bytes }));
      expect(put.ETag).toMatch(/^"[0-9a-f]{32}"$/);

      const uploads = probe.exchanges.filter((x) => x.head.startsWith("PUT "));
      expect(uploads).toHaveLength(1);
      const [upload] = uploads;
      expect(upload!.head).toMatch(/\r\nexpect: 100-continue(\r\n|$)/i);
      expect(upload!.sawContinue).toBe(true);
      // The handler owns its agent here, so it must hold the body until the interim response (upstream parity).
      expect(upload!.bodyBytesBeforeContinue).toBe(0);
      expect(upload!.bodyBytes).toBeGreaterThanOrEqual(EIGHT_MIB);

      expect(await download("big.bin")).toEqual({ hex: sha256(bytes), bytes: EIGHT_MIB });
      const head = await client.send(new HeadObjectCommand({ Bucket, Key: "big.bin" }));
      expect(head.ContentLength).toBe(EIGHT_MIB);
      expect(head.ETag).toBe(put.ETag);
    } finally {
      viaProbe.destroy();
      await probe.close();
    }
  });

  it("HeadObject reports length, type and ETag", async () => {
    const Body = "head me";
    const put = await client.send(new PutObjectCommand({ Bucket, Key: "head.txt", Body, ContentType: "text/plain" }));
    const head = await client.send(new HeadObjectCommand({ Bucket, Key: "head.txt" }));
    expect(head.$metadata.httpStatusCode).toBe(200);
    expect(head.ContentLength).toBe(Body.length);
    expect(head.ContentType).toBe("text/plain");
    expect(head.ETag).toBe(put.ETag);
  });

  it("a missing key surfaces as the SDK's NoSuchKey with httpStatusCode 404", async () => {
    const error = await client.send(new GetObjectCommand({ Bucket, Key: "does/not/exist" })).then(
      () => undefined,
      (e: unknown) => e
    );
    expect(error).toBeInstanceOf(NoSuchKey);
    expect((error as NoSuchKey).name).toBe("NoSuchKey");
    expect((error as NoSuchKey).$metadata.httpStatusCode).toBe(404);
  });

  it("paginateListObjectsV2 walks several pages, then DeleteObjects removes them", async () => {
    const keys = Array.from({ length: 7 }, (_, i) => `paged/key-${String(i).padStart(2, "0")}`);
    for (const Key of keys) await client.send(new PutObjectCommand({ Bucket, Key, Body: Key }));

    const pageSizes: number[] = [];
    const listed: string[] = [];
    for await (const page of paginateListObjectsV2({ client, pageSize: 3 }, { Bucket, Prefix: "paged/" })) {
      pageSizes.push(page.KeyCount ?? 0);
      for (const object of page.Contents ?? []) listed.push(object.Key!);
    }
    expect(pageSizes).toEqual([3, 3, 1]);
    expect(listed).toEqual(keys);

    const deleted = await client.send(
      new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.map((Key) => ({ Key })) } })
    );
    expect(deleted.Errors ?? []).toEqual([]);
    expect((deleted.Deleted ?? []).map((d) => d.Key).sort()).toEqual(keys);
    const after = await client.send(new ListObjectsV2Command({ Bucket, Prefix: "paged/" }));
    expect(after.KeyCount).toBe(0);
  });
});
