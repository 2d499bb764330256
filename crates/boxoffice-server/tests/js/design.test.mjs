// The venue designer's drawing (web/design/): the layout of blocks, every edit as a pure
// function, the problems that stop a save, undo and redo, and the venue document it
// saves, under Node's test runner: `node --test tests/js/`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { rowLabels, seatNumbers, blockRows } from "../../web/design/geometry.js";
import {
  empty, addBlock, addShape, addText, move, turnBy, remove, edit, setFocal, rename, compile, fromVenue, rowsOf, marksOf, Refused, sectionId,
} from "../../web/design/model.js";
import { problems } from "../../web/design/checks.js";
import { start, record, undo, redo, canUndo, canRedo } from "../../web/design/history.js";

const form = (over = {}) => ({
  section: "Stalls", rows: "3", seatsPerRow: "4", firstRow: "A", numbering: "ltr", curve: "0", spacing: "1", ...over,
});

test("row labels run on from the first, as letters or numbers", () => {
  assert.deepEqual(rowLabels("A", 3), ["A", "B", "C"]);
  assert.deepEqual(rowLabels("Y", 4), ["Y", "Z", "AA", "AB"]);
  assert.deepEqual(rowLabels("aa", 2), ["aa", "ab"]);
  assert.deepEqual(rowLabels("9", 3), ["9", "10", "11"]);
});

test("seats are numbered left to right, right to left, or odd and even from the centre", () => {
  assert.deepEqual(seatNumbers(4, "ltr"), ["1", "2", "3", "4"]);
  assert.deepEqual(seatNumbers(4, "rtl"), ["4", "3", "2", "1"]);
  assert.deepEqual(seatNumbers(6, "centre"), ["6", "4", "2", "1", "3", "5"]);
  assert.deepEqual(seatNumbers(5, "centre"), ["4", "2", "1", "3", "5"]);
});

test("a straight block is rows of evenly spaced seats; a curved one bends every row about one centre", () => {
  const straight = blockRows({ rows: 2, seatsPerRow: 3, firstRow: "A", numbering: "ltr", curve: 0, spacing: 2 });
  assert.deepEqual(straight[0].seats.map((s) => [s.x, s.y]), [[-2, 0], [0, 0], [2, 0]]);
  assert.deepEqual(straight[1].seats.map((s) => s.y), [2.5, 2.5, 2.5]);
  const curved = blockRows({ rows: 2, seatsPerRow: 5, firstRow: "A", numbering: "ltr", curve: 90, spacing: 1 });
  const front = curved[0].seats;
  assert.ok(Math.abs(front[2].x) < 1e-9 && Math.abs(front[2].y) < 1e-9, "the middle seat of the front row sits at the block's point");
  assert.ok(front[0].y < 0 && front[4].y < 0, "the ends of a curved row come forward, towards the stage");
  assert.ok(Math.abs(front[0].y - front[4].y) < 1e-9 && Math.abs(front[0].x + front[4].x) < 1e-9, "a curve is symmetric");
  const centre = { x: 0, y: -4 / (Math.PI / 2) };
  const radius = (s) => Math.hypot(s.x - centre.x, s.y - centre.y);
  for (const s of front) assert.ok(Math.abs(radius(s) - radius(front[2])) < 1e-9);
  for (const s of curved[1].seats) assert.ok(Math.abs(radius(s) - radius(front[2]) - 1.25) < 1e-9);
});

test("a block's form is checked field by field, and a refused block changes nothing", () => {
  const d = empty("Hall");
  for (const [over, field] of [
    [{ rows: "0" }, "rows"], [{ seatsPerRow: "5000" }, "seatsPerRow"], [{ curve: "181" }, "curve"],
    [{ curve: "-1" }, "curve"], [{ firstRow: "!" }, "firstRow"], [{ firstRow: 7 }, "firstRow"],
    [{ section: "" }, "section"], [{ section: "***" }, "section"], [{ section: 12 }, "section"],
    [{ numbering: "random" }, "numbering"], [{ spacing: "0.1" }, "spacing"], [{ rows: "2.5" }, "rows"],
  ]) {
    assert.throws(() => addBlock(d, form(over)), (e) => e instanceof Refused && Object.keys(e.errors).includes(field), JSON.stringify(over));
  }
  assert.deepEqual(d, empty("Hall"));
});

