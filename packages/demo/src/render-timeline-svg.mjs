/**
 * Hand-written SVG of the recorded story (no dependencies): two stacked panels sharing one time axis.
 *
 * - Event lanes on top: Sockeye (▼ saturation, ▲ recovery) and upstream (◆ warning logged, ◇ criteria met but
 *   silenced by its 15 s lockout). Warnings and recoveries also draw a vertical guide line through both panels.
 * - Panel "queue": requests waiting for a socket (filled area).
 * - Panel "sockets": active and idle sockets, unread bodies Sockeye sees, and the maxSockets limit.
 * - Phases are shaded bands with their title.
 *
 * Output is deterministic for a given timeline (fixed decimals, no timestamps), so two runs can be diffed.
 */

const W = 1200;
const H = 700;
const LEFT = 78;
const RIGHT = 28;
const PLOT_W = W - LEFT - RIGHT;
const LANE_S = { top: 78, rows: [94, 110] };
const LANE_U = { top: 122, rows: [138, 154] };
const QA = { top: 176, bottom: 416 };
const SB = { top: 446, bottom: 596 };
const COLORS = {
  queue: "#3b6fb6",
  active: "#1f2937",
  idle: "#12a4b6",
  unread: "#8e44ad",
  limit: "#9aa3ad",
  sockeye: "#d62728",
  recovered: "#2a9d3c",
  upstream: "#f08c00",
  grid: "#e3e7ec",
  text: "#1f2937",
  muted: "#5f6b78",
  bands: ["#f4f7fb", "#fbf8f3"],
};

/**
 * @param {object} input
 * @param {import("./timeline.mjs").Sample[]} input.samples one origin's samples
 * @param {import("./timeline.mjs").Marker[]} input.markers
 * @param {import("./timeline.mjs").Phase[]} input.phases
 * @param {number} input.maxSockets
 * @param {string} input.title
 * @param {string} input.subtitle
 * @returns {string} the SVG document
 */
