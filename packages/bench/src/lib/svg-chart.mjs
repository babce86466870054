// =============================================================================
// svg-chart.mjs: a hand-written, dependency-free SVG line chart.
//
// Draws one or more panels side by side; each panel plots y against x on a
// LOG-scale x axis (powers of ten get gridlines and labels) and a linear y axis
// starting at 0. Each series is a polyline with round markers and optional
// min-max whiskers. One legend for all panels sits above them.
//
// Input shape:
//   renderChart({ title, xLabel, yLabel, panels: [{ title, series: [{ name, color,
//     points: [{ x, y, lo?, hi? }] }] }] })  ->  string (an <svg> document)
// =============================================================================

const PANEL_W = 420;
const PANEL_H = 300;
const MARGIN = { top: 36, right: 16, bottom: 46, left: 58 };
const LEGEND_ROW_H = 18;
const FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\"";

/** A fixed, colour-blind-friendly palette (Okabe-Ito), in series order. */
export const PALETTE = ["#000000", "#E69F00", "#0072B2", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442"];

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const num = (x) => (Math.round(x * 10) / 10).toString();

/** A "nice" upper bound and tick step for a linear axis from 0 to max. */
function niceAxis(max) {
  if (!(max > 0)) return { top: 1, step: 0.2 };
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  return { top: Math.ceil(max / step) * step, step };
}

function renderPanel(panel, ox, oy, xLabel, yLabel) {
  const w = PANEL_W - MARGIN.left - MARGIN.right;
  const h = PANEL_H - MARGIN.top - MARGIN.bottom;
  const x0 = ox + MARGIN.left;
  const y0 = oy + MARGIN.top;
  const pts = panel.series.flatMap((s) => s.points);
  const xs = pts.map((p) => p.x).filter((x) => x > 0);
  const lx0 = Math.floor(Math.log10(Math.min(...xs)));
  const lx1 = Math.max(lx0 + 1, Math.ceil(Math.log10(Math.max(...xs))));
  const yMax = Math.max(...pts.map((p) => Math.max(p.y, p.hi ?? p.y)).filter(Number.isFinite));
  const { top, step } = niceAxis(yMax);
  const sx = (x) => x0 + ((Math.log10(x) - lx0) / (lx1 - lx0)) * w;
  const sy = (y) => y0 + h - (y / top) * h;
  const out = [];

  out.push(
    `<text x="${num(x0 + w / 2)}" y="${num(oy + 20)}" text-anchor="middle" font-size="14" font-weight="600" ${FONT}>${esc(panel.title)}</text>`
  );
  // Grid and axis labels.
  for (let e = lx0; e <= lx1; e++) {
    const x = sx(10 ** e);
    out.push(`<line x1="${num(x)}" y1="${num(y0)}" x2="${num(x)}" y2="${num(y0 + h)}" stroke="#ddd"/>`);
    out.push(
      `<text x="${num(x)}" y="${num(y0 + h + 16)}" text-anchor="middle" font-size="11" ${FONT}>${(10 ** e).toLocaleString("en-US")}</text>`
    );
  }
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = sy(v);
    out.push(`<line x1="${num(x0)}" y1="${num(y)}" x2="${num(x0 + w)}" y2="${num(y)}" stroke="#eee"/>`);
    out.push(`<text x="${num(x0 - 6)}" y="${num(y + 4)}" text-anchor="end" font-size="11" ${FONT}>${num(v)}</text>`);
  }
  out.push(`<rect x="${num(x0)}" y="${num(y0)}" width="${num(w)}" height="${num(h)}" fill="none" stroke="#888"/>`);
  out.push(
    `<text x="${num(x0 + w / 2)}" y="${num(y0 + h + 34)}" text-anchor="middle" font-size="12" ${FONT}>${esc(xLabel)}</text>`
  );
  out.push(
    `<text transform="translate(${num(ox + 16)},${num(y0 + h / 2)}) rotate(-90)" text-anchor="middle" font-size="12" ${FONT}>${esc(yLabel)}</text>`
  );
  // Series: whiskers, line, markers.
  for (const s of panel.series) {
    const ps = s.points.filter((p) => p.x > 0 && Number.isFinite(p.y)).sort((a, b) => a.x - b.x);
    if (ps.length === 0) continue;
    for (const p of ps) {
      if (Number.isFinite(p.lo) && Number.isFinite(p.hi)) {
        out.push(
          `<line x1="${num(sx(p.x))}" y1="${num(sy(p.lo))}" x2="${num(sx(p.x))}" y2="${num(sy(p.hi))}" stroke="${s.color}" stroke-opacity="0.45" stroke-width="3"/>`
        );
      }
    }
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${ps.map((p) => `${num(sx(p.x))},${num(sy(p.y))}`).join(" ")}"><title>${esc(s.name)}</title></polyline>`
    );
    for (const p of ps) {
      out.push(
        `<circle cx="${num(sx(p.x))}" cy="${num(sy(p.y))}" r="3" fill="${s.color}"><title>${esc(`${s.name}: x=${p.x}, y=${num(p.y)}`)}</title></circle>`
      );
    }
  }
  return out.join("\n");
}

/**
 * @param {{ title: string, subtitle?: string, xLabel: string, yLabel: string,
 *   panels: { title: string, series: { name: string, color: string, points: { x: number, y: number, lo?: number, hi?: number }[] }[] }[],
 *   columns?: number }} chart
 * @returns {string}
 */
export function renderChart(chart) {
  const columns = chart.columns ?? Math.min(2, chart.panels.length);
  const rows = Math.ceil(chart.panels.length / columns);
  const names = [...new Map(chart.panels.flatMap((p) => p.series).map((s) => [s.name, s.color])).entries()];
  const perRow = Math.max(1, Math.floor((columns * PANEL_W - 40) / 190));
  const legendRows = Math.ceil(names.length / perRow);
  const headH = 48 + legendRows * LEGEND_ROW_H + 8;
  const width = columns * PANEL_W;
  const height = headH + rows * PANEL_H;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-labelledby="chart-title">`
  );
  out.push(`<title id="chart-title">${esc(chart.title)}</title>`);
  out.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  out.push(
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="700" ${FONT}>${esc(chart.title)}</text>`
  );
  if (chart.subtitle)
    out.push(
      `<text x="${width / 2}" y="40" text-anchor="middle" font-size="11" fill="#555" ${FONT}>${esc(chart.subtitle)}</text>`
    );
  // Legend.
  names.forEach(([name, color], i) => {
    const lx = 30 + (i % perRow) * 190;
    const ly = 56 + Math.floor(i / perRow) * LEGEND_ROW_H;
    out.push(`<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${color}" stroke-width="2"/>`);
    out.push(`<circle cx="${lx + 11}" cy="${ly - 4}" r="3" fill="${color}"/>`);
    out.push(`<text x="${lx + 28}" y="${ly}" font-size="12" ${FONT}>${esc(name)}</text>`);
  });
  chart.panels.forEach((panel, i) => {
    out.push(
      renderPanel(panel, (i % columns) * PANEL_W, headH + Math.floor(i / columns) * PANEL_H, chart.xLabel, chart.yLabel)
    );
  });
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
