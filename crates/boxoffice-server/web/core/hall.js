// Drawing a hall on the seat map: the seats' circles and everything around them.
// Coordinates come from the venue in its own units (seats 1 apart, or pretix pixels); the
// map draws in seat units (neighbouring seats of a row 1 apart), so the same code fits
// both. Shapes (stage, areas, labels) go behind the seats, row labels at both ends of every
// row, section titles where they overlap no seat, label or other title, and wheelchair
// spaces, companion seats and restricted views get a mark. The buyer's page, the console
// and the embed all draw with `draw`.

import { esc } from "./format.js";

// The colours of ticket types on a map, in the event's order of types.
export const PALETTE = ["#2f6fb3", "#c2571a", "#2a8a57", "#8a4fb5", "#b0306a", "#6b7a1f", "#1f7f8a", "#8a6a1f"];

export const SEAT_R = 0.4;
const TITLE_SIZE = 0.9;
const ROW_LABEL_SIZE = 0.55;

const num = (v) => Math.round(v * 1000) / 1000;

// The venue's unit: the usual distance between neighbouring seats of a row.
export function unitOf(seats) {
  const gaps = [];
  for (let i = 1; i < seats.length; i++) {
    const a = seats[i - 1], b = seats[i];
    if (a.section !== b.section || a.row !== b.row) continue;
    const d = Math.hypot(a.x - b.x, a.y - b.y);
    if (d > 0) gaps.push(d);
  }
  if (!gaps.length) return 1;
  gaps.sort((a, b) => a - b);
  return gaps[gaps.length >> 1];
}

// Boxes already taken on the map, in a grid of 4-unit cells so a test is cheap.
class Taken {
  constructor() { this.cells = new Map(); }
  *cellsOf(b) {
    for (let gx = Math.floor(b.x / 4); gx <= Math.floor((b.x + b.w) / 4); gx++) {
      for (let gy = Math.floor(b.y / 4); gy <= Math.floor((b.y + b.h) / 4); gy++) yield gx + "," + gy;
    }
  }
  add(b) {
    for (const key of this.cellsOf(b)) {
      if (!this.cells.has(key)) this.cells.set(key, []);
      this.cells.get(key).push(b);
    }
  }
  hits(b) {
    for (const key of this.cellsOf(b)) {
      for (const o of this.cells.get(key) || []) {
        if (b.x < o.x + o.w && o.x < b.x + b.w && b.y < o.y + o.h && o.y < b.y + b.h) return true;
      }
    }
    return false;
  }
}

const textBox = (cx, cy, text, size) => {
  const w = Math.max(1, String(text).length) * size * 0.6;
  return { x: cx - w / 2, y: cy - size / 2, w, h: size };
};

// A shape's outline in seat units, its box, and where its text goes.
function outline(shape, unit) {
  if (shape.rect) {
    const r = { x: shape.rect.x / unit, y: shape.rect.y / unit, w: shape.rect.w / unit, h: shape.rect.h / unit };
    return { svg: `<rect x="${num(r.x)}" y="${num(r.y)}" width="${num(r.w)}" height="${num(r.h)}" rx="0.3"/>`, box: r };
  }
  if (shape.circle) {
    const c = { x: shape.circle.x / unit, y: shape.circle.y / unit, r: shape.circle.r / unit };
    return { svg: `<circle cx="${num(c.x)}" cy="${num(c.y)}" r="${num(c.r)}"/>`, box: { x: c.x - c.r, y: c.y - c.r, w: 2 * c.r, h: 2 * c.r } };
  }
  const points = (shape.polygon || []).map((p) => [p.x / unit, p.y / unit]);
  const xs = points.map((p) => p[0]), ys = points.map((p) => p[1]);
  const box = { x: Math.min(...xs), y: Math.min(...ys), w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) };
  return { svg: `<polygon points="${points.map((p) => num(p[0]) + "," + num(p[1])).join(" ")}"/>`, box };
}

// The shapes, behind the seats; their texts are marked taken for the titles.
function shapes(list, unit, taken) {
  const parts = [];
  const boxes = [];
  for (const shape of list || []) {
    const { svg, box } = outline(shape, unit);
    boxes.push(box);
    const kind = shape.kind;
    let text = "";
    if (shape.text) {
      const fit = box.w / (shape.text.length * 0.6);
      const size = kind === "label" ? Math.min(1.2, Math.max(0.6, fit)) : Math.min(2.4, box.h * 0.45, fit * 0.9);
      const cx = box.x + box.w / 2, cy = box.y + box.h / 2;
      taken.add(textBox(cx, cy, shape.text, size));
      text = `<text x="${num(cx)}" y="${num(cy)}" font-size="${num(Math.max(size, 0.3))}">${esc(shape.text)}</text>`;
    }
    parts.push(`<g class="shape shape-${esc(kind)}" data-shape-kind="${esc(kind)}" aria-hidden="true">${kind === "label" ? "" : svg}${text}</g>`);
  }
  return { svg: parts.join(""), boxes };
}

