/**
 * Hand-written SVG of the recorded story (no dependencies), in two steps: `layoutTimeline()` computes every text,
 * glyph and line with its coordinates, `renderTimelineSvg()` writes them out. The layout is what the tests check: no
 * two texts (or a text and a glyph) intersect, and no text crosses a line.
 *
 * Top to bottom:
 * - title, subtitle (wrapped at " · " when too long);
 * - a phase row: the phase titles, each inside its shaded band;
 * - the Sockeye lane (three text rows): ▼ saturation, ▲ recovery, with their labels;
 * - the upstream lane (three text rows): ◆ a warning upstream would log (first row); ◇ runs of checks whose criteria
 *   held but that its 15 s lockout silenced (second row), each run labelled "silenced by 15 s lockout (n)"; ✕ the
 *   moment upstream's own client was found dead (first row);
 * - a notes row ("batch drained", "load stops");
 * - panel "queued requests" and panel "sockets" (active, idle, unread bodies, the maxSockets limit), sharing one time
 *   axis; warnings, recoveries and notes draw a vertical guide line through both panels only;
 * - the legend and a footnote.
 *
 * Lines (grids, series, guides, phase boundaries) live only inside the panels and as horizontal separators between
 * rows, and every label sits in a row, so texts and lines cannot meet. Labels are placed greedily in time order, each
 * next to what it labels (`near` in `layout.labels`): in its marker's row right beside the marker (or the run of ◇),
 * else left beside it; else in another row of the lane, directly above or below it (the label's span covers the
 * marker, or overlaps the run); only when all of those are taken, the free place nearest to it in the lane (never on
 * the recorded runs; the spec checks). Text widths are conservative estimates for DejaVu Sans (`textBox`), checked
 * against real rendering in the spec.
 *
 * Output is deterministic for a given timeline (fixed decimals, no timestamps), so two runs can be diffed.
 */

export const W = 1200;
export const H = 744;
const LEFT = 78;
const RIGHT = 28;
const PLOT_W = W - LEFT - RIGHT;
const FONT = "DejaVu Sans, Helvetica, Arial, sans-serif";
const PHASE_ROW = 76;
const S_ROWS = [98, 114, 130];
const U_ROWS = [154, 170, 186];
const NOTE_ROW = 208;
const QA = { top: 220, bottom: 444 };
const SB = { top: 470, bottom: 620 };
/** Largest gap, px, between a label and its marker (or run) when they share a row. */
export const NEAR_GAP = 16;
const LABEL_SIZE = 11.5;
const COLORS = {
  queue: "#3b6fb6",
  active: "#1f2937",
  idle: "#12a4b6",
  unread: "#8e44ad",
  limit: "#9aa3ad",
  sockeye: "#d62728",
  recovered: "#2a9d3c",
  upstream: "#f08c00",
  silenced: "#b86b00",
  grid: "#e3e7ec",
  frame: "#b8c1cc",
  text: "#1f2937",
  muted: "#5f6b78",
  bands: ["#f4f7fb", "#fbf8f3"],
};

/**
 * @typedef {object} TextItem
 * @property {number} x anchor x
 * @property {number} y baseline
 * @property {string} text
 * @property {number} size font size, px
 * @property {"start" | "middle" | "end"} anchor
 * @property {boolean} [bold]
 * @property {boolean} [italic]
 * @property {string} color
 * @property {boolean} [rotated] rotated -90° around (x, y)
 */
/**
 * A straight line; `series: true` marks a segment of a polyline (drawn as part of the polyline, listed for the checks).
 * @typedef {{ x1: number, y1: number, x2: number, y2: number, color: string, width: number, dash?: string, opacity?: number, series?: boolean }} Line
 */
