/**
 * The demo's terminal output: event lines (phase titles, Sockeye callbacks and log lines, what upstream would say)
 * plus a live status panel.
 *
 * - TTY: the panel (a few lines) is redrawn in place with ANSI cursor moves on every `update()`; an event line first
 *   erases the panel, prints itself, then redraws the panel below it, so events scroll and the panel stays at the
 *   bottom. Colours are used.
 * - Not a TTY (piped, CI): no escape codes at all; the panel is printed as plain status lines per origin once per
 *   `plainEveryMs` (1 s).
 *
 * Every printed line fits the terminal: `process.stdout.columns` in a TTY (read on every write, so resizing works),
 * 80 when not a TTY. Event text is word-wrapped (ANSI-aware) with a hanging indent, status fields are packed into as
 * many lines as needed; nothing is cut. A line never breaks between a number and its unit ("0.3 s", "82 ms", "25 %")
 * and never inside a URL: a URL that does not fit goes to the next line whole (the one exception to the width: a URL
 * longer than a whole line is printed unbroken, so that it can still be copied or clicked). Every event is also kept, unwrapped and uncoloured, in `transcript` (the
 * demo writes it to `out/demo-report.txt`), with the full text where the terminal got a shortened one.
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
 * @property {number} clearSamples consecutive samples on which the cause was gone (recovery hysteresis)
 * @property {number} windowSamples samples needed to recover
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
    /** @type {string[]} every event, unwrapped and without escape codes */
    this.transcript = [];
  }

  /** Usable width: the TTY's columns (80 if unknown), 80 when not a TTY. */
  get columns() {
    return this.tty ? Math.max(40, this.out.columns ?? 80) : 80;
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

  /**
   * Prints event text above the panel, each line word-wrapped to the terminal width (continuation lines indented by
   * `indent`), and keeps `full` (default: `text`) in the transcript.
   * @param {string} text may span several lines
   * @param {{ indent?: number, full?: string }} [options]
   */
  log(text, options = {}) {
    this.transcript.push(stripAnsi(options.full ?? text));
    this.erasePanel();
    const cols = this.columns;
    const out = text.split("\n").flatMap((line) => wrapLine(line, cols, options.indent ?? 10));
    this.out.write(`${out.join("\n")}\n`);
    this.drawPanel();
  }

  /** Blank line + title bar + explanation. @param {string} title @param {string} explanation */
  title(title, explanation) {
    const cols = this.columns;
    const head = wrapLine(`━━ ${title}`, cols, 3);
    const last = head.length - 1;
    head[last] = `${head[last]} ${"━".repeat(Math.max(3, cols - 1 - visibleLength(head[last])))}`;
    if (visibleLength(head[last]) > cols) head[last] = head[last].slice(0, cols);
    this.log(`\n${head.map((l) => this.bold(this.cyan(l))).join("\n")}\n${this.dim(explanation)}`, { indent: 0 });
  }

  /** New panel data: redraws in place (TTY) or prints each origin's status as plain lines at most once per `plainEveryMs`. */
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
    const cols = this.columns;
    const many = model.origins.length > 1;
    for (const o of model.origins) {
      const lines = packFields(stamp(model.t), statusFields(o, many), cols);
      this.out.write(`${lines.join("\n")}\n`);
    }
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
    // One column spare: a line exactly as wide as the terminal can wrap early on some terminals.
    const cols = this.columns - 1;
    const many = m.origins.length > 1;
    const lines = [this.dim("─".repeat(cols))];
    lines.push(`${this.bold(`t=${m.t.toFixed(1).padStart(5)} s`)}  ${m.phase}`);
    for (const o of m.origins) {
      const fields = statusFields(o, many).map((f) =>
        f.startsWith("state ok")
          ? this.green(f)
          : f.startsWith("state ")
            ? this.red(f)
            : f.startsWith("unread")
              ? this.yellow(f)
              : f
      );
      lines.push(...packFields(" ", fields, cols));
    }
    lines.push(`${this.dim("queue ")}${this.cyan(sparkline(m.queueHistory.slice(-(cols - 6))))}`);
    lines.push(...wrapLine(this.dim(m.upstream), cols, 2));
    // A wrapped line would break the cursor-up count: every line is at most `cols` wide (cut defensively).
    const fitted = lines.flatMap((l) => wrapLine(l, cols, 2)).map((l) => fit(l, cols));
    this.out.write(`${fitted.join("\n")}\n`);
    this.panelLines = fitted.length;
  }
}

/**
 * The status of one origin as short fields, most important first. "idle (kept-alive)" counts kept-alive sockets
 * waiting for a request; while a saturated origin recovers the state says how far its hysteresis has got.
 * @param {OriginRow} o
 * @param {boolean} withOrigin
 * @returns {string[]}
 */
export function statusFields(o, withOrigin) {
  const fields = [];
  if (withOrigin) fields.push(o.origin);
  fields.push(
    `active ${o.active}/${o.maxSockets ?? "∞"}`,
    `idle (kept-alive) ${o.idle}`,
    `queued ${o.queued}`,
    `oldest ${seconds(o.oldestQueuedMs)}`,
    `wait p99 ${seconds(o.waitP99Ms)}`,
    `${o.reqPerSec.toFixed(0)} req/s`
  );
  let state = `state ${o.state}${o.cause === null ? "" : ` (${o.cause})`}`;
  if (o.state !== "ok" && o.clearSamples > 0) {
    state += `, recovering: clear for ${o.clearSamples}/${o.windowSamples} samples`;
  }
  fields.push(state);
  if (o.unconsumed > 0) fields.push(`unread bodies ${o.unconsumed}`);
  return fields;
}