// Row labels at both ends of each row (rows: arrays of {cx, cy}), a little beyond the
// end seat along the row's own direction, so curved rows are labelled where they end.
function rowLabels(rows, taken) {
  const parts = [];
  for (const row of rows) {
    const label = row.label;
    const ends = row.seats.length > 1
      ? [[row.seats[0], row.seats[1]], [row.seats[row.seats.length - 1], row.seats[row.seats.length - 2]]]
      : [[row.seats[0], { cx: row.seats[0].cx + 1, cy: row.seats[0].cy }], [row.seats[0], { cx: row.seats[0].cx - 1, cy: row.seats[0].cy }]];
    for (const [end, next] of ends) {
      const dx = end.cx - next.cx, dy = end.cy - next.cy;
      const len = Math.hypot(dx, dy) || 1;
      const x = end.cx + (dx / len) * 0.95, y = end.cy + (dy / len) * 0.95;
      taken.add(textBox(x, y, label, ROW_LABEL_SIZE));
      parts.push(`<text class="row-label" x="${num(x)}" y="${num(y)}" aria-hidden="true">${esc(label)}</text>`);
    }
  }
  return parts.join("");
}

// Groups of a section's rows that sit together: a section split across the hall (a box
// on each side) gets a title over each part.
function clusters(rows) {
  const groups = [];
  for (const row of rows) {
    const b = row.box;
    const near = groups.find((g) => g.section === row.section &&
      b.x - 3 < g.box.x + g.box.w && g.box.x - 3 < b.x + b.w && b.y - 3 < g.box.y + g.box.h && g.box.y - 3 < b.y + b.h);
    if (near) {
      const x = Math.min(near.box.x, b.x), y = Math.min(near.box.y, b.y);
      near.box = { x, y, w: Math.max(near.box.x + near.box.w, b.x + b.w) - x, h: Math.max(near.box.y + near.box.h, b.y + b.h) - y };
    } else {
      groups.push({ section: row.section, name: row.sectionName, box: { ...b } });
    }
  }
  return groups;
}

// Section titles, each where it overlaps nothing drawn so far: above its seats, below,
// beside, or further up; the titles' boxes are returned for the map's bounds.
function titles(rows, taken) {
  const parts = [];
  const boxes = [];
  for (const group of clusters(rows)) {
    const b = group.box, s = TITLE_SIZE;
    const cx = b.x + b.w / 2;
    const w = textBox(0, 0, group.name, s).w;
    const candidates = [[cx, b.y - 1.1], [cx, b.y + b.h + 1.1], [b.x - w / 2 - 1, b.y + b.h / 2], [b.x + b.w + w / 2 + 1, b.y + b.h / 2]];
    for (let k = 1; k <= 6; k++) candidates.push([cx, b.y - 1.1 - k * 1.2]);
    const free = candidates.find(([x, y]) => !taken.hits(textBox(x, y, group.name, s))) || candidates[0];
    const box = textBox(free[0], free[1], group.name, s);
    taken.add(box);
    boxes.push(box);
    parts.push(`<text class="section-label" data-section="${esc(group.section)}" x="${num(free[0])}" y="${num(free[1])}" aria-hidden="true">${esc(group.name)}</text>`);
  }
  return { svg: parts.join(""), boxes };
}

// The marks of a seat's attributes, over its circle.
export function marks(seat, cx, cy) {
  const at = `x="${num(cx)}" y="${num(cy)}"`;
  let out = "";
  if (seat.accessible) out += `<use href="#mark-wheelchair" ${at} class="seat-mark" aria-hidden="true"/>`;
  if (seat.companion) out += `<use href="#mark-companion" ${at} class="seat-mark" aria-hidden="true"/>`;
  if (seat.restricted_view) out += `<use href="#mark-restricted" ${at} class="seat-mark" aria-hidden="true"/>`;
  return out;
}

// The marks' drawings, for the map's defs.
export const MARK_DEFS = `<g id="mark-wheelchair" fill="none" stroke="#fff" stroke-width="0.055" stroke-linecap="round" stroke-linejoin="round">` +
  `<circle cx="0.03" cy="-0.25" r="0.065" fill="#fff" stroke="none"/><path d="M0.01 -0.15V0.03H0.15L0.21 0.2"/>` +
  `<path d="M-0.08 -0.04A0.15 0.15 0 1 0 0.12 0.16"/></g>` +
  `<circle id="mark-companion" r="0.11" fill="#fff"/>` +
  `<path id="mark-restricted" d="M-0.2 0.2L0.2 -0.2" stroke="#fff" stroke-width="0.08" stroke-linecap="round"/>`;

