import { Readable } from "node:stream";
import { describe, expect, test as it } from "vitest";
import { validateBody } from "./validate-body";

const P = "@sockeye/test";

describe("validateBody", () => {
  it("a body of known length must match the declared length (a string in UTF-8 bytes)", () => {
    expect(() => validateBody("abc", 3, P)).not.toThrow();
    expect(() => validateBody("\u00e9\u00e9", 4, P)).not.toThrow();
    expect(() => validateBody(Buffer.from("abc"), 3, P)).not.toThrow();
    expect(() => validateBody(new Uint16Array(2), 4, P)).not.toThrow();
    expect(() => validateBody("abc", -1, P)).not.toThrow();
    expect(() => validateBody(undefined, 0, P)).not.toThrow();
    for (const [body, declared, actual] of [
      ["abc", 10, 3],
      ["\u00e9\u00e9", 2, 4],
      [Buffer.from("abc"), 2, 3],
      [new Uint8Array(4), 1, 4],
      [undefined, 5, 0],
      ["", 1, 0],
    ] as const) {
      expect(() => validateBody(body, declared, P)).toThrow(
        expect.objectContaining({
          name: "TypeError",
          code: "ERR_HTTP_CONTENT_LENGTH_MISMATCH",
          message: `${P} - the request's content-length header says ${declared} bytes but its body has ${actual}; nothing was sent.`,
        })
      );
    }
  });

  it("a stream passes (it is held to its length while sent); a destroyed or spent one is refused, naming the body", async () => {
    expect(() => validateBody(Readable.from(["a"]), 1, P)).not.toThrow();
    expect(() => validateBody(Readable.from(["a"]), -1, P)).not.toThrow();
    const destroyed = new Readable({ read() {} });
    destroyed.destroy();
    expect(() => validateBody(destroyed, -1, P)).toThrow(
      expect.objectContaining({ code: "ERR_STREAM_DESTROYED", message: expect.stringContaining("request body stream") })
    );
    const spent = Readable.from(["abc"]);
    spent.resume();
    await new Promise((resolve) => spent.once("end", resolve));
    expect(() => validateBody(spent, -1, P)).not.toThrow();
    expect(() => validateBody(spent, 3, P)).toThrow(
      expect.objectContaining({ code: "ERR_HTTP_CONTENT_LENGTH_MISMATCH" })
    );
  });
});
