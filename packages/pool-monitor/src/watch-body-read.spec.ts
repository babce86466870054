import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, test as it } from "vitest";
import { watchBodyRead } from "./watch-body-read";

/** A body fed as a transport feeds it (push from outside, `_read` only a hint), with the calls it saw. */
function watched(): { body: Readable; reads: number; started: () => number } {
  let started = 0;
  const state = { body: undefined as unknown as Readable, reads: 0, started: () => started };
  const body = new Readable({
    read() {
      state.reads++;
    },
  });
  watchBodyRead(body, { bodyReadStarted: () => started++ });
  state.body = body;
  return state;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("watchBodyRead", () => {
  it("a body nobody reads is not started, though Node calls its _read to refill below the high-water mark", async () => {
    const w = watched();
    w.body.push(Buffer.alloc(10));
    await tick();
    w.body.push(Buffer.alloc(10));
    await tick();
    expect(w.reads).toBeGreaterThan(0); // why `_read` (and a source's readMore) is no such signal
    expect(w.started()).toBe(0);
  });

  it("every way a consumer reads starts it: read(), 'data', pipe, for await, pipeline", async () => {
    const ways: ((body: Readable) => Promise<unknown>)[] = [
      async (body) => body.read(),
      async (body) => body.on("data", () => {}),
      async (body) => body.pipe(new Writable({ write: (_c, _e, cb) => cb() })),
      async (body) => {
        for await (const _ of body) break;
      },
      (body) => pipeline(body, new Writable({ write: (_c, _e, cb) => cb() })),
    ];
    for (const read of ways) {
      const w = watched();
      w.body.push(Buffer.alloc(10));
      w.body.push(null);
      await read(w.body);
      await tick();
      expect(w.started()).toBeGreaterThan(0);
    }
  });
});
