// The event's map in organizer mode: seats picked by click (shift-click adds or removes
// one), by a dragged box (added with shift), by section, or with the keyboard (arrow keys
// move, Enter or Space picks or unpicks, Shift with an arrow extends the pick), then put on
// sale as a ticket type (in a sales channel, if chosen) or held back. Without the toolbar
// (a key that may not change the catalog) the map only shows the seats; either way its
// picks are the new seats of an order's move.

import { esc } from "../core/format.js";
import { draw } from "../core/hall.js";
import { SeatKeys } from "../core/viewport.js";
import { $, api, errorBox } from "./shared.js";

const STATUS_NAMES = { available: "available", held: "held", sold: "sold", resale: "listed for resale", not_for_sale: "held back" };

// The organizer's map of the event at `path`; `typeName` and `typeColour` by ticket type
// code. Answers `{show(list, shapes), status(id, status), sectionName, picked(), clear()}`
// for the stream to drive it (`sectionName` by section id, as the map's rows name them;
// `picked()` the seats picked, in the map's order).
export function organizerMap(path, { typeName, typeColour }) {
  const svg = $("map");
  const editable = !!document.querySelector("[data-action=put-on-sale]");
  const seats = { list: [], byId: new Map(), el: new Map(), picked: new Set() };
  const sectionName = new Map();
  const named = (s, status) => `${s.label}, ${STATUS_NAMES[status] || status}${s.ticket_type ? ", " + (typeName.get(s.ticket_type) || s.ticket_type) : ""}`;
  const keys = new SeatKeys(svg, {
    choose: (id) => {
      if (!seats.picked.delete(id)) seats.picked.add(id);
      showPicked();
    },
    moved: (from, to, e) => {
      if (!e.shiftKey) return;
      seats.picked.add(from);
      seats.picked.add(to);
      showPicked();
    },
  });

  const show = (list, shapes) => {
    seats.list = list;
    seats.byId = new Map(list.map((s) => [s.id, s]));
    const drawn = draw(svg, list, shapes, {
      colour: (s) => (s.ticket_type ? typeColour.get(s.ticket_type) : "#fff"),
      attributes: (s) => `role="checkbox" aria-checked="false" tabindex="-1" aria-label="${esc(named(s, s.status))}"`,
    });
    seats.el = drawn.els;
    keys.reset(drawn, list.length ? list[0].id : null);
    seats.picked = new Set([...seats.picked].filter((id) => seats.el.has(id)));
    for (const s of list) if (!sectionName.has(s.section)) sectionName.set(s.section, s.label.split(", Row ")[0]);
    if (editable) {
      const chosen = $("pick-section").value;
      $("pick-section").innerHTML = `<option value="">…</option>` + [...sectionName.entries()].map(([sid, name]) =>
        `<option value="${esc(sid)}" ${sid === chosen ? "selected" : ""}>${esc(name)}</option>`).join("");
    }
    showPicked();
  };

  // A change from the stream: the seat's status and its name.
  const status = (id, now) => {
    const el = seats.el.get(id);
    if (!el) return;
    el.dataset.status = now;
    const seat = seats.byId.get(id);
    if (seat) el.setAttribute("aria-label", named(seat, now));
  };

  const showPicked = () => {
    for (const [sid, el] of seats.el) {
      const picked = seats.picked.has(sid);
      el.classList.toggle("picked", picked);
      el.setAttribute("aria-checked", String(picked));
    }
    if (!editable) return;
    const n = seats.picked.size;
    const type = document.querySelector("select[name=ticket_type]");
    const typeLabel = typeName.get(type.value) || "";
    $("picked").textContent = n ? `${n} seat${n === 1 ? "" : "s"} selected` : "No seats selected";
    const sale = document.querySelector("[data-action=put-on-sale]");
    const back = document.querySelector("[data-action=hold-back]");
    sale.disabled = back.disabled = $("clear").disabled = !n || !type.value;
    sale.textContent = n ? `Put ${n} on sale as ${typeLabel}` : "Put on sale";
    back.textContent = n ? `Hold back ${n}` : "Hold back";
  };

  // The pointer: a click picks one seat, shift-click adds or removes one, a dragged box
  // picks every seat in it (added to the pick with shift).
  let band = null;
  const at = (e) => {
    const p = svg.createSVGPoint();
    p.x = e.clientX; p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };
  svg.addEventListener("pointerdown", (e) => {
    const seat = e.target.closest(".seat");
    band = { from: at(e), shift: e.shiftKey, seat: seat && seat.dataset.seatId, el: null };
    if (seat) keys.rove(seat.dataset.seatId, true);
    try { svg.setPointerCapture(e.pointerId); } catch { /* a pointer the browser does not track */ }
  });
  svg.addEventListener("pointermove", (e) => {
    if (!band) return;
    const p = at(e);
    if (!band.el && Math.hypot(p.x - band.from.x, p.y - band.from.y) < 0.3) return;
    if (!band.el) {
      band.el = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      band.el.setAttribute("class", "band");
      svg.append(band.el);
    }
    const x = Math.min(p.x, band.from.x), y = Math.min(p.y, band.from.y);
    band.el.setAttribute("x", x); band.el.setAttribute("y", y);
    band.el.setAttribute("width", Math.abs(p.x - band.from.x)); band.el.setAttribute("height", Math.abs(p.y - band.from.y));
    band.to = p;
  });
  svg.addEventListener("pointerup", () => {
    if (!band) return;
    if (band.el) {
      const [x0, x1] = [band.from.x, band.to.x].sort((a, b) => a - b);
      const [y0, y1] = [band.from.y, band.to.y].sort((a, b) => a - b);
      if (!band.shift) seats.picked.clear();
      for (const [sid, el] of seats.el) {
        const cx = Number(el.getAttribute("cx")), cy = Number(el.getAttribute("cy"));
        if (cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1) seats.picked.add(sid);
      }
      band.el.remove();
    } else if (band.seat) {
      if (band.shift) {
        if (!seats.picked.delete(band.seat)) seats.picked.add(band.seat);
      } else {
        seats.picked = new Set([band.seat]);
      }
    }
    band = null;
    showPicked();
  });
  const picked = () => seats.list.filter((s) => seats.picked.has(s.id)).map((s) => s.id);
  const clear = () => { seats.picked.clear(); showPicked(); };
  if (!editable) return { show, status, sectionName, picked, clear };
  $("clear").onclick = () => { seats.picked.clear(); showPicked(); };
  document.querySelector("select[name=ticket_type]").onchange = showPicked;
  $("pick-section").onchange = (e) => {
    if (!e.target.value) return;
    seats.picked = new Set(seats.list.filter((s) => s.section === e.target.value).map((s) => s.id));
    showPicked();
  };

  const change = async (action) => {
    const ids = [...seats.picked];
    const type = document.querySelector("select[name=ticket_type]").value;
    const channelSelect = document.querySelector("select[name=channel]");
    const channel = channelSelect && channelSelect.value;
    const entry = { ticket_type: type, seats: ids, ...(channel ? { channel } : {}) };
    try {
      const answer = action === "sale"
        ? await api("PUT", `${path}/allocations`, { json: { allocations: [entry] } })
        : await api("POST", `${path}/allocations/withdraw`, { json: { seats: ids } });
      const channelName = channel ? ` in ${channelSelect.selectedOptions[0].textContent}` : "";
      const done = action === "sale" ? `put on sale as ${typeName.get(type)}${channelName}` : "held back";
      const skipped = answer.skipped.length
        ? `<p>Left as they are (held or sold): ${answer.skipped.map((s) => `${esc(s.label)} (${esc(s.status)})`).join("; ")}.</p>`
        : "";
      $("map-result").innerHTML = `<div class="ok" role="status"><p>${answer.changed} seat${answer.changed === 1 ? "" : "s"} ${done}.</p>${skipped}</div>`;
      seats.picked.clear();
      showPicked();
    } catch (e) {
      $("map-result").innerHTML = errorBox(e);
    }
  };
  document.querySelector("[data-action=put-on-sale]").onclick = () => change("sale");
  document.querySelector("[data-action=hold-back]").onclick = () => change("withdraw");

  return { show, status, sectionName, picked, clear };
}