/** @typedef {{ kind: "down" | "up" | "diamond" | "hollow" | "cross", cx: number, cy: number, r: number, color: string }} Glyph */
/** @typedef {{ x0: number, y0: number, x1: number, y1: number }} Box */
/**
 * @typedef {object} Layout
 * @property {Array<{ x: number, y: number, w: number, h: number, fill: string }>} bands
 * @property {Line[]} lines every straight line, polylines split into segments
 * @property {Array<{ points: number[][], color: string, width: number, dash?: string }>} polylines
 * @property {string | undefined} area the queue area path
 * @property {Glyph[]} glyphs
 * @property {TextItem[]} texts
 * @property {string[]} dropped labels that found no free place (none expected; the spec asserts it)
 * @property {PlacedLabel[]} labels every label placed for a marker, run or phase, with what it labels
 */
/**
 * @typedef {object} PlacedLabel
 * @property {TextItem} text
 * @property {number} from x where the labelled thing starts (a marker's x, a run's first ◇)
 * @property {number} to x where it ends (= from for a single marker)
 * @property {number} glyphRow the row its glyph sits in (the labelled thing's row)
 * @property {boolean} near placed beside it in its row, or directly above/below it in its lane
 */

/**
 * Conservative width of `text` in DejaVu Sans, px (per-character classes, measured with resvg; never less than
 * the rendered width, which the spec checks).
 * @param {string} text @param {number} size @param {boolean} [bold]
 */
export function textWidth(text, size, bold = false) {
  let em = 0;
  for (const ch of text) {
    if (ch === " ") em += 0.33;
    else if ("mwMW@%".includes(ch)) em += 1.0;
    else if ("iljtfrI.,:;!|'()[]".includes(ch)) em += 0.42;
    else if (/[A-Z]/.test(ch)) em += 0.74;
    else if (/[a-z0-9]/.test(ch)) em += 0.64;
    else em += 0.9;
  }
  return em * size * (bold ? 1.13 : 1);
}

/** The box a text occupies (ascent 0.82 em above the baseline, descent 0.26 em below). @param {TextItem} t @returns {Box} */
export function textBox(t) {
  const w = textWidth(t.text, t.size, t.bold);
  const up = 0.82 * t.size;
  const down = 0.26 * t.size;
  if (t.rotated) {
    // rotate(-90) around (x, y): the text runs upwards from y, its ascent to the left of x.
    const y0 = t.anchor === "middle" ? t.y - w / 2 : t.anchor === "end" ? t.y : t.y - w;
    return { x0: t.x - up, y0, x1: t.x + down, y1: y0 + w };
  }
  const x0 = t.anchor === "middle" ? t.x - w / 2 : t.anchor === "end" ? t.x - w : t.x;
  return { x0, y0: t.y - up, x1: x0 + w, y1: t.y + down };
}

/** @param {Glyph} g @returns {Box} */
export function glyphBox(g) {
  return { x0: g.cx - g.r - 1, y0: g.cy - g.r - 1, x1: g.cx + g.r + 1, y1: g.cy + g.r + 1 };
}

/**
 * @param {object} input
 * @param {import("./timeline.mjs").Sample[]} input.samples one origin's samples
 * @param {import("./timeline.mjs").Marker[]} input.markers
 * @param {import("./timeline.mjs").Phase[]} input.phases
 * @param {number} input.maxSockets
 * @param {string} input.title
 * @param {string} input.subtitle
 * @returns {Layout}
 */
