// The designer's drawing on screen: each item of a drawing (model.js) as a group that can
// be focused (Tab), chosen with a click and dragged, the selected one outlined, the focal
// point as a cross; zoom and pan as on the buyer's map (core/viewport.js). It only draws
// and reports: what a click, a drag or a key means is the designer's.

import { esc } from "../core/format.js";
import { Viewport } from "../core/viewport.js";
import { outlineOf, rowsOf, sectionOf } from "./model.js";
import { boxOf } from "./geometry.js";

const num = (v) => Math.round(v * 1000) / 1000;

// The usual distance between neighbouring seats of a row: seats are drawn 0.8 of it across.
function unitOf(items) {
  const gaps = [];
  for (const item of items) {
    for (const row of rowsOf(item)) {
      for (let i = 1; i < row.seats.length; i++) {
        gaps.push(Math.hypot(row.seats[i].x - row.seats[i - 1].x, row.seats[i].y - row.seats[i - 1].y));
      }
    }
  }
  gaps.sort((a, b) => a - b);
  return (gaps.length && gaps[gaps.length >> 1]) || 1;
}

// The grid's square, in venue units: the snap step (1) where seats are a unit or so apart,
// else the roundest step not wider than the seats' spacing (plans imported in pixels).
export function gridStep(unit) {
  return [100, 50, 20, 10, 5, 2, 1].find((step) => step <= unit) || 1;
}

// The grid under a drawing whose items lie in `box`, reaching well past it, a heavier
// line every fifth square.
function gridSvg(box, step) {
  const major = step * 5;
  const margin = 40 * major;
  const x = Math.floor((box.x - margin) / major) * major, y = Math.floor((box.y - margin) / major) * major;
  const w = Math.ceil((box.w + 2 * margin) / major) * major, h = Math.ceil((box.h + 2 * margin) / major) * major;
  return `<defs><pattern id="grid-minor" width="${step}" height="${step}" patternUnits="userSpaceOnUse"><path d="M${step} 0H0V${step}"/></pattern>
    <pattern id="grid-major" width="${major}" height="${major}" patternUnits="userSpaceOnUse"><path d="M${major} 0H0V${major}"/></pattern></defs>
    <g class="grid" aria-hidden="true"><rect class="grid-minor" x="${x}" y="${y}" width="${w}" height="${h}"/><rect class="grid-major" x="${x}" y="${y}" width="${w}" height="${h}"/></g>`;
}

// What an item is called, for its accessible name and the selection panel.
export function describe(item) {
  if (item.kind === "rows" || item.kind === "seats") {
    const rows = rowsOf(item);
    const seats = rows.reduce((n, r) => n + r.seats.length, 0);
    const labels = rows.length > 1 ? `rows ${rows[0].label} to ${rows[rows.length - 1].label}` : `row ${rows[0] ? rows[0].label : "?"}`;
    return `${sectionOf(item).name}, ${labels}, ${seats} seats`;
  }
  if (item.kind === "shape") return `${item.shape === "stage" ? "Stage" : "Area"}${item.text ? ` ${item.text}` : ""}`;
  return `Text ${item.text}`;
}

// One item's drawing and the box around it.
function itemSvg(item, unit) {
  const r = 0.4 * unit;
  if (item.kind === "rows" || item.kind === "seats") {
    const points = [];
    const parts = [];
    const labels = [];
    for (const row of rowsOf(item)) {
      for (const s of row.seats) {
        points.push(s);
        const mark = s.accessible ? " accessible" : s.companion ? " companion" : "";
        parts.push(`<circle class="seat${mark}" cx="${num(s.x)}" cy="${num(s.y)}" r="${num(r)}"/>`);
      }
      const first = row.seats[0];
      if (first) {
        const next = row.seats[1] || { x: first.x + unit, y: first.y };
        const dx = first.x - next.x, dy = first.y - next.y, len = Math.hypot(dx, dy) || 1;
        labels.push(`<text class="row-label" x="${num(first.x + (dx / len) * unit)}" y="${num(first.y + (dy / len) * unit)}" font-size="${num(0.55 * unit)}">${esc(row.label)}</text>`);
      }
    }
    const b = boxOf(points);
    return { svg: parts.join(""), labels: labels.join(""), box: { x: b.x - r, y: b.y - r, w: b.w + 2 * r, h: b.h + 2 * r } };
  }
  if (item.kind === "shape") {
    const outline = outlineOf(item);
    const path = outline.map((p) => `${num(p.x)},${num(p.y)}`).join(" ");
    const size = Math.max(0.3 * unit, Math.min(item.h * 0.45, (item.w / Math.max(1, item.text.length)) * 1.4));
    const text = item.text ? `<text x="${num(item.x)}" y="${num(item.y)}" font-size="${num(size)}">${esc(item.text)}</text>` : "";
    return { svg: `<polygon class="outline" points="${path}"/>${text}`, box: boxOf(outline) };
  }
  const w = Math.max(1, item.text.length) * item.size * 0.6;
  return {
    svg: `<text x="${num(item.x)}" y="${num(item.y)}" font-size="${num(item.size)}" transform="rotate(${item.rotation} ${num(item.x)} ${num(item.y)})">${esc(item.text)}</text>`,
    box: { x: item.x - w / 2, y: item.y - item.size / 2, w, h: item.size },
  };
}