// What a seat's attributes say, for its accessible name.
export function spoken(seat) {
  const said = [];
  if (seat.accessible) said.push("wheelchair space");
  if (seat.companion) said.push("companion seat");
  if (seat.restricted_view) said.push("restricted view");
  return said;
}

// The patterns held, sold and the buyer's own seats are filled with (see app.css).
const STATUS_DEFS =
  `<pattern id="pat-held" patternUnits="userSpaceOnUse" width="0.25" height="0.25" patternTransform="rotate(45)"><rect width="0.25" height="0.25" fill="#d9dee3"/><rect width="0.1" height="0.25" fill="#8a949e"/></pattern>` +
  `<pattern id="pat-sold" patternUnits="userSpaceOnUse" width="0.3" height="0.3"><rect width="0.3" height="0.3" fill="#4a525a"/><path d="M0 0L0.3 0.3M0.3 0L0 0.3" stroke="#9aa3ab" stroke-width="0.05"/></pattern>` +
  `<pattern id="pat-mine" patternUnits="userSpaceOnUse" width="0.25" height="0.25" patternTransform="rotate(45)"><rect width="0.25" height="0.25" fill="#ffd24d"/><rect width="0.1" height="0.25" fill="#e0a800"/></pattern>`;

// Everything a map's seats and marks refer to: the marks' drawings and the status patterns.
export const DEFS = `<defs>${MARK_DEFS}${STATUS_DEFS}</defs>`;

const union = (a, b) => {
  const x = Math.min(a.x, b.x), y = Math.min(a.y, b.y);
  return { x, y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
};

// Draws `seats` (each with id, label, section, row, x, y, status, in venue order) and
// `shapeList` into `svg`, in one string parsed once (far faster than 20,000 createElement
// calls). Each seat is a circle filled with `colour(seat)`, carrying data-seat-id,
// data-status and `attributes(seat)` (more attributes, as text); without `attributes` it
// is named by a <title>. `timings`, if given, gets `built` and `parsed` (performance.now()).
// Answers `{els, rows, rowOf, fit}`: the circles by seat id, each row's seat ids in order
// (for arrow keys), a seat's [row, place], and the whole hall's box (for the viewport).
export function draw(svg, seats, shapeList, { colour = () => "#fff", attributes = null, timings = null } = {}) {
  const unit = unitOf(seats);
  const taken = new Taken();
  const drawn = shapes(shapeList, unit, taken);
  const R = SEAT_R;
  let box = null;
  const grow = (b) => { box = box ? union(box, b) : { ...b }; };
  const rows = [];
  const ids = [];
  const rowOf = new Map();
  const parts = [];
  let key = null;
  for (const s of seats) {
    const cx = s.x / unit, cy = s.y / unit;
    if (s.section + "\u0000" + s.row !== key) {
      key = s.section + "\u0000" + s.row;
      rows.push({ section: s.section, sectionName: s.label.split(", Row ")[0], label: s.row, seats: [], box: null });
      ids.push([]);
    }
    const row = rows[rows.length - 1];
    const rowIds = ids[ids.length - 1];
    rowOf.set(s.id, [ids.length - 1, rowIds.length]);
    rowIds.push(s.id);
    row.seats.push({ cx, cy });
    const b = { x: cx - R, y: cy - R, w: 2 * R, h: 2 * R };
    row.box = row.box ? union(row.box, b) : b;
    taken.add(b);
    grow(b);
    const named = attributes ? attributes(s) + "/>" : `><title>${esc([s.label, ...spoken(s)].join(", "))}</title></circle>`;
    parts.push(`<circle class="seat" cx="${cx}" cy="${cy}" r="${R}" fill="${colour(s)}" data-seat-id="${esc(s.id)}" data-status="${esc(s.status)}" ${named}${marks(s, cx, cy)}`);
  }
  const labels = rowLabels(rows, taken);
  const titled = titles(rows, taken);
  for (const b of [...drawn.boxes, ...titled.boxes]) grow(b);
  box = box || { x: 0, y: 0, w: 1, h: 1 };
  if (timings) timings.built = performance.now();
  svg.innerHTML = `${DEFS}${drawn.svg}${parts.join("")}${labels}${titled.svg}`;
  if (timings) timings.parsed = performance.now();
  const pad = 1.5;
  const fit = { x: box.x - pad, y: box.y - pad, w: box.w + 2 * pad, h: box.h + 2 * pad };
  svg.setAttribute("viewBox", `${fit.x} ${fit.y} ${fit.w} ${fit.h}`);
  // On a narrow screen the map is as tall as the hall is at its width, so the first view
  // shows the whole hall without bands above and below.
  svg.style.aspectRatio = `${fit.w} / ${fit.h}`;
  // The circles come out in the order they went in: pair them with their seats by index.
  const circles = svg.getElementsByClassName("seat");
  const els = new Map();
  seats.forEach((s, i) => els.set(s.id, circles[i]));
  return { els, rows: ids, rowOf, fit };
}