export function layoutTimeline({ samples, markers, phases, maxSockets, title, subtitle }) {
  const tEnd = Math.max(1, samples.at(-1)?.t ?? 1, ...phases.map((p) => (Number.isNaN(p.end) ? p.start : p.end)));
  const x = (/** @type {number} */ t) => LEFT + (t / tEnd) * PLOT_W;
  const qMax = niceCeil(1.08 * Math.max(2 * maxSockets, ...samples.map((s) => s.queued)));
  const sMax = maxSockets + 2 - (maxSockets % 2);
  const yQ = (/** @type {number} */ v) => QA.bottom - (v / qMax) * (QA.bottom - QA.top);
  const yS = (/** @type {number} */ v) => SB.bottom - (v / sMax) * (SB.bottom - SB.top);

  /** @type {Layout} */
  const layout = {
    bands: [],
    lines: [],
    polylines: [],
    area: undefined,
    glyphs: [],
    texts: [],
    dropped: [],
    labels: [],
  };
  const { lines, texts, glyphs } = layout;
  /** @param {Omit<TextItem, "anchor" | "color"> & Partial<TextItem>} t */
  const text = (t) => texts.push({ anchor: "start", color: COLORS.text, ...t });

  // Title and subtitle (wrapped at " · " to fit the canvas).
  text({ x: LEFT, y: 26, text: title, size: 19, bold: true });
  let y = 44;
  for (const line of wrap(subtitle, W - LEFT - 8, 12)) {
    text({ x: LEFT, y, text: line, size: 12, color: COLORS.muted });
    y += 14;
  }

  // Phase bands (shading from the phase row down through both panels) and titles inside them.
  const bandTop = PHASE_ROW - 12;
  phases.forEach((p, i) => {
    const end = Number.isNaN(p.end) ? tEnd : p.end;
    layout.bands.push({
      x: x(p.start),
      y: bandTop,
      w: x(end) - x(p.start),
      h: SB.bottom - bandTop,
      fill: COLORS.bands[i % 2],
    });
    lines.push({ x1: x(p.start), x2: x(p.start), y1: QA.top, y2: SB.bottom, color: "#c9d1da", width: 1 });
    const room = x(end) - x(p.start) - 10;
    const full = `${p.index} · ${p.name}`;
    const label = textWidth(full, 12, true) <= room ? full : String(p.index);
    text({ x: x(p.start) + 5, y: PHASE_ROW + 4, text: label, size: 12, bold: true, color: COLORS.muted });
  });

  // Lane captions and the separators between rows (outside every label's box).
  text({ x: LEFT - 8, y: S_ROWS[0] + 8, text: "Sockeye", size: 12, bold: true, anchor: "end", color: COLORS.sockeye });
  text({
    x: LEFT - 8,
    y: U_ROWS[0] + 8,
    text: "upstream",
    size: 12,
    bold: true,
    anchor: "end",
    color: COLORS.upstream,
  });
  for (const sy of [(S_ROWS[2] + U_ROWS[0]) / 2, (U_ROWS[2] + NOTE_ROW) / 2 - 1]) {
    lines.push({ x1: LEFT, x2: LEFT + PLOT_W, y1: sy, y2: sy, color: COLORS.grid, width: 1 });
  }

  // Panels: frames, grids, axes.
  panel(layout, QA, qMax / 4, qMax, yQ, "queued requests");
  panel(layout, SB, 2, sMax, yS, "sockets");
  const step = tEnd > 90 ? 10 : 5;
  for (let t = 0; t <= tEnd + 1e-9; t += step) {
    for (const p of [QA, SB]) lines.push({ x1: x(t), x2: x(t), y1: p.top, y2: p.bottom, color: COLORS.grid, width: 1 });
    text({ x: x(t), y: SB.bottom + 19, text: `${t} s`, size: 12, anchor: "middle", color: COLORS.muted });
  }
  lines.push({
    x1: LEFT,
    x2: LEFT + PLOT_W,
    y1: yS(maxSockets),
    y2: yS(maxSockets),
    color: COLORS.limit,
    width: 1.2,
    dash: "6 4",
  });

  // Series.
  if (samples.length > 0) {
    const area = [`M${f(x(samples[0].t))},${f(yQ(0))}`];
    for (const s of samples) area.push(`L${f(x(s.t))},${f(yQ(s.queued))}`);
    area.push(`L${f(x(samples.at(-1)?.t ?? 0))},${f(yQ(0))}Z`);
    layout.area = area.join("");
    /** @param {(s: import("./timeline.mjs").Sample) => number[]} point @param {string} color @param {number} width @param {string} [dash] */
    const series = (point, color, width, dash) => {
      const points = samples.map(point);
      layout.polylines.push({ points, color, width, dash });
      for (let i = 1; i < points.length; i++) {
        const [x1, y1] = points[i - 1];
        const [x2, y2] = points[i];
        lines.push({ x1, y1, x2, y2, color, width, dash, series: true });
      }
    };
    series((s) => [x(s.t), yQ(s.queued)], COLORS.queue, 1.8);
    series((s) => [x(s.t), yS(s.unconsumed)], COLORS.unread, 2, "5 3");
    series((s) => [x(s.t), yS(s.idle)], COLORS.idle, 1.8);
    series((s) => [x(s.t), yS(s.active)], COLORS.active, 2.2);
  }

  // Markers, in time order. Obstacles per row: boxes of placed labels and glyphs.
  const sorted = [...markers].sort((a, b) => a.t - b.t);
  /** @type {Map<number, Box[]>} */
  const used = new Map([...S_ROWS, ...U_ROWS, NOTE_ROW].map((r) => [r, []]));
  /** @param {Glyph} g */
  const glyph = (g) => {
    glyphs.push(g);
    used.get(g.cy)?.push(glyphBox(g));
  };

  // Glyphs first, so that labels avoid every glyph, later ones included.
  /** @type {Array<{ first: number, last: number, count: number }>} */
  const runs = [];
  let lastHollowX = Number.NEGATIVE_INFINITY;
  for (const m of sorted) {
    const mx = x(m.t);
    if (m.kind === "upstream-suppressed") {
      const run = runs.at(-1);
      if (run !== undefined && m.t - run.last < 1.5) {
        run.last = m.t;
        run.count++;
      } else runs.push({ first: m.t, last: m.t, count: 1 });
      if (mx - lastHollowX >= 7) {
        lastHollowX = mx;
        glyph({ kind: "hollow", cx: mx, cy: U_ROWS[1], r: 4, color: COLORS.upstream });
      }
    } else if (m.kind === "sockeye-saturated")
      glyph({ kind: "down", cx: mx, cy: S_ROWS[0], r: 6, color: COLORS.sockeye });
    else if (m.kind === "sockeye-recovered")
      glyph({ kind: "up", cx: mx, cy: S_ROWS[0], r: 6, color: COLORS.recovered });
    else if (m.kind === "upstream-warn")
      glyph({ kind: "diamond", cx: mx, cy: U_ROWS[0], r: 6, color: COLORS.upstream });
    else if (m.kind === "upstream-dead") glyph({ kind: "cross", cx: mx, cy: U_ROWS[0], r: 5, color: COLORS.upstream });
  }

  /**
   * Places one label next to what it labels, in the first free candidate position (see the header): beside it in
   * `rows[0]` (right, then left), else directly above/below it in the other rows (its span covering the marker, or
   * overlapping the run), else the free place nearest to it in `rows`.
   * @param {string} label @param {number} mx @param {number[]} rows the glyph's row first @param {string} color
   * @param {{ italic?: boolean, gap?: number, size?: number, from?: number, to?: number }} [o] from/to: the x span the
   *   label should sit beside (a run of glyphs), default mx
   */
  const place = (label, mx, rows, color, o = {}) => {
    const size = o.size ?? LABEL_SIZE;
    const gap = o.gap ?? 12; // clears the marker's glyph box and the 3 px padding
    const w = textWidth(label, size);
    const from = o.from ?? mx;
    const to = o.to ?? mx;
    /** @type {Array<[number, number, boolean]>} row, x0, near */
    const candidates = [
      [rows[0], to + gap, true],
      [rows[0], from - gap - w, true],
    ];
    // Above/below: x0 from "starts at the marker" to "ends at the marker", nearest to the first first.
    const first = from - 4;
    const last = to + 4 - w;
    const spans = [first, last];
    for (let x0 = first - 6; x0 > last; x0 -= 6) spans.push(x0);
    spans.sort((a, b) => Math.abs(a - first) - Math.abs(b - first));
    for (const row of rows.slice(1)) for (const x0 of spans) candidates.push([row, x0, true]);
    // Then anywhere in those rows, nearest to the marker first (only when the markers are denser than their labels).
    /** @type {Array<[number, number, boolean]>} */
    const sweep = [];
    for (const row of rows) for (let x0 = LEFT; x0 + w <= W - 4; x0 += 6) sweep.push([row, x0, false]);
    sweep.sort((a, b) => Math.abs(a[1] - from) - Math.abs(b[1] - from));
    candidates.push(...sweep);
    for (const [row, x0, near] of candidates) {
      const item = {
        x: x0,
        y: row + 4,
        text: label,
        size,
        anchor: /** @type {const} */ ("start"),
        color,
        italic: o.italic,
      };
      const box = textBox(item);
      if (box.x0 < LEFT || box.x1 > W - 4) continue;
      const boxes = /** @type {Box[]} */ (used.get(row));
      if (boxes.some((b) => intersects(pad(box, 3), b))) continue;
      boxes.push(box);
      texts.push(item);
      layout.labels.push({ text: item, from, to, glyphRow: rows[0], near });
      return;
    }
    layout.dropped.push(label);
  };

  for (const m of sorted) {
    const mx = x(m.t);
    if (m.kind === "note") {
      lines.push({ x1: mx, x2: mx, y1: QA.top, y2: SB.bottom, color: COLORS.muted, width: 1, dash: "2 3" });
      place(m.label, mx, [NOTE_ROW], COLORS.muted, { italic: true, gap: 3, size: 11 });
    } else if (m.kind === "sockeye-saturated" || m.kind === "sockeye-recovered") {
      const color = m.kind === "sockeye-saturated" ? COLORS.sockeye : COLORS.recovered;
      lines.push({ x1: mx, x2: mx, y1: QA.top, y2: SB.bottom, color, width: 1.4, opacity: 0.85 });
      place(m.label, mx, S_ROWS, color);
    } else if (m.kind === "upstream-warn" || m.kind === "upstream-dead") {
      lines.push({
        x1: mx,
        x2: mx,
        y1: QA.top,
        y2: SB.bottom,
        color: COLORS.upstream,
        width: 1.4,
        dash: "5 3",
        opacity: 0.85,
      });
      place(m.label, mx, U_ROWS, COLORS.upstream);
    }
  }
  for (const run of runs) {
    place(`silenced by 15 s lockout (${run.count})`, x(run.first), [U_ROWS[1], U_ROWS[2], U_ROWS[0]], COLORS.silenced, {
      from: x(run.first),
      to: x(run.last),
      gap: 8,
    });
  }
  // Phases in which Sockeye stayed silent say so in its lane.
  for (const p of phases) {
    const end = Number.isNaN(p.end) ? tEnd : p.end;
    if (!markers.some((m) => m.kind.startsWith("sockeye-") && m.t >= p.start && m.t < end)) {
      place("no warning", x(p.start), S_ROWS, COLORS.muted, { italic: true, gap: 6 });
    }
  }

  legend(layout, maxSockets);
  text({
    x: LEFT,
    y: H - 10,
    text: "Samples every 250 ms from handler.getPoolStats(). Upstream: the real @smithy/node-http-handler checkSocketUsage(), called by one setTimeout per request.",
    size: 11,
    color: COLORS.muted,
  });
  return layout;
}