/**
 * Packs fields, separated by two spaces, into lines of at most `cols` visible characters; the first line starts with
 * `prefix`, the others are indented to the prefix's width.
 * @param {string} prefix @param {string[]} fields @param {number} cols
 * @returns {string[]}
 */
export function packFields(prefix, fields, cols) {
  const indent = " ".repeat(visibleLength(prefix));
  const lines = [];
  let line = prefix;
  let empty = true;
  for (const field of fields) {
    const next = empty ? `${line} ${field}` : `${line}  ${field}`;
    if (!empty && visibleLength(next) > cols) {
      lines.push(line);
      line = `${indent} ${field}`;
    } else line = next;
    empty = false;
  }
  lines.push(line);
  return lines.flatMap((l) => wrapLine(l, cols, indent.length + 1));
}

/** Units kept on the line of the number before them, with trailing punctuation: `82 ms,` `3.8 s)` `25 %`. */
const UNIT = /^(?:ms|s|µs|min|h|%|B|kB|KB|KiB|MB|MiB|GB|GiB|req\/s|requests\/s)[).,;:\]]*$/;
/** A word holding a URL (`origin=http://127.0.0.1:45961,` counts): never split. */
const URL_WORD = /[a-z][a-z0-9+.-]*:\/\/\S/i;

/**
 * The units a line may break between: words with their trailing spaces, a number and its unit joined into one.
 * @param {string} line @returns {string[]} concatenated, they give `line` back
 */
export function breakUnits(line) {
  /** @type {string[]} */
  const out = [];
  for (const word of line.split(/(?<= )/)) {
    const prev = out.at(-1);
    if (prev?.endsWith(" ") && /\d$/.test(stripAnsi(prev).trimEnd()) && UNIT.test(stripAnsi(word).trim())) {
      out[out.length - 1] = `${prev}${word}`;
    } else out.push(word);
  }
  return out;
}

/**
 * Word-wraps one line (ANSI escape sequences count as zero width and are kept) to `cols` visible characters;
 * continuation lines start with `indent` spaces. Breaks only between `breakUnits()`, so a number keeps its unit. A
 * URL is never split: it moves to the next line (unindented if the indent leaves too little room; longer than the
 * line, it exceeds it). Any other word longer than the line is split.
 * @param {string} line @param {number} cols @param {number} indent
 * @returns {string[]}
 */
export function wrapLine(line, cols, indent) {
  if (visibleLength(line) <= cols) return [line];
  const pad = " ".repeat(Math.min(indent, Math.floor(cols / 2)));
  const out = [];
  let current = "";
  let len = 0;
  for (let word of breakUnits(line)) {
    if (len + visibleLength(word.trimEnd()) <= cols) {
      current += word;
      len += visibleLength(word);
      continue;
    }
    if (len > pad.length || (out.length === 0 && len > 0)) {
      out.push(current.trimEnd());
      current = pad;
      len = pad.length;
    }
    if (URL_WORD.test(stripAnsi(word))) {
      if (len + visibleLength(word.trimEnd()) > cols && stripAnsi(current).trim() === "") {
        current = "";
        len = 0;
      }
      current += word;
      len += visibleLength(word);
      continue;
    }
    while (len + visibleLength(word.trimEnd()) > cols) {
      const [head, tail] = splitVisible(word, cols - len);
      out.push(current + head);
      current = pad;
      len = pad.length;
      word = tail;
    }
    current += word;
    len += visibleLength(word);
  }
  if (stripAnsi(current).trim() !== "") out.push(current.trimEnd());
  return out;
}

/**
 * `text` cut to at most `max` visible characters at a break (`breakUnits()`: never between a number and its unit,
 * never inside a URL), followed by ` … ${rest}` when cut.
 * @param {string} text @param {number} max @param {string} rest e.g. "(full text in demo-report.txt)"
 */
export function shorten(text, max, rest) {
  if (visibleLength(text) <= max) return text;
  let kept = "";
  for (const unit of breakUnits(text)) {
    if (visibleLength((kept + unit).trimEnd()) > max) break;
    kept += unit;
  }
  return `${kept.trimEnd()} … ${rest}`;
}

/** Visible length of a string: escape sequences excluded. @param {string} s */
export function visibleLength(s) {
  return [...stripAnsi(s)].length;
}

/** @param {string} s */
export function stripAnsi(s) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape character is the point
  return s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}

/** Splits `s` after `n` visible characters (escape sequences stay whole). @param {string} s @param {number} n */
function splitVisible(s, n) {
  let visible = 0;
  let i = 0;
  while (i < s.length && visible < n) {
    if (s[i] === "\x1b") {
      const end = s.indexOf("m", i);
      i = end === -1 ? s.length : end + 1;
      continue;
    }
    const cp = s.codePointAt(i) ?? 0;
    i += cp > 0xffff ? 2 : 1;
    visible++;
  }
  return [s.slice(0, i), s.slice(i)];
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
