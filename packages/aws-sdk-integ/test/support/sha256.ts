/** SHA-256 helpers for verifying bodies end to end (hex digests). */
import { createHash } from "node:crypto";

/** Digest of a string or bytes. @internal */
export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Consumes an async-iterable body (a Node `Readable`, e.g. `GetObject`'s `Body`) to the end. @internal */
export async function sha256OfStream(
  body: AsyncIterable<Uint8Array | string>
): Promise<{ hex: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of body) {
    hash.update(chunk);
    bytes += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
  }
  return { hex: hash.digest("hex"), bytes };
}
