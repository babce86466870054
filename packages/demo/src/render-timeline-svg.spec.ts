/**
 * The demo's chart lays its labels out so that none overlaps another text or a marker glyph and none crosses a line,
 * on a recorded run and on an adversarial timeline (markers on top of each other, a phase too short for its title,
 * labels at the right edge), and, on the recorded run, each label sits next to the marker or ◇ run it labels: beside it
 * in its row (at most NEAR_GAP px away) or directly above/below it in its lane. The text-width estimate the layout relies on is checked against real rendering
 * (resvg, DejaVu Sans), and the chart is rendered to PNG (`out/pool-timeline.fixture.png`, to look at).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Resvg } from "@resvg/resvg-js";
import { describe, expect, it } from "vitest";
import {
  glyphBox,
  H,
  intersects,
  layoutTimeline,
  NEAR_GAP,
  renderTimelineSvg,
  textBox,
  W,
} from "./render-timeline-svg.mjs";

type Box = { x0: number; y0: number; x1: number; y1: number };
type Line = { x1: number; y1: number; x2: number; y2: number };

const recorded = JSON.parse(readFileSync(join(__dirname, "..", "test", "fixtures", "recorded-run.json"), "utf8"));
const title = "Sockeye vs upstream: one S3Client's socket pool, second by second";
const subtitle =
  "http://127.0.0.1:40000 · maxSockets 8 · 80 ms per request · capacity ≈ 83 req/s · Sockeye samples every 500 ms (K = 5) · upstream: one 3000 ms timer per request";

/** A timeline built to collide: markers at the same instant, dense suppressed runs, labels at the right edge. */
function adversarial() {
  const samples = [];
  for (let t = 0; t <= 40; t += 0.25) {
    samples.push({
      t,
      queued: Math.round(200 * Math.abs(Math.sin(t / 3))),
      active: 8,
      idle: t % 5 < 1 ? 3 : 0,
      unconsumed: t > 25 ? 7 : 0,
      state: "ok",
    });
  }
  const markers = [
    { t: 0.5, kind: "note", label: "batch drained" },
    { t: 0.9, kind: "note", label: "load stops" },
    { t: 5, kind: "sockeye-saturated", label: "saturated: pool_capacity → maxSockets 14" },
    { t: 5, kind: "upstream-warn", label: "upstream warns (queued 111)" },
    { t: 5.3, kind: "sockeye-recovered", label: "recovered" },
    { t: 5.6, kind: "sockeye-saturated", label: "saturated: unconsumed_bodies (7 unread)" },
    { t: 5.9, kind: "upstream-warn", label: "upstream warns (queued 222)" },
    { t: 6.2, kind: "sockeye-recovered", label: "recovered" },
    { t: 39.5, kind: "sockeye-saturated", label: "saturated: unconsumed_bodies (7 unread)" },
    { t: 39.8, kind: "sockeye-recovered", label: "recovered" },
    { t: 39.9, kind: "upstream-warn", label: "upstream warns (queued 117)" },
    { t: 39.95, kind: "note", label: "load stops" },
  ];
  for (let t = 6; t < 39; t += 0.05) markers.push({ t, kind: "upstream-suppressed", label: "" });
  const phases = [
    { index: 1, name: "healthy batch", start: 0, end: 1 },
    { index: 2, name: "overload", start: 1, end: 20 },
    { index: 3, name: "unread bodies", start: 20, end: 30 },
    { index: 4, name: "recovery", start: 30, end: 40 },
  ];
  return { samples, markers, phases, maxSockets: 8, title, subtitle };
}

const inputs = {
  "a recorded run": {
    samples: recorded.samples,
    markers: recorded.markers,
    phases: recorded.phases,
    maxSockets: recorded.maxSockets,
    title,
    subtitle,
  },
  "an adversarial timeline": adversarial(),
};

/** Whether segment `l` passes through box `b` (Liang–Barsky clipping). */
function crosses(l: Line, b: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const dx = l.x2 - l.x1;
  const dy = l.y2 - l.y1;
  for (const [p, q] of [
    [-dx, l.x1 - b.x0],
    [dx, b.x1 - l.x1],
    [-dy, l.y1 - b.y0],
    [dy, b.y1 - l.y1],
  ]) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const r = q / p;
      if (p < 0) t0 = Math.max(t0, r);
      else t1 = Math.min(t1, r);
      if (t0 > t1) return false;
    }
  }
  return true;
}

