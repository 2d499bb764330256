// What stops a drawing from being saved, worked out again after every change: a venue
// with no name or no seats, seats that overlap, a row label twice in a section, a section
// without seats, more seats than a venue holds, a standing area drawn over seats (its
// places and those seats would be the same floor, sold twice). Each problem names the items it is about,
// so the designer can select them.

import { LIMITS, outlineOf, rowsOf, sectionOf } from "./model.js";

// Two seats closer than this share of the venue's unit (the usual distance between
// neighbours in a row) overlap: their circles, drawn 0.8 units across, touch.
const TOO_CLOSE = 0.8;

// The problems of drawing `d`, in a stable order: [{kind, message, items}].
export function problems(d) {
  const out = [];
  if (!d.name.trim()) out.push({ kind: "name", message: "The venue needs a name.", items: [] });
  else if (d.name.trim().length > 200) out.push({ kind: "name", message: "A venue's name is at most 200 characters.", items: [] });
  const seats = [];
  const gaps = [];
  const rowsBySection = new Map();
  const sectionNames = new Map();
  for (const item of d.items) {
    if (item.kind !== "rows" && item.kind !== "seats") continue;
    const section = sectionOf(item);
    if (!sectionNames.has(section.id)) sectionNames.set(section.id, section.name);
    const rows = rowsOf(item);
    let count = 0;
    for (const row of rows) {
      const key = section.id + "\u0000" + row.label;
      if (!rowsBySection.has(key)) rowsBySection.set(key, { section: section.name, label: row.label, items: [] });
      rowsBySection.get(key).items.push(item.id);
      row.seats.forEach((s, i) => {
        if (i) gaps.push(Math.hypot(s.x - row.seats[i - 1].x, s.y - row.seats[i - 1].y));
        seats.push({ x: s.x, y: s.y, item: item.id, name: `${section.name}, Row ${row.label}, Seat ${s.number}` });
        count += 1;
      });
    }
    if (!count) out.push({ kind: "empty", message: `Section ${section.name} has no seats.`, items: [item.id] });
  }
  if (!seats.length) out.push({ kind: "no-seats", message: "The venue has no seats yet: add rows.", items: [] });
  if (seats.length > LIMITS.seats) {
    out.push({ kind: "too-many", message: `The venue has ${seats.length.toLocaleString("en")} seats; a venue holds at most ${LIMITS.seats.toLocaleString("en")}.`, items: [] });
  }
  for (const row of rowsBySection.values()) {
    if (row.items.length > 1) {
      out.push({ kind: "repeated-row", message: `Row ${row.label} is in section ${row.section} ${row.items.length} times.`, items: [...new Set(row.items)] });
    }
  }
  gaps.sort((a, b) => a - b);
  const unit = gaps.length ? gaps[gaps.length >> 1] || 1 : 1;
  out.push(...overlaps(seats, unit * TOO_CLOSE));
  out.push(...areasOverSeats(d, seats));
  return out;
}

// Standing areas that cover seats: one problem per area, naming a seat it covers.
function areasOverSeats(d, seats) {
  const out = [];
  for (const area of d.items) {
    if (area.kind !== "shape" || area.shape !== "area") continue;
    const outline = outlineOf(area);
    const covered = seats.filter((s) => inside(s, outline));
    if (!covered.length) continue;
    const name = area.text ? `The standing area ${area.text}` : "A standing area";
    out.push({
      kind: "area-over-seats",
      message: `${name} covers ${covered.length === 1 ? "a seat" : covered.length + " seats"}, ${covered[0].name} among them: move it off the seats.`,
      items: [area.id, ...new Set(covered.map((s) => s.item))],
    });
  }
  return out;
}

// Whether point `p` is inside the polygon `outline` (even-odd rule).
function inside(p, outline) {
  let within = false;
  for (let i = 0, j = outline.length - 1; i < outline.length; j = i++) {
    const a = outline[i], b = outline[j];
    if ((a.y > p.y) !== (b.y > p.y) && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) within = !within;
  }
  return within;
}

// Seats that overlap, one problem per pair of items (or per item, for its own seats),
// naming the first pair found and how many there are.
function overlaps(seats, tooClose) {
  const cells = new Map();
  const key = (x, y) => `${Math.floor(x / tooClose)},${Math.floor(y / tooClose)}`;
  const found = new Map();
  for (const s of seats) {
    const cx = Math.floor(s.x / tooClose), cy = Math.floor(s.y / tooClose);
    for (let gx = cx - 1; gx <= cx + 1; gx++) {
      for (let gy = cy - 1; gy <= cy + 1; gy++) {
        for (const o of cells.get(`${gx},${gy}`) || []) {
          if (Math.hypot(o.x - s.x, o.y - s.y) >= tooClose) continue;
          const pair = [o.item, s.item].sort().join(" ");
          if (!found.has(pair)) found.set(pair, { first: [o.name, s.name], count: 0, items: [...new Set([o.item, s.item])] });
          found.get(pair).count += 1;
        }
      }
    }
    const k = key(s.x, s.y);
    if (!cells.has(k)) cells.set(k, []);
    cells.get(k).push(s);
  }
  return [...found.values()].map((p) => ({
    kind: "overlap",
    message: `Seats overlap: ${p.first[0]} and ${p.first[1]}${p.count > 1 ? ` (${p.count} pairs)` : ""}.`,
    items: p.items,
  }));
}
