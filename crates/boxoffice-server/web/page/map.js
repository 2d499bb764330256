// The buyer's map: every seat one SVG circle carrying data-seat-id and data-status, drawn
// by the hall's `draw`, kept live by the event stream; changes touch single elements; one
// listener per kind of input. Choosing seats (click, tap, keyboard), what the buyer's own
// seats look like, holds that lapse by themselves, and the legend.

import { DEFS, PALETTE, draw, spoken } from "../core/hall.js";
import { Viewport, SeatKeys } from "../core/viewport.js";
import { countdown, esc, money } from "../core/format.js";
import { free } from "../core/stream.js";
import { $, state, say, changed, typeOf, buyer, timings, timed } from "./shared.js";

function ariaLabel(s) {
  const type = s.ticket_type ? typeOf(s.ticket_type) : null;
  const price = type ? type.name + ", " + money(s.price_cents, type.currency) : "not for sale";
  return [s.label, ...spoken(s), price].join(", ");
}

const colour = (s) => (s.ticket_type ? PALETTE[state.typeIndex.get(s.ticket_type) ?? 0] : "#fff");
const seatAttributes = (s) => `role="checkbox" aria-checked="false" tabindex="-1" aria-label="${esc(ariaLabel(s))}"`;

// A `statuses` snapshot: the map drawn anew, or, when its seats are the ones drawn, each
// seat's status set.
export function applySnapshot({ seats, shapes }) {
  const first = state.seats.size === 0;
  const sameSeats = !first && seats.length === state.seats.size &&
    seats.every((s) => state.seats.has(s.id) && state.seats.get(s.id).seat.ticket_type === s.ticket_type);
  if (sameSeats) {
    for (const s of seats) setStatus(s.id, s.status, s.held_until);
  } else {
    drawMap(seats, shapes);
  }
  for (const id of [...state.selected]) {
    if (!isFree(id)) state.selected.delete(id);
  }
  changed();
  if (first) {
    timed("mapDrawn");
    if (timings) requestAnimationFrame(() => timed("firstPaint"));
  }
}

function drawMap(seats, shapes) {
  const drawn = draw($("map"), seats, shapes, { colour, attributes: seatAttributes, timings });
  timed("built");
  timed("parsed");
  state.seats = new Map();
  for (const s of seats) {
    state.seats.set(s.id, { el: drawn.els.get(s.id), seat: s, status: s.status, heldUntil: s.held_until ? Date.parse(s.held_until) : null });
  }
  timed("indexed");
  markMine();
  timed("marked");
  state.viewport.reset(drawn.fit);
  renderLegend(seats);
  const firstFree = seats.find((s) => free(s.status)) || seats[0];
  state.keys.reset(drawn, firstFree && firstFree.id);
}

export function setStatus(id, status, heldUntil) {
  const entry = state.seats.get(id);
  if (!entry) return;
  entry.status = status;
  entry.heldUntil = heldUntil ? Date.parse(heldUntil) : null;
  entry.el.setAttribute("data-status", status);
  if (!free(status) && state.selected.has(id) && !isMine(id) && !state.pending.has(id)) {
    state.selected.delete(id);
    entry.el.setAttribute("aria-checked", "false");
    say(entry.seat.label + " just went", "warn");
  }
  entry.el.classList.toggle("mine", isMine(id) && status === "held");
  entry.el.setAttribute("aria-disabled", String(!free(status) && !isMine(id)));
}

// The buyer's own: held by their hold, or kept for their order while they pay.
function isMine(id) {
  return (!!state.hold && state.hold.seats.includes(id)) || (!!state.paying && state.paying.includes(id));
}

function isFree(id) {
  const e = state.seats.get(id);
  return !!e && free(e.status);
}

// Marks the seats of the buyer's hold and selection, and unmarks any others marked before.
export function markMine() {
  for (const el of [...$("map").querySelectorAll(".seat.mine, .seat[aria-checked=\"true\"]")]) {
    el.classList.remove("mine");
    el.setAttribute("aria-checked", "false");
  }
  for (const id of [...(state.hold ? state.hold.seats : []), ...(state.paying || []), ...state.selected]) {
    const e = state.seats.get(id);
    if (!e) continue;
    e.el.classList.toggle("mine", isMine(id) && e.status === "held");
    e.el.setAttribute("aria-checked", String(state.selected.has(id)));
  }
}