export class Canvas {
  // `svg` to draw in; `on` gets select(id), drag(id, dx, dy, done) in venue units, and
  // key(id, event) for a key pressed on an item. `readOnly` draws without any of them.
  constructor(svg, on, { readOnly = false } = {}) {
    this.svg = svg;
    this.on = on;
    this.readOnly = readOnly;
    this.viewport = new Viewport(svg);
    this.viewport.wire();
    this.fitted = false;
    this.boxes = new Map();
    if (readOnly) return;
    let drag = null;
    svg.addEventListener("pointerdown", (e) => {
      const g = e.target.closest("[data-item]");
      if (!g || e.button !== 0) return;
      e.stopPropagation();
      e.preventDefault();
      g.focus({ preventScroll: true });
      this.on.select(g.dataset.item);
      drag = { id: g.dataset.item, x: e.clientX, y: e.clientY, pointer: e.pointerId, moved: false };
      svg.setPointerCapture(e.pointerId);
    }, true);
    svg.addEventListener("pointermove", (e) => {
      if (!drag || e.pointerId !== drag.pointer) return;
      const scale = this.viewport.unitsPerPixel();
      const dx = (e.clientX - drag.x) * scale, dy = (e.clientY - drag.y) * scale;
      if (!drag.moved && Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < 3) return;
      drag.moved = true;
      e.stopPropagation();
      this.on.drag(drag.id, dx, dy, false);
    }, true);
    const end = (e) => {
      if (!drag || e.pointerId !== drag.pointer) return;
      e.stopPropagation();
      const scale = this.viewport.unitsPerPixel();
      if (drag.moved) this.on.drag(drag.id, (e.clientX - drag.x) * scale, (e.clientY - drag.y) * scale, true);
      drag = null;
    };
    svg.addEventListener("pointerup", end, true);
    svg.addEventListener("pointercancel", end, true);
    svg.addEventListener("keydown", (e) => {
      const g = e.target.closest("[data-item]");
      if (g) this.on.key(g.dataset.item, e);
    });
    svg.addEventListener("focusin", (e) => {
      const g = e.target.closest("[data-item]");
      if (g) this.on.select(g.dataset.item);
    });
  }

  // Draws `drawing` with `selected` (an item id, or null) outlined; frames the whole of it
  // the first time, or when `refit`.
  draw(drawing, selected, { refit = false } = {}) {
    const unit = unitOf(drawing.items);
    const parts = [];
    const all = [];
    this.boxes = new Map();
    const focused = document.activeElement && this.svg.contains(document.activeElement) ? document.activeElement.dataset.item : null;
    const order = [...drawing.items.filter((i) => i.kind === "shape"), ...drawing.items.filter((i) => i.kind !== "shape")];
    const labels = [];
    for (const item of order) {
      const { svg, box, labels: rowLabels = "" } = itemSvg(item, unit);
      labels.push(rowLabels);
      this.boxes.set(item.id, box);
      all.push(box);
      const chosen = item.id === selected;
      const frame = chosen ? `<rect class="selection" x="${num(box.x - 0.3)}" y="${num(box.y - 0.3)}" width="${num(box.w + 0.6)}" height="${num(box.h + 0.6)}"/>` : "";
      const attrs = this.readOnly ? `aria-hidden="true"` : `tabindex="0" role="button" aria-pressed="${chosen}" aria-label="${esc(describe(item))}"`;
      parts.push(`<g class="item item-${item.kind}${item.shape ? ` shape-${item.shape}` : ""}${chosen ? " selected" : ""}" data-item="${esc(item.id)}" ${attrs}>${svg}${frame}</g>`);
    }
    if (drawing.focal) {
      const f = drawing.focal, s = unit * 0.6;
      parts.push(`<g class="focal" data-focal aria-hidden="true"><path d="M${num(f.x - s)} ${num(f.y)}H${num(f.x + s)}M${num(f.x)} ${num(f.y - s)}V${num(f.y + s)}"/><circle cx="${num(f.x)}" cy="${num(f.y)}" r="${num(s * 0.5)}"/></g>`);
      all.push({ x: f.x - s, y: f.y - s, w: 2 * s, h: 2 * s });
    }
    const extent = all.length ? all.reduce((a, c) => {
      const x = Math.min(a.x, c.x), y = Math.min(a.y, c.y);
      return { x, y, w: Math.max(a.x + a.w, c.x + c.w) - x, h: Math.max(a.y + a.h, c.y + c.h) - y };
    }) : null;
    this.step = gridStep(unit);
    const grid = this.readOnly ? "" : gridSvg(extent || { x: 0, y: 0, w: 0, h: 0 }, this.step);
    // Row labels apart from their items, so an item's accessible name is all it says.
    this.svg.innerHTML = grid + parts.join("") + `<g class="labels" aria-hidden="true">${labels.join("")}</g>`;
    if (focused) {
      const again = this.svg.querySelector(`[data-item="${CSS.escape(focused)}"]`);
      if (again) again.focus({ preventScroll: true });
    }
    if (!this.fitted || refit) {
      const b = extent || { x: -10, y: -10, w: 20, h: 20 };
      const pad = 3 * unit;
      this.viewport.reset({ x: b.x - pad, y: b.y - pad, w: Math.max(b.w + 2 * pad, 10 * unit), h: Math.max(b.h + 2 * pad, 6 * unit) });
      this.fitted = true;
    }
  }

  // The middle of what is on screen now, in venue units.
  centre() {
    const v = this.viewport.view;
    return { x: v.x + v.w / 2, y: v.y + v.h / 2 };
  }
}
