/**
 * The demo's terminal output fits the terminal: every line `ConsoleView` writes is at most `columns` visible
 * characters (80 when not a TTY), long event text is wrapped rather than cut, and the transcript keeps the full text.
 * The status line labels idle sockets and shows the recovery hysteresis.
 */
import { describe, expect, it } from "vitest";
import { ConsoleView, packFields, statusFields, stripAnsi, visibleLength, wrapLine } from "./console-view.mjs";

/** A stand-in for process.stdout that records what is written. */
function fakeStream(isTTY: boolean, columns?: number) {
  const chunks: string[] = [];
  return { isTTY, columns, chunks, write: (s: string) => chunks.push(s) > 0 };
}

/** Visible lines of everything written, with cursor movements and colours removed. */
function lines(chunks: string[]): string[] {
  return stripAnsi(chunks.join("")).split(/\r?\n/);
}

const warning =
  "@sockeye/node-http-handler:WARN - socket usage at capacity=8 and 78 additional requests are enqueued (origin=http://127.0.0.1:45961, maxSockets=8, state=saturated, oldest queued 560 ms). Cause: the queue keeps growing (arrivals 135.2/s, throughput 96.8/s over 2.0 s, mean socket hold 82 ms). About 14 sockets are needed (by Little's law, 135.2 requests/s × 82 ms held, +25 % headroom): raise maxSockets to 14 or limit concurrency.";

const row = {
  origin: "http://127.0.0.1:45961",
  active: 8,
  maxSockets: 8,
  idle: 1,
  queued: 123,
  oldestQueuedMs: 3100,
  waitP99Ms: 2900,
  reqPerSec: 96,
  state: "saturated",
  cause: "unconsumed_bodies",
  unconsumed: 7,
  clearSamples: 2,
  windowSamples: 5,
};

describe("wrapLine", () => {
  it.each([20, 40, 80, 100])("never exceeds %i columns and loses no word", (cols) => {
    const wrapped = wrapLine(`[ 9.6s] \x1b[31;1mSOCKEYE logger.warn\x1b[0m  ${warning}`, cols, 10);
    for (const l of wrapped) expect(visibleLength(l)).toBeLessThanOrEqual(cols);
    expect(stripAnsi(wrapped.join(" ")).replace(/\s+/g, "")).toBe(
      stripAnsi(`[ 9.6s] SOCKEYE logger.warn  ${warning}`).replace(/\s+/g, "")
    );
    expect(wrapped.slice(1).every((l) => l.startsWith(" ".repeat(Math.min(10, cols / 2))))).toBe(true);
  });

  it("leaves a line that fits alone", () => {
    expect(wrapLine("short", 80, 4)).toEqual(["short"]);
  });
});

describe("status fields", () => {
  it("label idle sockets as kept-alive and show the recovery hysteresis while saturated", () => {
    const fields = statusFields(row, false);
    expect(fields).toContain("idle (kept-alive) 1");
    expect(fields).toContain("state saturated (unconsumed_bodies), recovering: clear for 2/5 samples");
    expect(fields).toContain("unread bodies 7");
    expect(statusFields({ ...row, state: "ok", cause: null, clearSamples: 0 }, false)).toContain("state ok");
  });

  it("pack into lines of at most the given width", () => {
    for (const cols of [40, 80, 100]) {
      const packed = packFields("[ 12.3s]", statusFields(row, true), cols);
      for (const l of packed) expect(visibleLength(l)).toBeLessThanOrEqual(cols);
      expect(packed.join(" ").replace(/\s+/g, " ")).toContain("recovering: clear for 2/5 samples");
    }
  });
});

describe("ConsoleView", () => {
  const model = {
    t: 12.3,
    phase:
      "Phase 3/4 · unread GetObject bodies: healthy background load (38 req/s) + a code path that never reads its Body",
    origins: [row],
    upstream:
      "upstream emulation: 1937 timers armed (12 pending), 422 fired, 2 warning(s) logged, 420 silenced by lockout",
    queueHistory: Array.from({ length: 60 }, (_, i) => i * 3),
  };

  it("piped: every line is at most 80 columns; the transcript keeps the full warning", () => {
    const out = fakeStream(false, 200); // a pipe's columns are ignored: 80
    const view = new ConsoleView(out as never);
    view.title(
      model.phase,
      "Every 350 ms one GetObject's Body is kept but never read nor destroyed (up to 7); each one pins a socket."
    );
    view.log("[ 9.6s] SOCKEYE logger.warn  (shortened)", { full: `[ 9.6s] SOCKEYE logger.warn  ${warning}` });
    view.update(model);
    const written = lines(out.chunks);
    expect(Math.max(...written.map((l) => [...l].length))).toBeLessThanOrEqual(80);
    expect(written.join("\n")).toContain("idle (kept-alive) 1");
    expect(written.join("\n")).not.toContain("\x1b");
    expect(view.transcript.join("\n")).toContain(warning);
  });

  it("in a 100-column TTY: every line of events and of the live panel is at most 100 columns", () => {
    const out = fakeStream(true, 100);
    const view = new ConsoleView(out as never);
    view.update(model);
    view.log(`[ 9.6s] \x1b[31;1mSOCKEYE logger.warn\x1b[0m  ${warning}`);
    view.update(model);
    const written = lines(out.chunks);
    expect(Math.max(...written.map((l) => [...l].length))).toBeLessThanOrEqual(100);
    expect(written.join("\n")).toContain("recovering: clear for 2/5 samples");
  });
});