/**
 * @param {Layout} layout
 * @param {{ top: number, bottom: number }} p
 * @param {number} step tick step
 * @param {number} max
 * @param {(v: number) => number} y
 * @param {string} caption
 */
function panel(layout, p, step, max, y, caption) {
  for (const [x1, y1, x2, y2] of [
    [LEFT, p.top, LEFT + PLOT_W, p.top],
    [LEFT, p.bottom, LEFT + PLOT_W, p.bottom],
    [LEFT, p.top, LEFT, p.bottom],
    [LEFT + PLOT_W, p.top, LEFT + PLOT_W, p.bottom],
  ]) {
    layout.lines.push({ x1, y1, x2, y2, color: COLORS.frame, width: 1 });
  }
  for (let v = 0; v <= max + 1e-9; v += step) {
    layout.lines.push({ x1: LEFT, x2: LEFT + PLOT_W, y1: y(v), y2: y(v), color: COLORS.grid, width: 1 });
    layout.texts.push({ x: LEFT - 6, y: y(v) + 4, text: String(v), size: 12, anchor: "end", color: COLORS.muted });
  }
  const cy = (p.top + p.bottom) / 2;
  layout.texts.push({ x: 22, y: cy, text: caption, size: 12, anchor: "middle", color: COLORS.muted, rotated: true });
}

