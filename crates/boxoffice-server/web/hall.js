// Drawing a hall on the seat map: everything but the seats' own circles. Coordinates come
// from the venue in its own units (seats 1 apart, or pretix pixels); the map draws in
// seat units (neighbouring seats of a row 1 apart), so the same page fits both. Shapes
// (stage, areas, labels) go behind the seats, row labels at both ends of every row,
// section titles where they overlap no seat, label or other title, and wheelchair spaces,
// companion seats and restricted views get a mark. Pure functions, SVG text in and out,
// but for `draw`, which puts a whole hall into an SVG element.
"use strict";

const Hall = (() => {
  const SEAT_R = 0.4;
  const TITLE_SIZE = 0.9;
  const ROW_LABEL_SIZE = 0.55;

  function esc(text) {
    return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" })[c]);
  }

  const num = (v) => Math.round(v * 1000) / 1000;

  // The venue's unit: the usual distance between neighbouring seats of a row.
  function unitOf(seats) {
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
  function marks(seat, cx, cy) {
    const at = `x="${num(cx)}" y="${num(cy)}"`;
    let out = "";
    if (seat.accessible) out += `<use href="#mark-wheelchair" ${at} class="seat-mark" aria-hidden="true"/>`;
    if (seat.companion) out += `<use href="#mark-companion" ${at} class="seat-mark" aria-hidden="true"/>`;
    if (seat.restricted_view) out += `<use href="#mark-restricted" ${at} class="seat-mark" aria-hidden="true"/>`;
    return out;
  }

  // The marks' drawings, for the map's defs.
  const MARK_DEFS = `<g id="mark-wheelchair" fill="none" stroke="#fff" stroke-width="0.055" stroke-linecap="round" stroke-linejoin="round">` +
    `<circle cx="0.03" cy="-0.25" r="0.065" fill="#fff" stroke="none"/><path d="M0.01 -0.15V0.03H0.15L0.21 0.2"/>` +
    `<path d="M-0.08 -0.04A0.15 0.15 0 1 0 0.12 0.16"/></g>` +
    `<circle id="mark-companion" r="0.11" fill="#fff"/>` +
    `<path id="mark-restricted" d="M-0.2 0.2L0.2 -0.2" stroke="#fff" stroke-width="0.08" stroke-linecap="round"/>`;

  // What a seat's attributes say, for its accessible name.
  function spoken(seat) {
    const said = [];
    if (seat.accessible) said.push("wheelchair space");
    if (seat.companion) said.push("companion seat");
    if (seat.restricted_view) said.push("restricted view");
    return said;
  }

  // Draws `seats` (each with id, label, section, row, x, y, status) and `shapes` into
  // `svg`, each seat filled with `colour(seat)` and given `attributes(seat)` (more
  // attributes of its circle, as text); returns the seats' circles by id.
  function draw(svg, seats, shapeList, colour, attributes = () => "") {
    const unit = unitOf(seats);
    const taken = new Taken();
    const drawn = shapes(shapeList, unit, taken);
    const R = SEAT_R;
    let box = null;
    const grow = (b) => {
      if (!box) { box = { ...b }; return; }
      const x = Math.min(box.x, b.x), y = Math.min(box.y, b.y);
      box = { x, y, w: Math.max(box.x + box.w, b.x + b.w) - x, h: Math.max(box.y + box.h, b.y + b.h) - y };
    };
    const rows = [];
    const parts = [];
    let key = null;
    for (const s of seats) {
      const cx = s.x / unit, cy = s.y / unit;
      if (s.section + "\u0000" + s.row !== key) {
        key = s.section + "\u0000" + s.row;
        rows.push({ section: s.section, sectionName: s.label.split(", Row ")[0], label: s.row, seats: [], box: null });
      }
      const row = rows[rows.length - 1];
      row.seats.push({ cx, cy });
      const b = { x: cx - R, y: cy - R, w: 2 * R, h: 2 * R };
      row.box = row.box ? { x: Math.min(row.box.x, b.x), y: Math.min(row.box.y, b.y),
        w: Math.max(row.box.x + row.box.w, b.x + b.w) - Math.min(row.box.x, b.x),
        h: Math.max(row.box.y + row.box.h, b.y + b.h) - Math.min(row.box.y, b.y) } : b;
      taken.add(b);
      grow(b);
      parts.push(`<circle class="seat" cx="${cx}" cy="${cy}" r="${R}" fill="${colour(s)}" data-seat-id="${esc(s.id)}" data-status="${esc(s.status)}" ${attributes(s)}><title>${esc([s.label, ...spoken(s)].join(", "))}</title></circle>${marks(s, cx, cy)}`);
    }
    const labels = rowLabels(rows, taken);
    const titled = titles(rows, taken);
    for (const b of [...drawn.boxes, ...titled.boxes]) grow(b);
    box = box || { x: 0, y: 0, w: 1, h: 1 };
    svg.innerHTML = `<defs>${MARK_DEFS}</defs>${drawn.svg}${parts.join("")}${labels}${titled.svg}`;
    const pad = 1.5;
    svg.setAttribute("viewBox", `${box.x - pad} ${box.y - pad} ${box.w + 2 * pad} ${box.h + 2 * pad}`);
    svg.style.aspectRatio = `${box.w + 2 * pad} / ${box.h + 2 * pad}`;
    const byId = new Map();
    for (const el of svg.querySelectorAll(".seat")) byId.set(el.dataset.seatId, el);
    return byId;
  }

  // The seat of the row above or below nearest in x to `id`, or the next one along its
  // row, for an arrow key: `rows` lists each row's seat ids, `rowOf` gives a seat's row
  // and place in it, `xOf` a seat's x.
  function neighbour(rows, rowOf, xOf, id, key) {
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

  const STATUS_LETTERS = { a: "available", h: "held", s: "sold", n: "not_for_sale" };

  // The statuses of a stream's `statuses` event, one per seat of the layout: runs of a
  // letter and a length (`a120h2s`).
  function statuses(runs, count) {
    const out = new Array(count);
    const pattern = /([ahsn])(\d*)/g;
    let i = 0, run;
    while ((run = pattern.exec(runs)) && i < count) {
      const end = Math.min(count, i + (run[2] ? Number(run[2]) : 1));
      out.fill(STATUS_LETTERS[run[1]], i, end);
      i = end;
    }
    if (i !== count) throw new Error("The seat map did not load whole; reload the page.");
    return out;
  }

  // How wide a seat must be on screen, in CSS pixels, for a finger to tap it.
  const TAPPABLE_PX = 28;

  // Zooming and panning a map: the wheel zooms at the pointer, one pointer drags, two
  // pinch, and a finger on seats smaller than a fingertip zooms in on them first.
  class Viewport {
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

  // Server-Sent Events from `url`, each event's name mapped by `on` to a handler of
  // {data}: through EventSource, or, with a bearer `token` (a sales channel's buyer, who
  // sees the channel's seats), through fetch, which can send it. Either way a stream that
  // ends is opened again after two seconds (and starts with a fresh snapshot). The answer
  // has close().
  function events(url, token, on) {
    if (!token) {
      const source = new EventSource(url);
      for (const [name, handle] of Object.entries(on)) source.addEventListener(name, handle);
      return source;
    }
    let stopped = false;
    let controller = null;
    const dispatch = (block) => {
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length && on[name]) on[name]({ data: data.join("\n") });
    };
    (async () => {
      while (!stopped) {
        controller = new AbortController();
        try {
          const answer = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" }, signal: controller.signal });
          if (!answer.ok || !answer.body) throw new Error(`the stream answered ${answer.status}`);
          const reader = answer.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = "";
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
              dispatch(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
            }
          }
        } catch { /* ended or refused: open it again */ }
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    })();
    return { close() { stopped = true; if (controller) controller.abort(); } };
  }

  return { SEAT_R, unitOf, Taken, shapes, rowLabels, titles, marks, MARK_DEFS, spoken, textBox, draw,
    neighbour, Viewport, statuses, events };
})();
