import { Readable, Writable } from "node:stream";
import { describe, expect, test as it } from "vitest";
import { deliverBodyErrorLate } from "./deliver-body-error-late";

/** Destroyed with `error` as node:http's `IncomingMessage` is: `errored` set, no `'error'` emitted without a listener. */
function destroyedBody(error: Error): Readable {
  const body = new Readable({
    read() {},
    destroy(_error, callback) {
      callback(null);
    },
  });
  body.push(Buffer.alloc(10));
  body.destroy(error);
  deliverBodyErrorLate(body);
  return body;
}

describe("deliverBodyErrorLate", () => {
  it("the SDK's collector (pipe, then an 'error' listener) attached after the destroy gets the error", async () => {
    const error = new Error("late");
    const body = destroyedBody(error);
    await new Promise((resolve) => setImmediate(resolve));
    const collected = new Promise((_resolve, reject) => {
      body.pipe(new Writable({ write: (_c, _e, cb) => cb() }));
      body.on("error", reject);
    });
    await expect(collected).rejects.toBe(error);
  });

  it("for await reads the error itself; no 'error' is emitted without a listener", async () => {
    const error = new Error("late");
    const body = destroyedBody(error);
    await new Promise((resolve) => setImmediate(resolve));
    await expect(
      (async () => {
        for await (const _ of body);
      })()
    ).rejects.toBe(error);
  });
});