export function renderTimelineSvg({ samples, markers, phases, maxSockets, title, subtitle }) {
  const tEnd = Math.max(1, samples.at(-1)?.t ?? 1, ...phases.map((p) => (Number.isNaN(p.end) ? p.start : p.end)));
  const x = (/** @type {number} */ t) => LEFT + (t / tEnd) * PLOT_W;
  const qMax = niceCeil(1.12 * Math.max(2 * maxSockets, ...samples.map((s) => s.queued))); // headroom for titles
  const sMax = maxSockets + 2 - (maxSockets % 2);
  const yQ = (/** @type {number} */ v) => QA.bottom - (v / qMax) * (QA.bottom - QA.top);
  const yS = (/** @type {number} */ v) => SB.bottom - (v / sMax) * (SB.bottom - SB.top);

  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12" fill="${COLORS.text}">`
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${LEFT}" y="30" font-size="19" font-weight="bold">${esc(title)}</text>`);
  out.push(`<text x="${LEFT}" y="52" font-size="12.5" fill="${COLORS.muted}">${esc(subtitle)}</text>`);

  // Phase bands and titles.
  phases.forEach((p, i) => {
    const end = Number.isNaN(p.end) ? tEnd : p.end;
    out.push(
      `<rect x="${f(x(p.start))}" y="${LANE_S.top - 8}" width="${f(x(end) - x(p.start))}" height="${SB.bottom - LANE_S.top + 8}" fill="${COLORS.bands[i % 2]}"/>`
    );
    out.push(
      `<line x1="${f(x(p.start))}" x2="${f(x(p.start))}" y1="${LANE_S.top - 8}" y2="${SB.bottom}" stroke="#c9d1da" stroke-width="1"/>`
    );
    out.push(
      `<text x="${f(x(p.start) + 6)}" y="${QA.top + 15}" font-size="12" font-weight="bold" fill="${COLORS.muted}">${esc(`${p.index} · ${p.name}`)}</text>`
    );
  });

  // Phases in which Sockeye stayed silent say so in its lane.
  for (const p of phases) {
    const end = Number.isNaN(p.end) ? tEnd : p.end;
    const any = markers.some((m) => m.kind.startsWith("sockeye-") && m.t >= p.start && m.t < end);
    if (!any) {
      out.push(
        `<text x="${f(x(p.start) + 8)}" y="${LANE_S.rows[0] + 4}" font-size="11.5" font-style="italic" fill="${COLORS.muted}">no warning</text>`
      );
    }
  }

  // Lane captions.
  out.push(
    `<text x="${LEFT - 8}" y="${LANE_S.rows[0] + 8}" text-anchor="end" font-weight="bold" fill="${COLORS.sockeye}">Sockeye</text>`
  );
  out.push(
    `<text x="${LEFT - 8}" y="${LANE_U.rows[0] + 8}" text-anchor="end" font-weight="bold" fill="${COLORS.upstream}">upstream</text>`
  );
  out.push(
    `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${LANE_U.top - 4}" y2="${LANE_U.top - 4}" stroke="${COLORS.grid}"/>`
  );
  out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${QA.top - 6}" y2="${QA.top - 6}" stroke="${COLORS.grid}"/>`);

  // Panel frames, grids and axes.
  panel(out, QA, qMax / 4, qMax, yQ, "queued requests");
  panel(out, SB, 2, sMax, yS, "sockets");
  const step = tEnd > 90 ? 10 : 5;
  for (let t = 0; t <= tEnd + 1e-9; t += step) {
    for (const p of [QA, SB]) {
      out.push(`<line x1="${f(x(t))}" x2="${f(x(t))}" y1="${p.top}" y2="${p.bottom}" stroke="${COLORS.grid}"/>`);
    }
    out.push(`<text x="${f(x(t))}" y="${SB.bottom + 17}" text-anchor="middle" fill="${COLORS.muted}">${t} s</text>`);
  }

  // maxSockets limit.
  out.push(
    `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${f(yS(maxSockets))}" y2="${f(yS(maxSockets))}" stroke="${COLORS.limit}" stroke-dasharray="6 4" stroke-width="1.2"/>`
  );
  out.push(
    `<text x="${LEFT + PLOT_W - 4}" y="${f(yS(maxSockets) - 4)}" text-anchor="end" font-size="11" fill="${COLORS.muted}">maxSockets = ${maxSockets}</text>`
  );

  // Series.
  if (samples.length > 0) {
    const area = [`M${f(x(samples[0].t))},${f(yQ(0))}`];
    for (const s of samples) area.push(`L${f(x(s.t))},${f(yQ(s.queued))}`);
    area.push(`L${f(x(samples.at(-1)?.t ?? 0))},${f(yQ(0))}Z`);
    out.push(`<path d="${area.join("")}" fill="${COLORS.queue}" fill-opacity="0.28" stroke="none"/>`);
    out.push(
      polyline(
        samples.map((s) => [x(s.t), yQ(s.queued)]),
        COLORS.queue,
        1.8
      )
    );
    out.push(
      polyline(
        samples.map((s) => [x(s.t), yS(s.unconsumed)]),
        COLORS.unread,
        2,
        "5 3"
      )
    );
    out.push(
      polyline(
        samples.map((s) => [x(s.t), yS(s.idle)]),
        COLORS.idle,
        1.8
      )
    );
    out.push(
      polyline(
        samples.map((s) => [x(s.t), yS(s.active)]),
        COLORS.active,
        2.2
      )
    );
  }

  // Markers.
  /** @type {Record<string, number[][][]>} occupied label spans per lane row */
  const rowsUsed = { sockeye: [[], []], upstream: [[], []] };
  let lastSuppressedX = Number.NEGATIVE_INFINITY;
  for (const m of [...markers].sort((a, b) => a.t - b.t)) {
    const mx = x(m.t);
    if (m.kind === "upstream-suppressed") {
      if (mx - lastSuppressedX < 7) continue;
      lastSuppressedX = mx;
      out.push(diamond(mx, LANE_U.rows[1], 4, "none", COLORS.upstream));
      continue;
    }
    if (m.kind === "note") {
      out.push(
        `<line x1="${f(mx)}" x2="${f(mx)}" y1="${QA.top}" y2="${SB.bottom}" stroke="${COLORS.muted}" stroke-width="1" stroke-dasharray="2 3"/>`
      );
      out.push(
        `<text x="${f(mx + 4)}" y="${SB.top + 13}" font-size="11" font-style="italic" fill="${COLORS.muted}">${esc(m.label)}</text>`
      );
      continue;
    }
    const isSockeye = m.kind === "sockeye-saturated" || m.kind === "sockeye-recovered";
    const color =
      m.kind === "sockeye-saturated"
        ? COLORS.sockeye
        : m.kind === "sockeye-recovered"
          ? COLORS.recovered
          : COLORS.upstream;
    const lane = isSockeye ? LANE_S : LANE_U;
    out.push(
      `<line x1="${f(mx)}" x2="${f(mx)}" y1="${lane.rows[0] + 6}" y2="${SB.bottom}" stroke="${color}" stroke-width="1.4"` +
        `${isSockeye ? "" : ' stroke-dasharray="5 3"'} stroke-opacity="0.85"/>`
    );
    const y = lane.rows[0];
    if (m.kind === "sockeye-saturated") out.push(triangle(mx, y, 6, true, color));
    else if (m.kind === "sockeye-recovered") out.push(triangle(mx, y, 6, false, color));
    else out.push(diamond(mx, y, 6, color, color));
    label(out, isSockeye ? rowsUsed.sockeye : rowsUsed.upstream, lane.rows, mx, m.label, color, 0);
  }

  // Legend.
  let ly = H - 62;
  const items = [
    ["area", COLORS.queue, "queued requests"],
    ["line", COLORS.active, "active sockets"],
    ["line", COLORS.idle, "idle sockets"],
    ["dash", COLORS.unread, "unread bodies (Sockeye)"],
    ["tri", COLORS.sockeye, "Sockeye saturation"],
    ["triup", COLORS.recovered, "Sockeye recovery"],
    ["dia", COLORS.upstream, "upstream warning"],
    ["hdia", COLORS.upstream, "upstream criteria met, silenced by its 15 s lockout"],
  ];
  let lx = LEFT;
  items.forEach(([kind, color, text], i) => {
    if (i === 4) {
      lx = LEFT;
      ly += 20;
    }
    if (kind === "area")
      out.push(
        `<rect x="${lx}" y="${ly - 9}" width="18" height="10" fill="${color}" fill-opacity="0.28" stroke="${color}"/>`
      );
    else if (kind === "line")
      out.push(`<line x1="${lx}" x2="${lx + 18}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2.2"/>`);
    else if (kind === "dash")
      out.push(
        `<line x1="${lx}" x2="${lx + 18}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2" stroke-dasharray="5 3"/>`
      );
    else if (kind === "tri") out.push(triangle(lx + 9, ly - 4, 6, true, color));
    else if (kind === "triup") out.push(triangle(lx + 9, ly - 4, 6, false, color));
    else if (kind === "dia") out.push(diamond(lx + 9, ly - 4, 6, color, color));
    else out.push(diamond(lx + 9, ly - 4, 4.5, "none", color));
    out.push(`<text x="${lx + 24}" y="${ly}" fill="${COLORS.text}">${esc(text)}</text>`);
    lx += 24 + text.length * 6.6 + 22;
  });
  out.push(
    `<text x="${LEFT}" y="${H - 14}" font-size="11" fill="${COLORS.muted}">` +
      esc(
        "Samples every 250 ms from handler.getPoolStats(). Upstream = the real @smithy/node-http-handler checkSocketUsage(), called by one setTimeout per request, as upstream does."
      ) +
      "</text>"
  );
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}