describe.each(Object.entries(inputs))("the chart of %s", (_name, input) => {
  const layout = layoutTimeline(input as never);
  const texts = layout.texts.map((t: any) => ({ t, box: textBox(t) as Box }));

  it("places every label", () => {
    expect(layout.dropped).toEqual([]);
    for (const m of input.markers) {
      if (m.kind !== "upstream-suppressed") expect(layout.texts.map((t: any) => t.text)).toContain(m.label);
    }
    expect(layout.texts.some((t: any) => /^silenced by 15 s lockout \(\d+\)$/.test(t.text))).toBe(true);
  });

  it("keeps every text on the canvas", () => {
    for (const { t, box } of texts) {
      expect(box.x0, t.text).toBeGreaterThanOrEqual(0);
      expect(box.x1, t.text).toBeLessThanOrEqual(W);
      expect(box.y0, t.text).toBeGreaterThanOrEqual(0);
      expect(box.y1, t.text).toBeLessThanOrEqual(H);
    }
  });

  it("has no two intersecting texts, and no text over a marker glyph", () => {
    const hits: string[] = [];
    for (let i = 0; i < texts.length; i++) {
      for (let j = i + 1; j < texts.length; j++) {
        if (intersects(texts[i].box, texts[j].box)) hits.push(`${texts[i].t.text} × ${texts[j].t.text}`);
      }
      for (const g of layout.glyphs) {
        if (intersects(texts[i].box, glyphBox(g))) hits.push(`${texts[i].t.text} × glyph ${g.kind} at ${g.cx}`);
      }
    }
    expect(hits).toEqual([]);
  });

  it("has no text crossed by a line (grids, series, guides, phase boundaries, separators)", () => {
    const hits: string[] = [];
    for (const { t, box } of texts) {
      for (const l of layout.lines) if (crosses(l, box)) hits.push(`${t.text} × line ${JSON.stringify(l)}`);
    }
    expect(hits).toEqual([]);
    expect(layout.lines.length).toBeGreaterThan(100); // the check saw the series segments too
  });

  it("estimates no text narrower or lower than resvg renders it in DejaVu Sans", () => {
    const misses: string[] = [];
    for (const { t, box } of texts) {
      const attrs = `font-size="${t.size}"${t.bold ? ' font-weight="bold"' : ""}${t.italic ? ' font-style="italic"' : ""}${
        t.anchor === "start" ? "" : ` text-anchor="${t.anchor}"`
      }${t.rotated ? ` transform="rotate(-90 ${t.x} ${t.y})"` : ""}`;
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><text x="${t.x}" y="${t.y}" font-family="DejaVu Sans" ${attrs}>${t.text.replace(/&/g, "&amp;").replace(/</g, "&lt;")}</text></svg>`;
      const bbox = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } }).getBBox();
      if (bbox === undefined) continue; // whitespace only
      const rendered = { x0: bbox.x, y0: bbox.y, x1: bbox.x + bbox.width, y1: bbox.y + bbox.height };
      if (
        rendered.x0 < box.x0 - 0.5 ||
        rendered.x1 > box.x1 + 0.5 ||
        rendered.y0 < box.y0 - 0.5 ||
        rendered.y1 > box.y1 + 0.5
      ) {
        misses.push(`${t.text}: rendered ${JSON.stringify(rendered)} outside ${JSON.stringify(box)}`);
      }
    }
    expect(misses).toEqual([]);
  });
});

/**
 * How far a placed label is from what it labels, as a sentence when too far: in the glyph's row, the gap between the
 * label and the marker (or run) must be at most NEAR_GAP px; in another row of the lane, the label must cover the
 * marker (or overlap the run), i.e. sit directly above or below it.
 */
function farLabel(l: { text: any; from: number; to: number; glyphRow: number }): string | undefined {
  const box = textBox(l.text) as Box;
  const row = l.text.y - 4;
  const where = `"${l.text.text}" [${box.x0.toFixed(0)}–${box.x1.toFixed(0)}] in row ${row}, its marker/run at ${l.from.toFixed(0)}–${l.to.toFixed(0)} in row ${l.glyphRow}`;
  if (Math.abs(row - l.glyphRow) > 32) return `${where}: another lane`;
  if (row === l.glyphRow) {
    const gap = Math.max(box.x0 - l.to, l.from - box.x1);
    return gap <= NEAR_GAP ? undefined : `${where}: ${gap.toFixed(0)} px away`;
  }
  return box.x0 <= l.to + 4.5 && box.x1 >= l.from - 4.5 ? undefined : `${where}: not above/below it`;
}

describe("labels next to what they label, on the recorded run", () => {
  const layout = layoutTimeline(inputs["a recorded run"] as never);

  it("labels every marker and ◇ run, each within reach of it", () => {
    const labelled = layout.labels.map((l: any) => l.text.text);
    for (const m of recorded.markers) if (m.kind !== "upstream-suppressed") expect(labelled).toContain(m.label);
    expect(labelled.filter((t: string) => t.startsWith("silenced by 15 s lockout")).length).toBeGreaterThanOrEqual(2);
    expect(layout.labels.map(farLabel).filter((x: string | undefined) => x !== undefined)).toEqual([]);
  });

  it("the check catches a label moved 2 s right of its marker into the other row (as before the fix)", () => {
    const label = layout.labels.find((l: any) => l.text.text.startsWith("saturated: unconsumed_bodies"))!;
    const pxPerSecond = (W - 78 - 28) / recorded.samples.at(-1).t;
    expect(farLabel(label)).toBeUndefined();
    expect(farLabel({ ...label, text: { ...label.text, x: label.from + 2 * pxPerSecond, y: 114 + 4 } })).toMatch(
      /not above\/below it/
    );
    expect(
      farLabel({ ...label, text: { ...label.text, x: label.to + 2 * pxPerSecond, y: label.glyphRow + 4 } })
    ).toMatch(/px away/);
  });
});

it("renders to a PNG of the canvas size (written to out/pool-timeline.fixture.png to look at)", () => {
  const svg = renderTimelineSvg(inputs["a recorded run"] as never);
  const png = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } }).render();
  expect([png.width, png.height]).toEqual([W, H]);
  const bytes = png.asPng();
  expect(bytes.subarray(1, 4).toString("latin1")).toBe("PNG");
  const out = join(__dirname, "..", "out");
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "pool-timeline.fixture.png"), bytes);
});
