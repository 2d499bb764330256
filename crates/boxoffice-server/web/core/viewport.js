// Moving about a drawn map: zooming and panning it (the wheel, a dragging pointer, two
// fingers), and the keyboard (arrow keys move between seats, Enter or Space chooses). The
// buyer's page, the console and the embed share both.

import { SEAT_R } from "./hall.js";

// How wide a seat must be on screen, in CSS pixels, for a finger to tap it.
const TAPPABLE_PX = 28;

// Zooming and panning a map: the wheel zooms at the pointer, one pointer drags, two
// pinch, and a finger on seats smaller than a fingertip zooms in on them first.
export class Viewport {
  constructor(svg) {
    this.svg = svg;
    this.view = this.fit = { x: 0, y: 0, w: 1, h: 1 };
    this.dragged = false; // the click that ends a drag or pinch is not a tap
    this.lastPointer = "mouse";
  }

  // The whole hall, as `draw` framed it.
  reset(fit) {
    if (fit) this.fit = fit;
    this.set(this.fit);
  }

  set(v) {
    this.view = v;
    this.svg.setAttribute("viewBox", `${v.x} ${v.y} ${v.w} ${v.h}`);
  }

  unitsPerPixel(v = this.view) {
    const box = this.svg.getBoundingClientRect();
    return Math.max(v.w / box.width, v.h / box.height);
  }

  seatPixels() { return (2 * SEAT_R) / this.unitsPerPixel(); }

  // The view width at which a seat is TAPPABLE_PX wide.
  tappableWidth() { return this.view.w * (this.seatPixels() / TAPPABLE_PX); }

  pointIn(e) {
    const box = this.svg.getBoundingClientRect();
    const v = this.view;
    const scale = this.unitsPerPixel();
    return {
      x: v.x + v.w / 2 + (e.clientX - box.left - box.width / 2) * scale,
      y: v.y + v.h / 2 + (e.clientY - box.top - box.height / 2) * scale,
    };
  }

  zoom(factor, at) {
    const v = this.view;
    const c = at || { x: v.x + v.w / 2, y: v.y + v.h / 2 };
    const w = Math.min(this.fit.w * 4, Math.max(3, v.w * factor));
    const h = v.h * (w / v.w);
    this.set({ x: c.x - (c.x - v.x) * (w / v.w), y: c.y - (c.y - v.y) * (h / v.h), w, h });
  }

  // From far out, one press brings the seats to a size a finger can tap.
  zoomIn() {
    if (this.seatPixels() < TAPPABLE_PX) this.zoom(this.tappableWidth() / this.view.w);
    else this.zoom(0.7);
  }

  zoomOut() { this.zoom(1 / 0.7); }

  // Whether a click is to be taken as choosing a seat: not when it ends a drag, nor when
  // a finger tapped seats too small to tell apart (the map zooms in on them instead).
  tap(e) {
    if (this.dragged) return false;
    if (this.lastPointer === "touch" && this.seatPixels() < TAPPABLE_PX) {
      this.zoom(this.tappableWidth() / this.view.w, this.pointIn(e));
      return false;
    }
    return true;
  }

  wire() {
    const svg = this.svg;
    svg.addEventListener("wheel", (e) => {
      e.preventDefault();
      this.zoom(e.deltaY < 0 ? 0.8 : 1.25, this.pointIn(e));
    }, { passive: false });
    const pointers = new Map();
    let drag = null, pinch = null;
    const spread = () => {
      const [a, b] = [...pointers.values()];
      return { d: Math.hypot(a.x - b.x, a.y - b.y) || 1, at: { clientX: (a.x + b.x) / 2, clientY: (a.y + b.y) / 2 } };
    };
    svg.addEventListener("pointerdown", (e) => {
      this.lastPointer = e.pointerType;
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (pointers.size === 2) {
        const { d, at } = spread();
        pinch = { d, view: { ...this.view }, at: this.pointIn(at) };
        drag = null;
        this.dragged = true;
      } else if (pointers.size === 1) {
        drag = { x: e.clientX, y: e.clientY, view: { ...this.view }, moved: false };
        this.dragged = false;
      }
    });
    svg.addEventListener("pointermove", (e) => {
      if (!pointers.has(e.pointerId)) return;
      pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
      if (pinch && pointers.size === 2) {
        this.view = pinch.view;
        this.zoom(pinch.d / spread().d, pinch.at);
        return;
      }
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      drag.moved = true;
      svg.classList.add("dragging");
      const scale = this.unitsPerPixel(drag.view);
      this.set({ ...drag.view, x: drag.view.x - dx * scale, y: drag.view.y - dy * scale });
    });
    const end = (e) => {
      pointers.delete(e.pointerId);
      if (pointers.size < 2) pinch = null;
      if ((drag && drag.moved) || this.dragged) {
        this.dragged = true;
        setTimeout(() => { this.dragged = false; }, 0);
      }
      drag = null;
      svg.classList.remove("dragging");
    };
    for (const kind of ["pointerup", "pointercancel", "pointerleave"]) svg.addEventListener(kind, end);
  }
}

// The seat of the row above or below nearest in x to `id`, or the next one along its
// row, for an arrow key: `rows` lists each row's seat ids, `rowOf` gives a seat's row
// and place in it, `xOf` a seat's x.
export function neighbour(rows, rowOf, xOf, id, key) {
  const [r, i] = rowOf.get(id);
  const row = rows[r];
  if (key === "ArrowLeft") return row[Math.max(0, i - 1)];
  if (key === "ArrowRight") return row[Math.min(row.length - 1, i + 1)];
  const target = rows[key === "ArrowUp" ? r - 1 : r + 1];
  if (!target) return id;
  const x = xOf(id);
  let best = target[0];
  for (const other of target) if (Math.abs(xOf(other) - x) < Math.abs(xOf(best) - x)) best = other;
  return best;
}

// The keyboard on a map drawn by `draw`: one seat at a time is in the tab order (a roving
// tabindex); arrow keys move it, Enter or Space calls `choose(id, el, event)`, and each move
// calls `moved(from, to, event)` (the console extends its selection with Shift).
export class SeatKeys {
  constructor(svg, { choose, moved = () => {} }) {
    this.drawn = { els: new Map(), rows: [], rowOf: new Map() };
    this.focusId = null;
    svg.addEventListener("keydown", (e) => {
      const el = e.target.closest(".seat");
      if (!el) return;
      const id = el.dataset.seatId;
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        choose(id, el, e);
      } else if (e.key.startsWith("Arrow")) {
        e.preventDefault();
        const next = this.next(id, e.key);
        this.rove(next, true);
        if (next !== id) moved(id, next, e);
      }
    });
  }

  // A new drawing: the tab stop goes to `first` (a seat id), or stays where it was.
  reset(drawn, first) {
    this.drawn = drawn;
    const keep = this.focusId && drawn.els.has(this.focusId) ? this.focusId : first;
    this.focusId = null;
    if (keep) this.rove(keep, false);
  }

  next(id, key) {
    const { rows, rowOf, els } = this.drawn;
    return neighbour(rows, rowOf, (seat) => Number(els.get(seat).getAttribute("cx")), id, key);
  }

  // Makes `id` the seat in the tab order, focused if `focus`.
  rove(id, focus) {
    const els = this.drawn.els;
    if (this.focusId && els.has(this.focusId)) els.get(this.focusId).setAttribute("tabindex", "-1");
    const el = els.get(id);
    if (!el) return;
    this.focusId = id;
    el.setAttribute("tabindex", "0");
    if (focus) el.focus();
  }
}
