/**
 * The demo's terminal output: event lines (phase titles, Sockeye callbacks and log lines, what upstream would say)
 * plus a live status panel.
 *
 * - TTY: the panel (a few lines) is redrawn in place with ANSI cursor moves on every `update()`; an event line first
 *   erases the panel, prints itself, then redraws the panel below it, so events scroll and the panel stays at the
 *   bottom. Colours are used.
 * - Not a TTY (piped, CI): no escape codes at all; the panel is printed as one plain line per origin once per
 *   `plainEveryMs` (1 s).
 */

const ESC = "\x1b[";

/**
 * @typedef {object} OriginRow
 * @property {string} origin
 * @property {number} active
 * @property {number | null} maxSockets
 * @property {number} idle
 * @property {number} queued
 * @property {number} oldestQueuedMs
 * @property {number | null} waitP99Ms queue-wait p99 over the last second, `null` when nothing acquired a socket
 * @property {number} reqPerSec completions per second over the last second
 * @property {string} state
 * @property {string | null} cause
 * @property {number} unconsumed
 */

/**
 * @typedef {object} PanelModel
 * @property {number} t seconds since the story began
 * @property {string} phase phase title
 * @property {OriginRow[]} origins
 * @property {string} upstream one-line summary of the upstream emulation
 * @property {number[]} queueHistory recent total queue depths (sparkline)
 */

export class ConsoleView {
  /**
   * @param {NodeJS.WriteStream} out
   * @param {{ plainEveryMs?: number, tty?: boolean }} [options]
   */
  constructor(out, options = {}) {
    this.out = out;
    this.tty = options.tty ?? out.isTTY === true;
    this.plainEveryMs = options.plainEveryMs ?? 1000;
    this.panelLines = 0;
    this.lastPlainAt = Number.NEGATIVE_INFINITY;
    /** @type {PanelModel | undefined} */
    this.model = undefined;
  }

  /** @param {string} code @param {string} text */
  color(code, text) {
    return this.tty ? `${ESC}${code}m${text}${ESC}0m` : text;
  }

  bold(/** @type {string} */ t) {
    return this.color("1", t);
  }
  dim(/** @type {string} */ t) {
    return this.color("2", t);
  }
  red(/** @type {string} */ t) {
    return this.color("31;1", t);
  }
  green(/** @type {string} */ t) {
    return this.color("32;1", t);
  }
  yellow(/** @type {string} */ t) {
    return this.color("33;1", t);
  }
  cyan(/** @type {string} */ t) {
    return this.color("36;1", t);
  }

  /** Prints event text above the panel. @param {string} text may span several lines */
  log(text) {
    this.erasePanel();
    this.out.write(`${text}\n`);
    this.drawPanel();
  }

  /** Blank line + title bar + explanation. @param {string} title @param {string} explanation */
  title(title, explanation) {
    const bar = "━".repeat(Math.max(3, 78 - title.length));
    this.log(`\n${this.bold(this.cyan(`━━ ${title} `))}${this.cyan(bar)}\n${this.dim(explanation)}`);
  }

  /** New panel data: redraws in place (TTY) or prints one plain line per origin at most once per `plainEveryMs`. */
  update(/** @type {PanelModel} */ model) {
    this.model = model;
    if (this.tty) {
      this.erasePanel();
      this.drawPanel();
      return;
    }
    const now = model.t * 1000;
    if (now - this.lastPlainAt < this.plainEveryMs - 1) return;
    this.lastPlainAt = now;
    for (const o of model.origins) this.out.write(`${plainLine(model.t, o)}\n`);
  }

  /** Erases the panel for good (end of the story). */
  close() {
    this.erasePanel();
    this.model = undefined;
  }

  /** @private */
  erasePanel() {
    if (!this.tty || this.panelLines === 0) return;
    this.out.write(`${ESC}${this.panelLines}A\r${ESC}0J`);
    this.panelLines = 0;
  }

  /** @private */
  drawPanel() {
    if (!this.tty || this.model === undefined) return;
    const m = this.model;
    const lines = [];
    lines.push(this.dim("─".repeat(96)));
    lines.push(`${this.bold(`t=${m.t.toFixed(1).padStart(5)} s`)}  ${m.phase}`);
    lines.push(
      this.dim(
        `${"origin".padEnd(24)}${"active".padStart(7)}${"idle".padStart(6)}${"queued".padStart(8)}${"oldest".padStart(9)}` +
          `${"wait p99".padStart(10)}${"req/s".padStart(8)}  state`
      )
    );
    for (const o of m.origins) {
      const state =
        o.state === "ok" ? this.green("ok") : this.red(`${o.state}${o.cause === null ? "" : ` · ${o.cause}`}`);
      lines.push(
        `${o.origin.padEnd(24)}${`${o.active}/${o.maxSockets ?? "∞"}`.padStart(7)}${String(o.idle).padStart(6)}` +
          `${String(o.queued).padStart(8)}${seconds(o.oldestQueuedMs).padStart(9)}${seconds(o.waitP99Ms).padStart(10)}` +
          `${o.reqPerSec.toFixed(0).padStart(8)}  ${state}${o.unconsumed > 0 ? this.yellow(`  ${o.unconsumed} unread bodies`) : ""}`
      );
    }
    lines.push(`${this.dim("queue ")}${this.cyan(sparkline(m.queueHistory))}`);
    lines.push(this.dim(m.upstream));
    // A wrapped line would break the cursor-up count: cut every line to the terminal width.
    const cols = Math.max(20, (this.out.columns ?? 120) - 1);
    this.out.write(`${lines.map((l) => fit(l, cols)).join("\n")}\n`);
    this.panelLines = lines.length;
  }
}

/**
 * One plain status line.
 * @param {number} t seconds
 * @param {OriginRow} o
 */
export function plainLine(t, o) {
  return (
    `${stamp(t)} ${o.origin}  active ${o.active}/${o.maxSockets ?? "∞"}  idle ${o.idle}  queued ${String(o.queued).padStart(3)}` +
    `  oldest ${seconds(o.oldestQueuedMs).padStart(6)}  wait p99 ${seconds(o.waitP99Ms).padStart(6)}` +
    `  ${o.reqPerSec.toFixed(0).padStart(3)} req/s  ${o.state}${o.cause === null ? "" : ` (${o.cause})`}` +
    (o.unconsumed > 0 ? `  unread bodies ${o.unconsumed}` : "")
  );
}

/** `[ 12.3s]` @param {number} t seconds */
export function stamp(t) {
  return `[${t.toFixed(1).padStart(5)}s]`;
}

/** @param {number | null} ms */
function seconds(ms) {
  if (ms === null) return "—";
  if (ms < 1) return "0 ms";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * Cuts `line` to `cols` visible characters, keeping ANSI escape sequences intact.
 * @param {string} line @param {number} cols
 */
function fit(line, cols) {
  let visible = 0;
  let i = 0;
  while (i < line.length) {
    if (line[i] === "\x1b") {
      const end = line.indexOf("m", i);
      i = end === -1 ? line.length : end + 1;
      continue;
    }
    if (visible === cols) return `${line.slice(0, i)}${ESC}0m`;
    visible++;
    i++;
  }
  return line;
}

/** @param {number[]} values */
function sparkline(values) {
  const ticks = "▁▂▃▄▅▆▇█";
  const max = Math.max(1, ...values);
  return values.map((v) => (v === 0 ? " " : ticks[Math.min(7, Math.floor((v / max) * 7.999))])).join("");
}