// Holds lapse without a message: their seats turn available at held_until.
export function expireHolds() {
  const now = Date.now();
  for (const [id, e] of state.seats) {
    if (e.status === "held" && e.heldUntil !== null && e.heldUntil <= now) setStatus(id, "available", null);
  }
  if (!state.hold) return;
  const left = Math.max(0, Math.round((state.hold.expiresAt - now) / 1000));
  $("countdown").textContent = countdown(left);
  if (left === 0) {
    state.hold = null;
    say("Your hold expired; the seats are back on sale.", "warn");
    state.selected.clear();
    markMine();
    changed();
  }
}

function toggle(id) {
  const entry = state.seats.get(id);
  if (!entry) return;
  if (state.hold) {
    say("Your seats are held: buy them, or release them to choose others.", "warn");
    return;
  }
  if (!buyer.token) {
    say("Holding seats needs a signed-in buyer.", "warn");
    return;
  }
  if (state.selected.has(id)) {
    state.selected.delete(id);
  } else if (!free(entry.status)) {
    say(entry.seat.label + " is " + entry.status.replace(/_/g, " ") + ".", "warn");
    return;
  } else if (state.selected.size >= state.event.max_seats_per_user) {
    say("You can choose at most " + state.event.max_seats_per_user + " seats.", "warn");
    return;
  } else {
    state.selected.add(id);
    say("");
  }
  entry.el.setAttribute("aria-checked", String(state.selected.has(id)));
  changed();
}

export function rove(id, focus) {
  state.keys.rove(id, focus);
}

export function wireMap() {
  const svg = $("map");
  state.viewport = new Viewport(svg);
  state.viewport.wire();
  state.keys = new SeatKeys(svg, { choose: (id) => toggle(id) });
  // On a phone the first tap on the whole hall zooms to where it fell: say so, once.
  let hinted = false;
  svg.addEventListener("click", (e) => {
    if (!state.viewport.tap(e)) {
      if (!state.viewport.dragged && !hinted) {
        hinted = true;
        const hint = $("map-hint");
        hint.textContent = "Zoomed in: now tap a seat to choose it.";
        hint.hidden = false;
        setTimeout(() => { hint.hidden = true; }, 4000);
      }
      return;
    }
    const el = e.target.closest(".seat");
    if (!el) return;
    rove(el.dataset.seatId, true);
    toggle(el.dataset.seatId);
  });
  $("zoom-in").onclick = () => state.viewport.zoomIn();
  $("zoom-out").onclick = () => state.viewport.zoomOut();
  $("zoom-fit").onclick = () => state.viewport.reset();
}

export function renderLegend(seats) {
  const swatch = (fill, extra, cls, mark) =>
    `<svg viewBox="-0.5 -0.5 1 1" aria-hidden="true">${DEFS}<circle r="0.4" class="seat ${cls || ""}" ${extra || ""} fill="${fill}"/>${mark ? `<use href="#${mark}"/>` : ""}</svg>`;
  const items = state.event.ticket_types.map((t) =>
    `<li>${swatch(PALETTE[state.typeIndex.get(t.code)])}${esc(t.name)} · ${esc(money(t.price_cents, t.currency))}</li>`);
  items.push(`<li>${swatch("#fff", "aria-checked=\"true\"")}Your choice</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"held\"", "mine")}Your hold</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"held\"")}Held</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"sold\"")}Sold</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"resale\"")}Resale: offered again by its buyer</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"not_for_sale\"")}Not for sale</li>`);
  const marked = (attr, mark, name) => {
    if ((seats || []).some((s) => s[attr])) items.push(`<li>${swatch("#5c6670", "", "", mark)}${name}</li>`);
  };
  marked("accessible", "mark-wheelchair", "Wheelchair space");
  marked("companion", "mark-companion", "Companion seat");
  marked("restricted_view", "mark-restricted", "Restricted view");
  $("legend").innerHTML = items.join("");
}