/** @param {Layout} layout @param {number} maxSockets */
function legend(layout, maxSockets) {
  const items = [
    ["area", COLORS.queue, "queued requests"],
    ["line", COLORS.active, "active sockets"],
    ["line", COLORS.idle, "idle sockets"],
    ["dash", COLORS.unread, "unread bodies (Sockeye)"],
    ["limit", COLORS.limit, `maxSockets limit (${maxSockets})`],
    ["down", COLORS.sockeye, "Sockeye saturation"],
    ["up", COLORS.recovered, "Sockeye recovery"],
    ["diamond", COLORS.upstream, "upstream warning"],
    ["hollow", COLORS.upstream, "upstream criteria met, silenced by its 15 s lockout"],
    ["cross", COLORS.upstream, "upstream's client dead"],
  ];
  let lx = LEFT;
  let ly = SB.bottom + 46;
  for (const [kind, color, label] of items) {
    const w = 24 + textWidth(label, 12) + 22;
    if (lx + w > W - RIGHT) {
      lx = LEFT;
      ly += 22;
    }
    const cy = ly - 4;
    if (kind === "area" || kind === "line" || kind === "dash" || kind === "limit") {
      // Legend swatches are drawn as short lines/boxes outside every label box.
      layout.lines.push({
        x1: lx,
        x2: lx + 18,
        y1: cy,
        y2: cy,
        color,
        width: kind === "area" ? 8 : 2.2,
        dash: kind === "dash" ? "5 3" : kind === "limit" ? "6 4" : undefined,
        opacity: kind === "area" ? 0.35 : undefined,
      });
    } else {
      layout.glyphs.push({
        kind: /** @type {Glyph["kind"]} */ (kind),
        cx: lx + 9,
        cy,
        r: kind === "hollow" ? 4.5 : kind === "cross" ? 5 : 6,
        color,
      });
    }
    layout.texts.push({ x: lx + 24, y: ly, text: label, size: 12, anchor: "start", color: COLORS.text });
    lx += w;
  }
}