/**
 * @param {string[]} out
 * @param {{ top: number, bottom: number }} p
 * @param {number} step tick step
 * @param {number} max
 * @param {(v: number) => number} y
 * @param {string} caption
 */
function panel(out, p, step, max, y, caption) {
  out.push(
    `<rect x="${LEFT}" y="${p.top}" width="${PLOT_W}" height="${p.bottom - p.top}" fill="none" stroke="#b8c1cc"/>`
  );
  for (let v = 0; v <= max + 1e-9; v += step) {
    out.push(`<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="${COLORS.grid}"/>`);
    out.push(`<text x="${LEFT - 6}" y="${f(y(v) + 4)}" text-anchor="end" fill="${COLORS.muted}">${v}</text>`);
  }
  const cy = (p.top + p.bottom) / 2;
  out.push(
    `<text x="18" y="${f(cy)}" transform="rotate(-90 18 ${f(cy)})" text-anchor="middle" fill="${COLORS.muted}">${esc(caption)}</text>`
  );
}

/**
 * Places a marker label in one of a lane's two text rows: right of the marker if it fits on the canvas and overlaps
 * nothing already placed in that row, else left of the marker, else in the other row; as a last resort it overlaps.
 * @param {string[]} out
 * @param {number[][][]} rowsUsed occupied [from, to] x intervals per row
 * @param {number[]} rows baseline y per row
 * @param {number} mx marker x
 * @param {string} text
 * @param {string} color
 * @param {number} preferred row index
 */
