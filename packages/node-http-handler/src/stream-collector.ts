import type { StreamCollector } from "@smithy/types";
import { Readable } from "node:stream";

/**
 * Collects a Node `Readable` (or a web `ReadableStream`) into one `Uint8Array`. AWS SDK clients import
 * `streamCollector` from the handler package, so a package-level replacement must provide it. @public
 */
export const streamCollector: StreamCollector = async (stream: unknown): Promise<Uint8Array> => {
  const source =
    stream instanceof Readable || typeof (stream as Readable)?.[Symbol.asyncIterator] === "function"
      ? (stream as AsyncIterable<Uint8Array | string>)
      : Readable.fromWeb(stream as import("node:stream/web").ReadableStream);
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of source) {
    const buffer =
      typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    chunks.push(buffer);
    length += buffer.byteLength;
  }
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
};