test("edits are pure: each answers a new drawing and leaves the old one as it was", () => {
  const d0 = empty("Hall");
  const { drawing: d1, id } = addBlock(d0, form(), { x: 10, y: 5 });
  const frozen = JSON.stringify(d1);
  const d2 = turnBy(move(d1, id, 1, -2), id, 90);
  assert.equal(JSON.stringify(d1), frozen);
  assert.deepEqual([d2.items[0].x, d2.items[0].y, d2.items[0].rotation], [11, 3, 90]);
  const seats = rowsOf(d2.items[0])[0].seats;
  assert.deepEqual([seats[0].x, seats[0].y], [11, 1.5], "turned 90° about the block's point, the row stands upright");
  assert.deepEqual(remove(d2, id).items, []);
  assert.throws(() => edit(d2, id, { rows: "0" }), Refused);
  assert.equal(edit(d2, id, { rows: "5", curve: "30" }).items[0].rows, 5);
});

test("undo and redo step through every change", () => {
  let h = start(empty("Hall"));
  const a = addBlock(h.present, form());
  h = record(h, a.drawing);
  h = record(h, move(h.present, a.id, 3, 0));
  h = record(h, addText(h.present, { text: "EXIT" }, { x: 0, y: 9 }).drawing);
  assert.equal(h.present.items.length, 2);
  h = undo(h);
  assert.equal(h.present.items.length, 1);
  h = undo(h);
  assert.equal(h.present.items[0].x, 0);
  assert.ok(canRedo(h));
  h = redo(h);
  assert.equal(h.present.items[0].x, 3);
  h = record(h, move(h.present, a.id, 1, 0));
  assert.ok(!canRedo(h), "a change after an undo drops what was undone");
  h = undo(undo(undo(h)));
  assert.deepEqual(h.present.items, []);
  assert.ok(!canUndo(h));
  assert.equal(undo(h), h);
});

test("problems keep up with the drawing: no name, overlapping seats, a repeated row, an empty section", () => {
  let d = empty("");
  assert.deepEqual(problems(d).map((p) => p.kind), ["name", "no-seats"]);
  d = rename(d, "Hall");
  const a = addBlock(d, form());
  d = a.drawing;
  assert.deepEqual(problems(d), []);
  const b = addBlock(d, form({ firstRow: "C" }), { x: 0.3, y: 0 });
  d = b.drawing;
  const kinds = problems(d).map((p) => p.kind).sort();
  assert.deepEqual(kinds, ["overlap", "repeated-row"]);
  const overlap = problems(d).find((p) => p.kind === "overlap");
  assert.deepEqual(overlap.items.sort(), [a.id, b.id].sort());
  assert.match(overlap.message, /Seats overlap: Stalls, Row A, Seat \d and Stalls, Row C, Seat \d/);
  d = move(d, b.id, 0, 20);
  assert.deepEqual(problems(d).map((p) => p.kind), ["repeated-row"]);
  d = edit(d, b.id, { firstRow: "D" });
  assert.deepEqual(problems(d), []);
  const emptied = { ...d, items: [...d.items, { kind: "seats", id: "x", x: 0, y: 40, rotation: 0, section: "Box", sectionId: "box", rows: [] }] };
  assert.deepEqual(problems(emptied).map((p) => p.message), ["Section Box has no seats."]);
});

test("a standing area drawn over seats is a problem until it is moved off them", () => {
  let d = rename(empty(""), "Club");
  const rows = addBlock(d, form({ rows: "2", seatsPerRow: "3" }), { x: 0, y: 10 });
  d = rows.drawing;
  const area = addShape(d, { shape: "area", form: "rect", w: 4, h: 4, text: "Floor" }, { x: 0, y: 10 });
  d = area.drawing;
  const found = problems(d).filter((p) => p.kind === "area-over-seats");
  assert.equal(found.length, 1);
  assert.deepEqual(found[0].items, [area.id, rows.id]);
  assert.match(found[0].message, /The standing area Floor covers \d+ seats, Stalls, Row [AB], Seat \d among them/);
  d = move(d, area.id, 20, 0);
  assert.deepEqual(problems(d), []);
});

