// A drawing of a venue as plain data, and every change to it as a pure function that
// answers a new drawing (the old one is never touched, so undo is keeping old drawings).
//
// A drawing is {name, items, focal, next}: `focal` is the point best available ranks seats
// by (or null), `next` numbers new items, and each item is one of
//   {kind: "rows", id, x, y, rotation, section, rows, seatsPerRow, firstRow, numbering,
//    curve, spacing, category?}       a block laid out from its form (geometry.js)
//   {kind: "seats", id, x, y, rotation, section, sectionId, rows: [{label, seats:
//    [{number, x, y, …marks}]}]}      rows as a venue gave them, about (x, y)
//   {kind: "shape", id, x, y, rotation, shape: "stage" | "area", form: "rect" | "ellipse" |
//    "polygon", w, h, points?, text}  a stage, or an area (standing, a desk, a bar)
//   {kind: "text", id, x, y, rotation, text, size}
// An item's (x, y) is where it sits; what it holds is drawn about it, turned by `rotation`.

import { NUMBERINGS, blockRows, boxOf, ellipse, place } from "./geometry.js";

export const LIMITS = { rows: 100, seatsPerRow: 200, seats: 200000, curve: 180 };
const LABEL = /^[A-Za-z0-9_]{1,16}$/;

export const empty = (name = "") => ({ name, items: [], focal: null, next: 1 });

