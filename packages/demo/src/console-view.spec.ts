/**
 * The demo's terminal output fits the terminal: every line `ConsoleView` writes is at most `columns` visible
 * characters (80 when not a TTY), long event text is wrapped rather than cut, and the transcript keeps the full text.
 * Wrapping never separates a number from its unit ("3.8 s") and never splits a URL (a URL longer than a whole line is
 * the one line allowed to exceed the width).
 * The status line labels idle sockets and shows the recovery hysteresis.
 */
import { describe, expect, it } from "vitest";
import {
  breakUnits,
  ConsoleView,
  packFields,
  shorten,
  statusFields,
  stripAnsi,
  visibleLength,
  wrapLine,
} from "./console-view.mjs";

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

const upstreamWarning =
  "[ 4.8s] upstream would say: @smithy/node-http-handler:WARN - socket usage at capacity=8 and 111 additional requests are enqueued. See https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/node-configuring-maxsockets.html or increase socketAcquisitionWarningTimeout=(millis) in the NodeHttpHandler config.";
const summary =
  "  Sockeye : saturated at +4.2 s (cause unconsumed_bodies: 7 unread, oldest 3.8 s), queue wait p99 0.3 s, 25 %";
const UNIT_START = /^(ms|s|%|req\/s)\b/;
/** A line that is one URL-holding word longer than the width: the only kind allowed to exceed it. */
const urlOnly = (l: string) => /^\S*:\/\/\S*$/.test(stripAnsi(l).trim());

describe("wrapLine", () => {
  it.each([20, 40, 80, 100])("never exceeds %i columns (but for a URL longer than that) and loses no word", (cols) => {
    const wrapped = wrapLine(`[ 9.6s] \x1b[31;1mSOCKEYE logger.warn\x1b[0m  ${warning}`, cols, 10);
    for (const l of wrapped) if (!urlOnly(l)) expect(visibleLength(l)).toBeLessThanOrEqual(cols);
    expect(stripAnsi(wrapped.join(" ")).replace(/\s+/g, "")).toBe(
      stripAnsi(`[ 9.6s] SOCKEYE logger.warn  ${warning}`).replace(/\s+/g, "")
    );
    expect(wrapped.slice(1).every((l) => urlOnly(l) || l.startsWith(" ".repeat(Math.min(10, cols / 2))))).toBe(true);
  });

  it("never separates a number from its unit, at any width from 30 to 100 columns", () => {
    const breaks: string[] = [];
    for (let cols = 30; cols <= 100; cols++) {
      for (const text of [summary, warning, upstreamWarning]) {
        const wrapped = wrapLine(text, cols, 12);
        for (let i = 1; i < wrapped.length; i++) {
          if (/\d$/.test(wrapped[i - 1]) && UNIT_START.test(wrapped[i].trim())) {
            breaks.push(`${cols}: "${wrapped[i - 1].slice(-12)}⏎${wrapped[i].trim().slice(0, 8)}"`);
          }
        }
        for (const l of wrapped) if (!urlOnly(l)) expect(visibleLength(l), `${cols}: ${l}`).toBeLessThanOrEqual(cols);
      }
    }
    expect(breaks).toEqual([]);
    // The README's example run, piped (80 columns), printed "oldest 3.8⏎            s)".
    expect(
      wrapLine("  Sockeye : saturated at +4.2 s (cause unconsumed_bodies: 7 unread, oldest 3.8 s)", 80, 12)
    ).toEqual(["  Sockeye : saturated at +4.2 s (cause unconsumed_bodies: 7 unread, oldest", "            3.8 s)"]);
  });

  it("never splits a URL: each URL of the text is whole on one line, at any width from 20 to 100 columns", () => {
    const urls = [...`${warning} ${upstreamWarning}`.matchAll(/[a-z]+:\/\/[^\s,)]+/g)].map((m) => m[0]);
    expect(urls).toHaveLength(2);
    for (let cols = 20; cols <= 100; cols++) {
      const lines = [...wrapLine(warning, cols, 10), ...wrapLine(upstreamWarning, cols, 10)];
      for (const url of urls)
        expect(
          lines.some((l) => l.includes(url)),
          `${cols}: ${url}`
        ).toBe(true);
    }
    const at80 = wrapLine(upstreamWarning, 80, 10);
    const urlLine = at80.find((l) => l.includes("https://"))!;
    expect(urlLine).toBe(
      "https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/node-configuring-maxsockets.html"
    );
    expect(at80.filter((l) => l !== urlLine).every((l) => visibleLength(l) <= 80)).toBe(true);
  });

  it("joins numbers and units into one break unit, and gives the text back", () => {
    expect(breakUnits("hold 82 ms, oldest 3.8 s) +25 % at 14 sockets")).toEqual([
      "hold ",
      "82 ms, ",
      "oldest ",
      "3.8 s) ",
      "+25 % ",
      "at ",
      "14 ",
      "sockets",
    ]);
    expect(breakUnits(summary).join("")).toBe(summary);
  });

  it("leaves a line that fits alone", () => {
    expect(wrapLine("short", 80, 4)).toEqual(["short"]);
  });
});

describe("shorten", () => {
  it("cuts at a break, never between a number and its unit, and says where the rest is", () => {
    expect(shorten("mean socket hold 82 ms then more", 21, "(more)")).toBe("mean socket hold … (more)");
    expect(shorten("mean socket hold 82 ms then more", 22, "(more)")).toBe("mean socket hold 82 ms … (more)");
    expect(shorten("short", 20, "(more)")).toBe("short");
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