test("the venue document is exactly what was drawn", () => {
  let d = empty("Riverside");
  d = addBlock(d, form({ rows: "2", seatsPerRow: "3" }), { x: 0, y: 10 }).drawing;
  d = addBlock(d, form({ section: "Upper Circle", rows: "1", seatsPerRow: "5", curve: "60", numbering: "centre" }), { x: 0, y: 20 }).drawing;
  d = addShape(d, { shape: "stage", form: "rect", w: 10, h: 3, text: "STAGE" }, { x: 0, y: 2 }).drawing;
  d = addShape(d, { shape: "area", form: "ellipse", w: 6, h: 6, text: "Standing" }, { x: 20, y: 10 }).drawing;
  d = addText(d, { text: "Exit" }, { x: -12, y: 0 }).drawing;
  d = setFocal(d, { x: 0, y: 2 });
  const venue = compile(d);
  assert.equal(venue.name, "Riverside");
  assert.deepEqual(venue.sections.map((s) => [s.id, s.name, s.rows.map((r) => r.label)]), [
    ["stalls", "Stalls", ["A", "B"]], ["upper_circle", "Upper Circle", ["A"]]]);
  assert.deepEqual(venue.sections[0].rows[0].seats, [{ number: "1", x: -1, y: 10 }, { number: "2", x: 0, y: 10 }, { number: "3", x: 1, y: 10 }]);
  assert.deepEqual(venue.sections[1].rows[0].seats.map((s) => s.number), ["4", "2", "1", "3", "5"]);
  assert.deepEqual(venue.shapes, [
    { kind: "stage", text: "STAGE", rect: { x: -5, y: 0.5, w: 10, h: 3 } },
    { kind: "area", text: "Standing", circle: { x: 20, y: 10, r: 3 } },
    { kind: "label", text: "Exit", rect: { x: -13.2, y: -0.5, w: 2.4, h: 1 } },
  ]);
  assert.deepEqual(venue.focal_point, { x: 0, y: 2 });
  assert.equal(sectionId("Upper Circle"), "upper_circle");
});

test("a venue the API answers opens as a drawing, and saves back unchanged", () => {
  const venue = {
    name: "Imported", focal_point: { x: 5, y: -3 },
    sections: [{ id: "floor", name: "Floor", rows: [
      { label: "A", seats: [{ number: "1", x: 0, y: 0, accessible: true }, { number: "2", x: 1.5, y: 0, category: "Front" }] },
      { label: "B", seats: [{ number: "1", x: 0, y: 2, companion: true }, { number: "2", x: 1.5, y: 2.2 }] }] }],
    shapes: [{ kind: "stage", text: "Stage", rect: { x: -2, y: -6, w: 6, h: 2 } },
      { kind: "area", polygon: [{ x: 10, y: 0 }, { x: 14, y: 0 }, { x: 12, y: 3 }] }],
  };
  const d = fromVenue(venue);
  assert.equal(d.items.length, 4, "each row an item, each shape one");
  assert.deepEqual(problems(d), []);
  assert.deepEqual(compile(d), venue);
  const row = d.items[1];
  const moved = compile(edit(move(d, row.id, 3, 0), row.id, { label: "C" }));
  assert.deepEqual(moved.sections[0].rows[1], { label: "C", seats: [{ number: "1", x: 3, y: 2, companion: true }, { number: "2", x: 4.5, y: 2.2 }] });
  assert.deepEqual(moved.sections[0].rows[0], venue.sections[0].rows[0], "the other rows stay as they were");
  assert.throws(() => edit(d, row.id, { label: "C-1" }), Refused);
});

test("wheelchair spaces and companion seats are marked by row and number, on blocks and on a venue's rows", () => {
  const { drawing, id } = addBlock(empty("Hall"), form({ rows: "2", seatsPerRow: "3" }));
  const marked = edit(drawing, id, { accessible: "A-1, A-2", companion: "A-3" });
  assert.deepEqual(marksOf(marked.items[0]), { accessible: "A-1 A-2", companion: "A-3" });
  const row = compile(marked).sections[0].rows[0].seats;
  assert.deepEqual(row.map((s) => [s.number, !!s.accessible, !!s.companion]), [["1", true, false], ["2", true, false], ["3", false, true]]);
  assert.equal(compile(marked).sections[0].rows[1].seats.some((s) => s.accessible || s.companion), false);
  for (const bad of [{ accessible: "A-9" }, { accessible: "A-1", companion: "A-1" }, { companion: 3 }]) {
    assert.throws(() => edit(marked, id, bad), Refused, JSON.stringify(bad));
  }
  const unmarked = edit(marked, id, { accessible: "", companion: "" });
  assert.deepEqual(marksOf(unmarked.items[0]), { accessible: "", companion: "" });
  const imported = fromVenue({ name: "V", sections: [{ id: "s", name: "S", rows: [{ label: "A", seats: [
    { number: "1", x: 0, y: 0, accessible: true }, { number: "2", x: 1, y: 0 }] }] }] });
  const changed = edit(imported, imported.items[0].id, { accessible: "A-2", companion: "A-1" });
  assert.deepEqual(compile(changed).sections[0].rows[0].seats, [{ number: "1", x: 0, y: 0, companion: true }, { number: "2", x: 1, y: 0, accessible: true }]);
});