// A section's id from its name, as the API wants it (`[A-Za-z0-9_]{1,32}`).
export const sectionId = (name) =>
  String(name).normalize("NFKD").replace(/[^A-Za-z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 32).toLowerCase();

const int = (v) => (typeof v === "number" ? v : String(v ?? "").trim() === "" ? NaN : Number(v));

// What is wrong with a block's form, field by field ({} when nothing): each field is read
// as a form gives it (text) or as data (numbers).
export function blockErrors(form) {
  const errors = {};
  const section = typeof form.section === "string" ? form.section.trim() : null;
  if (!section || section.length > 64 || !sectionId(section)) {
    errors.section = "A section is named by 1 to 64 characters, with at least one letter or digit.";
  }
  const rows = int(form.rows);
  if (!Number.isInteger(rows) || rows < 1 || rows > LIMITS.rows) errors.rows = `Rows is a whole number from 1 to ${LIMITS.rows}.`;
  const seats = int(form.seatsPerRow);
  if (!Number.isInteger(seats) || seats < 1 || seats > LIMITS.seatsPerRow) {
    errors.seatsPerRow = `Seats per row is a whole number from 1 to ${LIMITS.seatsPerRow}.`;
  }
  if (typeof form.firstRow !== "string" || !/^([0-9]{1,4}|[A-Z]{1,3}|[a-z]{1,3})$/.test(form.firstRow.trim())) {
    errors.firstRow = "First row is a letter (A, or AA) or a number (1).";
  }
  if (!Object.hasOwn(NUMBERINGS, form.numbering)) errors.numbering = "Numbering is left to right, right to left, or odd and even from the centre.";
  const curve = int(form.curve);
  if (!Number.isFinite(curve) || curve < 0 || curve > LIMITS.curve) errors.curve = "Curve is from 0 to 180 degrees.";
  const spacing = int(form.spacing);
  if (!Number.isFinite(spacing) || spacing < 0.8 || spacing > 10) errors.spacing = "Seat spacing is from 0.8 to 10.";
  if (form.category != null && form.category !== "" && (typeof form.category !== "string" || form.category.length > 64)) {
    errors.category = "A category is up to 64 characters.";
  }
  return errors;
}

// A block's fields as numbers and trimmed text, once `blockErrors` found nothing.
function blockFields(form) {
  const out = {
    section: form.section.trim(), rows: int(form.rows), seatsPerRow: int(form.seatsPerRow),
    firstRow: form.firstRow.trim(), numbering: form.numbering, curve: int(form.curve), spacing: int(form.spacing),
  };
  if (form.category) out.category = form.category.trim();
  return out;
}

// Raised by a change the drawing refuses: `errors` says why, by field.
export class Refused extends Error {
  constructor(errors) {
    super(Object.values(errors).join(" "));
    this.errors = errors;
  }
}

const withItems = (d, items) => ({ ...d, items });
const add = (d, item) => ({ drawing: { ...d, items: [...d.items, { ...item, id: `i${d.next}` }], next: d.next + 1 }, id: `i${d.next}` });

// Adds a block of rows at `at`; answers {drawing, id}, or throws Refused.
export function addBlock(d, form, at = { x: 0, y: 0 }) {
  const errors = blockErrors(form);
  if (Object.keys(errors).length) throw new Refused(errors);
  return add(d, { kind: "rows", x: at.x, y: at.y, rotation: 0, ...blockFields(form) });
}

export const SHAPES = { stage: "Stage", area: "Other (desk, bar, exit)" };
export const FORMS = { rect: "Rectangle", ellipse: "Ellipse", polygon: "Polygon" };

// Adds a stage or an area (rect, ellipse, or a polygon of `sides` corners) of w × h at
// `at`; an area sold standing is named by its text.
export function addShape(d, { shape = "stage", form = "rect", w = 12, h = 4, sides = 6, text = "" }, at = { x: 0, y: 0 }) {
  const errors = {};
  if (!Object.hasOwn(SHAPES, shape)) errors.shape = "A shape is a stage or an area.";
  if (!Object.hasOwn(FORMS, form)) errors.form = "A shape is a rectangle, an ellipse or a polygon.";
  if (!(Number(w) > 0 && Number(w) <= 1000 && Number(h) > 0 && Number(h) <= 1000)) errors.size = "Width and height are from 0 to 1,000.";
  if (typeof text !== "string" || text.length > 200) errors.text = "A shape's text is up to 200 characters.";
  if (Object.keys(errors).length) throw new Refused(errors);
  const item = { kind: "shape", x: at.x, y: at.y, rotation: 0, shape, form, w: Number(w), h: Number(h), text: text.trim() };
  if (form === "polygon") item.points = ellipse(Number(w), Number(h), Math.max(3, Math.min(12, sides))).map(roundPoint);
  return add(d, item);
}

// Adds a text of 1–200 characters at `at`.
export function addText(d, { text, size = 1 }, at = { x: 0, y: 0 }) {
  if (typeof text !== "string" || !text.trim() || text.length > 200) throw new Refused({ text: "A text is 1 to 200 characters." });
  return add(d, { kind: "text", x: at.x, y: at.y, rotation: 0, text: text.trim(), size: Number(size) || 1 });
}

const roundPoint = (p) => ({ x: Math.round(p.x * 1000) / 1000, y: Math.round(p.y * 1000) / 1000 });
const map = (d, id, f) => withItems(d, d.items.map((item) => (item.id === id ? f(item) : item)));

export const move = (d, id, dx, dy) => map(d, id, (i) => ({ ...i, x: i.x + dx, y: i.y + dy }));
export const moveTo = (d, id, x, y) => map(d, id, (i) => ({ ...i, x, y }));
export const turnBy = (d, id, deg) => map(d, id, (i) => ({ ...i, rotation: (((i.rotation + deg) % 360) + 360) % 360 }));
export const remove = (d, id) => withItems(d, d.items.filter((i) => i.id !== id));
export const setFocal = (d, point) => ({ ...d, focal: point && roundPoint(point) });
export const rename = (d, name) => ({ ...d, name });

// Changes an item's fields: a block's form fields (checked as on adding), a row's label or
// section, the wheelchair spaces and companion seats of either ("A-1 A-2"), a shape's or
// text's text, any item's rotation.
export function edit(d, id, patch) {
  const item = d.items.find((i) => i.id === id);
  if (!item) return d;
  if ("rotation" in patch && !Number.isFinite(int(patch.rotation))) throw new Refused({ rotation: "Rotation is a number of degrees." });
  const rotation = "rotation" in patch ? ((int(patch.rotation) % 360) + 360) % 360 : item.rotation;
  if (item.kind === "rows") {
    const form = { ...item, ...patch };
    for (const k of ["rows", "seatsPerRow", "curve", "spacing"]) form[k] = String(form[k]);
    const errors = blockErrors(form);
    if (Object.keys(errors).length) throw new Refused(errors);
    return map(d, id, () => withMarks({ ...item, ...blockFields(form), rotation }, patch));
  }
  if (item.kind === "seats") {
    const next = { ...item, rotation };
    if ("section" in patch) {
      const section = String(patch.section).trim();
      if (!section || section.length > 64 || !sectionId(section)) throw new Refused({ section: "A section is named by 1 to 64 characters, with at least one letter or digit." });
      next.section = section;
      next.sectionId = sectionId(section);
    }
    if ("label" in patch && next.rows.length === 1) {
      if (!LABEL.test(String(patch.label))) throw new Refused({ label: "A row label is 1 to 16 letters, digits or _." });
      next.rows = [{ ...next.rows[0], label: String(patch.label) }];
    }
    return map(d, id, () => withMarks(next, patch));
  }
  const next = { ...item, rotation };
  if ("text" in patch) {
    if (typeof patch.text !== "string" || patch.text.length > 200 || (item.kind === "text" && !patch.text.trim())) {
      throw new Refused({ text: item.kind === "text" ? "A text is 1 to 200 characters." : "A shape's text is up to 200 characters." });
    }
    next.text = patch.text.trim();
  }
  return map(d, id, () => next);
}

// An item's section: its id and name (a block's id comes from its name).
export const sectionOf = (item) => ({ id: item.sectionId || sectionId(item.section), name: item.section });

// An item's rows with each seat where it is in the hall.
export function rowsOf(item) {
  if (item.kind !== "rows" && item.kind !== "seats") return [];
  const rows = item.kind === "rows" ? blockRows(item) : item.rows;
  const marks = item.marks || {};
  const marked = (k, ref) => (marks[k] && marks[k].includes(ref) ? { [k]: true } : {});
  return rows.map((row) => ({
    label: row.label,
    seats: row.seats.map((s) => ({
      ...s, ...marked("accessible", `${row.label}-${s.number}`), ...marked("companion", `${row.label}-${s.number}`),
      ...place(s, item.rotation, item),
    })),
  }));
}

// An item's wheelchair spaces and companion seats, as the form shows them ("A-1 A-2").
export function marksOf(item) {
  const out = { accessible: [], companion: [] };
  for (const row of rowsOf(item)) {
    for (const s of row.seats) for (const k of ["accessible", "companion"]) if (s[k]) out[k].push(`${row.label}-${s.number}`);
  }
  return { accessible: out.accessible.join(" "), companion: out.companion.join(" ") };
}

// The wheelchair spaces and companion seats a patch names, checked against the item's
// seats: {accessible: [refs], companion: [refs]} for the fields given.
function marksIn(item, patch) {
  const known = new Set(rowsOf(item).flatMap((r) => r.seats.map((s) => `${r.label}-${s.number}`)));
  const out = {}, errors = {};
  for (const k of ["accessible", "companion"]) {
    if (!(k in patch)) continue;
    if (typeof patch[k] !== "string") { errors[k] = "Seats are named as row-number, such as A-1."; continue; }
    const refs = [...new Set(patch[k].split(/[\s,]+/).filter(Boolean))];
    const unknown = refs.find((r) => !known.has(r));
    if (unknown) errors[k] = `No seat ${unknown} here: name seats as row-number, such as A-1.`;
    out[k] = refs;
  }
  if (out.accessible && out.companion && out.accessible.some((r) => out.companion.includes(r))) {
    errors.companion = "A seat is a wheelchair space or a companion seat, not both.";
  }
  if (Object.keys(errors).length) throw new Refused(errors);
  return out;
}

// `item` with the marks `patch` names: a block keeps them by seat; rows as a venue gave
// them carry them on their seats.
function withMarks(item, patch) {
  const marks = marksIn(item, patch);
  if (!Object.keys(marks).length) return item;
  if (item.kind === "rows") return { ...item, marks: { ...(item.marks || {}), ...marks } };
  return {
    ...item,
    rows: item.rows.map((row) => ({
      ...row,
      seats: row.seats.map((seat) => {
        const next = { ...seat };
        for (const [k, refs] of Object.entries(marks)) {
          if (refs.includes(`${row.label}-${seat.number}`)) next[k] = true;
          else delete next[k];
        }
        return next;
      }),
    })),
  };
}

// A shape's outline in the hall: its corners (rectangle, polygon) or 32 points (ellipse).
export function outlineOf(item) {
  const local = item.form === "polygon" ? item.points
    : item.form === "ellipse" ? ellipse(item.w, item.h)
    : [{ x: -item.w / 2, y: -item.h / 2 }, { x: item.w / 2, y: -item.h / 2 }, { x: item.w / 2, y: item.h / 2 }, { x: -item.w / 2, y: item.h / 2 }];
  return local.map((p) => place(p, item.rotation, item));
}

// The venue document the API takes (`POST /v1/venues`): sections in the order they first
// appear, their rows in the items' order; shapes and texts as shapes; the focal point.
export function compile(d) {
  const sections = new Map();
  for (const item of d.items) {
    if (item.kind !== "rows" && item.kind !== "seats") continue;
    const { id, name } = sectionOf(item);
    if (!sections.has(id)) sections.set(id, { id, name, rows: [] });
    for (const row of rowsOf(item)) {
      const out = { label: row.label, seats: row.seats.map(({ number, x, y, ...rest }) => ({ number, x, y, ...marks(rest) })) };
      if (item.category) out.category = item.category;
      sections.get(id).rows.push(out);
    }
  }
  const shapes = [];
  for (const item of d.items) {
    if (item.kind === "shape") shapes.push(shapeOf(item));
    if (item.kind === "text") {
      const w = Math.max(1, item.text.length) * item.size * 0.6;
      shapes.push({ kind: "label", text: item.text, rect: rect(item.x - w / 2, item.y - item.size / 2, w, item.size) });
    }
  }
  const venue = { name: d.name.trim(), sections: [...sections.values()], shapes };
  if (d.focal) venue.focal_point = { ...d.focal };
  if (d.timeZone) venue.time_zone = d.timeZone;
  return venue;
}

const rect = (x, y, w, h) => roundBox({ x, y, w, h });
const roundBox = (b) => ({ x: Math.round(b.x * 1000) / 1000, y: Math.round(b.y * 1000) / 1000, w: Math.round(b.w * 1000) / 1000, h: Math.round(b.h * 1000) / 1000 });

function marks(seat) {
  const out = {};
  for (const k of ["category", "accessible", "companion", "restricted_view"]) if (seat[k] != null && seat[k] !== false) out[k] = seat[k];
  return out;
}

function shapeOf(item) {
  const out = { kind: item.shape };
  if (item.text) out.text = item.text;
  if (item.form === "rect" && item.rotation % 90 === 0) {
    const [w, h] = item.rotation % 180 ? [item.h, item.w] : [item.w, item.h];
    out.rect = rect(item.x - w / 2, item.y - h / 2, w, h);
  } else if (item.form === "ellipse" && item.w === item.h) {
    out.circle = { x: item.x, y: item.y, r: item.w / 2 };
  } else {
    out.polygon = outlineOf(item);
  }
  return out;
}

// A venue as the API answers it (`GET /v1/venues/{id}`, or an import's dry run) as a
// drawing: each row an item of its own, about its seats' middle; shapes, texts and the
// focal point as they are; its time zone kept for the venue saved back.
export function fromVenue(venue) {
  let d = empty(venue.name || "");
  const items = [];
  for (const section of venue.sections || []) {
    for (const row of section.rows || []) {
      const seats = row.seats.map(({ number, x, y, category, accessible, companion, restricted_view }) =>
        ({ number, x, y, ...marks({ category, accessible, companion, restricted_view }) }));
      const box = boxOf(seats);
      const c = { x: box.x + box.w / 2, y: box.y + box.h / 2 };
      items.push({ kind: "seats", x: c.x, y: c.y, rotation: 0, section: section.name, sectionId: section.id,
        rows: [{ label: row.label, seats: seats.map((s) => ({ ...s, x: s.x - c.x, y: s.y - c.y })) }] });
    }
  }
  for (const shape of venue.shapes || []) items.push(shapeItem(shape));
  d = { ...d, items: items.map((item, i) => ({ ...item, id: `i${i + 1}` })), next: items.length + 1 };
  if (venue.focal_point) d.focal = { ...venue.focal_point };
  if (venue.time_zone) d.timeZone = venue.time_zone;
  return d;
}

function shapeItem(shape) {
  if (shape.kind === "label" && shape.rect) {
    const r = shape.rect;
    return { kind: "text", x: r.x + r.w / 2, y: r.y + r.h / 2, rotation: 0, text: shape.text || "", size: r.h };
  }
  const base = { kind: "shape", rotation: 0, shape: shape.kind === "stage" ? "stage" : "area", text: shape.text || "" };
  if (shape.rect) { const r = shape.rect; return { ...base, form: "rect", x: r.x + r.w / 2, y: r.y + r.h / 2, w: r.w, h: r.h }; }
  if (shape.circle) { const c = shape.circle; return { ...base, form: "ellipse", x: c.x, y: c.y, w: 2 * c.r, h: 2 * c.r }; }
  const box = boxOf(shape.polygon || []);
  const c = { x: box.x + box.w / 2, y: box.y + box.h / 2 };
  return { ...base, form: "polygon", x: c.x, y: c.y, w: box.w, h: box.h, points: shape.polygon.map((p) => ({ x: p.x - c.x, y: p.y - c.y })) };
}