/**
 * The SVG document.
 * @param {Parameters<typeof layoutTimeline>[0]} input
 * @returns {string}
 */
export function renderTimelineSvg(input) {
  const layout = layoutTimeline(input);
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="${FONT}" font-size="12" fill="${COLORS.text}">`
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  for (const b of layout.bands) {
    out.push(`<rect x="${f(b.x)}" y="${f(b.y)}" width="${f(b.w)}" height="${f(b.h)}" fill="${b.fill}"/>`);
  }
  if (layout.area !== undefined) {
    out.push(`<path d="${layout.area}" fill="${COLORS.queue}" fill-opacity="0.28" stroke="none"/>`);
  }
  for (const l of layout.lines) {
    if (l.series) continue;
    out.push(
      `<line x1="${f(l.x1)}" y1="${f(l.y1)}" x2="${f(l.x2)}" y2="${f(l.y2)}" stroke="${l.color}" stroke-width="${l.width}"` +
        `${l.dash === undefined ? "" : ` stroke-dasharray="${l.dash}"`}${l.opacity === undefined ? "" : ` stroke-opacity="${l.opacity}"`}/>`
    );
  }
  for (const p of layout.polylines) {
    out.push(
      `<polyline points="${p.points.map(([a, b]) => `${f(a)},${f(b)}`).join(" ")}" fill="none" stroke="${p.color}" ` +
        `stroke-width="${p.width}" stroke-linejoin="round"${p.dash === undefined ? "" : ` stroke-dasharray="${p.dash}"`}/>`
    );
  }
  for (const g of layout.glyphs) out.push(glyphSvg(g));
  for (const t of layout.texts) {
    const attrs = [
      `x="${f(t.x)}"`,
      `y="${f(t.y)}"`,
      `font-size="${t.size}"`,
      t.anchor === "start" ? "" : `text-anchor="${t.anchor}"`,
      t.bold ? `font-weight="bold"` : "",
      t.italic ? `font-style="italic"` : "",
      t.color === COLORS.text ? "" : `fill="${t.color}"`,
      t.rotated ? `transform="rotate(-90 ${f(t.x)} ${f(t.y)})"` : "",
    ].filter((a) => a !== "");
    out.push(`<text ${attrs.join(" ")}>${esc(t.text)}</text>`);
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/** @param {Glyph} g */
function glyphSvg(g) {
  const { cx, cy, r } = g;
  if (g.kind === "cross") {
    const line = (/** @type {number} */ dy) =>
      `<line x1="${f(cx - r)}" y1="${f(cy - dy)}" x2="${f(cx + r)}" y2="${f(cy + dy)}" stroke="${g.color}" stroke-width="2.4"/>`;
    return `${line(r)}${line(-r)}`;
  }
  if (g.kind === "diamond" || g.kind === "hollow") {
    const fill = g.kind === "hollow" ? "none" : g.color;
    return `<polygon points="${f(cx)},${f(cy - r)} ${f(cx + r)},${f(cy)} ${f(cx)},${f(cy + r)} ${f(cx - r)},${f(cy)}" fill="${fill}" stroke="${g.color}" stroke-width="1.5"/>`;
  }
  const down = g.kind === "down";
  const pts = down
    ? [
        [cx - r, cy - r * 0.8],
        [cx + r, cy - r * 0.8],
        [cx, cy + r * 0.9],
      ]
    : [
        [cx - r, cy + r * 0.8],
        [cx + r, cy + r * 0.8],
        [cx, cy - r * 0.9],
      ];
  return `<polygon points="${pts.map(([a, b]) => `${f(a)},${f(b)}`).join(" ")}" fill="${g.color}"/>`;
}

/** Splits `text` at " · " into lines no wider than `maxWidth`. @param {string} text @param {number} maxWidth @param {number} size */
function wrap(text, maxWidth, size) {
  const parts = text.split(" · ");
  const lines = [];
  let current = "";
  for (const part of parts) {
    const next = current === "" ? part : `${current} · ${part}`;
    if (current !== "" && textWidth(next, size) > maxWidth) {
      lines.push(current);
      current = part;
    } else current = next;
  }
  if (current !== "") lines.push(current);
  return lines;
}

/** @param {Box} a @param {Box} b */
export function intersects(a, b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** @param {Box} b @param {number} p */
function pad(b, p) {
  return { x0: b.x0 - p, y0: b.y0, x1: b.x1 + p, y1: b.y1 };
}

/** Next "nice" axis maximum at or above v. @param {number} v */
function niceCeil(v) {
  const p = 10 ** Math.floor(Math.log10(Math.max(1, v)));
  for (const m of [1, 1.2, 1.6, 2, 2.4, 3, 4, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** @param {number} v */
function f(v) {
  return (Math.round(v * 10) / 10).toString();
}

/** @param {string} s */
function esc(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