function label(out, rowsUsed, rows, mx, text, color, preferred) {
  const width = text.length * 6.9;
  const right = [mx + 9, mx + 9 + width];
  const left = [mx - 9 - width, mx - 9];
  const free = (/** @type {number} */ row, /** @type {number[]} */ span) =>
    span[0] >= 2 && span[1] <= W - 4 && rowsUsed[row].every(([a, b]) => span[1] + 6 <= a || span[0] >= b + 6);
  const other = 1 - preferred;
  const options = [
    [preferred, right],
    [preferred, left],
    [other, right],
    [other, left],
  ];
  const [row, span] = options.find(([r, sp]) => free(/** @type {number} */ (r), /** @type {number[]} */ (sp))) ?? [
    preferred,
    right[1] <= W - 4 ? right : left,
  ];
  const r = /** @type {number} */ (row);
  const sp = /** @type {number[]} */ (span);
  rowsUsed[r].push(sp);
  out.push(`<text x="${f(sp[0])}" y="${rows[r] + 4}" font-size="11.5" fill="${color}">${esc(text)}</text>`);
}

/** @param {number[][]} pts @param {string} color @param {number} width @param {string} [dash] */
function polyline(pts, color, width, dash) {
  return (
    `<polyline points="${pts.map(([a, b]) => `${f(a)},${f(b)}`).join(" ")}" fill="none" stroke="${color}" ` +
    `stroke-width="${width}" stroke-linejoin="round"${dash === undefined ? "" : ` stroke-dasharray="${dash}"`}/>`
  );
}

/** @param {number} cx @param {number} cy @param {number} r @param {boolean} down @param {string} color */
function triangle(cx, cy, r, down, color) {
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
  return `<polygon points="${pts.map(([a, b]) => `${f(a)},${f(b)}`).join(" ")}" fill="${color}"/>`;
}

/** @param {number} cx @param {number} cy @param {number} r @param {string} fill @param {string} stroke */
function diamond(cx, cy, r, fill, stroke) {
  return `<polygon points="${f(cx)},${f(cy - r)} ${f(cx + r)},${f(cy)} ${f(cx)},${f(cy + r)} ${f(cx - r)},${f(cy)}" fill="${fill}" stroke="${stroke}" stroke-width="1.5"/>`;
}

/** Next "nice" axis maximum (1, 2, 2.5, 5 × 10^k) at or above v. @param {number} v */
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
