// The element's standing areas: each general-admission area of the event with its price,
// the places left (kept live from the stream) and how many to book. What a booking's
// answer or problem means is the element's.

import { esc, money } from "../core/format.js";

// The areas drawn in `box` (nothing when the event has none), each form booking through
// `book(area, quantity)`; `text` the element's words, `locale` its money's.
export function standing(box, areas, text, locale, book) {
  box.innerHTML = areasHtml(areas, text, locale);
  for (const form of box.querySelectorAll("form")) {
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      form.book.disabled = true;
      await book(form.dataset.area, form.quantity.value);
      form.book.disabled = false;
    });
  }
}

function areasHtml(areas, text, locale) {
  if (!areas.length) return "";
  const area = (a) => `<form class="area" data-area="${esc(a.code)}">
      <p class="area-head"><span class="area-name">${esc(a.name)}</span>
        <span>${esc(text.each(money(a.price_cents, a.currency, locale)))} · <span data-ga-left="${esc(a.code)}">${esc(text.left(a.left))}</span></span></p>
      <label>${esc(text.places)} <input type="number" name="quantity" min="1" max="${Number(a.max_per_booking) || 1}" value="1" required></label>
      <button type="submit" name="book"${a.left > 0 ? "" : " disabled"}>${esc(text.book)}</button>
      <p class="area-result" role="status"></p></form>`;
  return `<section class="standing" part="standing" aria-label="${esc(text.standing)}"><h3>${esc(text.standing)}</h3>${areas.map(area).join("")}</section>`;
}

// A standing area's places left, as the stream tells them; none left, nothing to book.
export function showLeft(root, g, text) {
  const left = root.querySelector(`[data-ga-left="${CSS.escape(g.code)}"]`);
  if (!left) return;
  left.textContent = text.left(g.left);
  left.closest("form").book.disabled = g.left < 1;
}

// What a booking came to, said under its area: the places and total, or the refusal.
export function showBooked(root, area, text, answer, locale) {
  const form = root.querySelector(`.standing [data-area="${CSS.escape(String(area))}"]`);
  if (!form) return;
  form.querySelector(".area-result").textContent = answer.ok
    ? text.booked(answer.body.quantity, money(answer.body.total_cents, answer.body.currency, locale))
    : answer.body.detail || answer.body.code;
}
