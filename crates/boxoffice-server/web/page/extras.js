// Beside the seats: general admission areas booked by quantity, and the waiting list,
// whose offers of seats that came back arrive as a hold of the buyer's (their basket, with
// its countdown and Buy).

import { Problem } from "../core/api.js";
import { money, eventClock } from "../core/format.js";
import { $, state, api, fail, reveal, ordered, onChange } from "./shared.js";
import { took, renderBasket, showOrder } from "./basket.js";
import { backInLine, turnOver } from "./line.js";

const WAITLIST_KEY = "boxoffice.waitlist."; // + event id: the buyer's entry id
const WAITLIST_POLL_MS = 3000;

export function wireWaitlist() {
  const id = state.event.id;
  const path = `/v1/events/${encodeURIComponent(id)}/waitlist`;
  // The line is offered once fewer seats are free than a buyer may take (and to a buyer
  // already in it): on a house with seats to spare it is no answer to anything.
  const offerLine = () => {
    $("waitlist").hidden = !inLine && !nearlyGone();
  };
  onChange(offerLine);
  offerLine();
  $("waitlist-quantity").innerHTML = Array.from({ length: state.event.max_seats_per_user },
    (_, i) => `<option>${i + 1}</option>`).join("");
  $("waitlist-form").onsubmit = async (e) => {
    e.preventDefault();
    try {
      const entry = await api("POST", path, { quantity: Number($("waitlist-quantity").value) });
      sessionStorage.setItem(WAITLIST_KEY + id, entry.entry_id);
      if (await showEntry(entry)) schedule();
    } catch (err) { fail(err); }
  };
  $("waitlist-leave").onclick = async () => {
    const entry = sessionStorage.getItem(WAITLIST_KEY + id);
    try {
      if (entry) await api("DELETE", `${path}/${encodeURIComponent(entry)}`);
    } catch (err) {
      if (!(err instanceof Problem && err.status === 404)) return fail(err);
    }
    sessionStorage.removeItem(WAITLIST_KEY + id);
    showEntry(null);
  };
  // One poll at a time, every few seconds while the buyer waits.
  let timer = null;
  const schedule = () => { clearTimeout(timer); timer = setTimeout(poll, WAITLIST_POLL_MS); };
  const poll = async () => {
    const entry = sessionStorage.getItem(WAITLIST_KEY + id);
    if (!entry || state.event.id !== id) return;
    try {
      if (await showEntry(await api("GET", `${path}/${encodeURIComponent(entry)}`))) schedule();
    } catch { schedule(); }
  };
  showEntry(null);
  poll();
}

// Whether the buyer is in line or offered seats now.
let inLine = false;

// Whether fewer seats are free than one buyer may take.
function nearlyGone() {
  if (!state.seats.size) return false; // not known yet
  let free = 0;
  for (const e of state.seats.values()) {
    if (e.status === "available" && ++free >= state.event.max_seats_per_user) return false;
  }
  return true;
}

// Shows where the buyer's entry stands; answers whether it is still in line.
async function showEntry(entry) {
  const status = entry ? entry.status : null;
  const waiting = status === "waiting";
  inLine = waiting || status === "offered";
  if (inLine) $("waitlist").hidden = false;
  $("waitlist-form").hidden = waiting || status === "offered";
  $("waitlist-leave").hidden = !waiting;
  const text = $("waitlist-text");
  if (waiting) {
    const n = entry.quantity;
    text.textContent = `You are number ${entry.position} in line for ${n === 1 ? "a seat" : n + " seats"}. ` +
      "Keep this page open: seats that come back are offered to you here.";
    return true;
  }
  if (status === "offered") {
    const until = eventClock(entry.offer.expires_at, state.event.time_zone);
    text.textContent = `Seats came back for you: ${entry.offer.seats.map((s) => s.label).join("; ")}. Buy them by ${until}.`;
    try {
      const hold = await api("GET", `/v1/events/${encodeURIComponent(state.event.id)}/holds/${entry.offer.hold_token}`);
      state.selected = new Set(hold.seats.map((s) => s.id));
      took(hold);
      // The hold outlives the offer a little (for the server to pass it on): the
      // countdown is the offer's.
      state.hold.expiresAt = Date.parse(entry.offer.expires_at);
      state.hold.offer = true;
      renderBasket();
    } catch (e) { fail(e); }
    return false;
  }
  if (entry) sessionStorage.removeItem(WAITLIST_KEY + state.event.id);
  text.textContent = status === "lapsed"
    ? "Your offer was not bought in time and went to the next in line. You may join again."
    : "Nothing that suits you? Wait in line: seats that come back are offered to the first in line.";
  return false;
}

// The standing areas: places booked by quantity, the places left kept live.
export function renderGa(canBook) {
  const box = $("ga");
  box.replaceChildren();
  for (const a of state.event.ga_areas) {
    const div = document.createElement("div");
    div.className = "ga-area";
    div.innerHTML = `<h3></h3><p><span class="price"></span> · <span data-ga-left></span> left</p>
<form><label>Places <input type="number" min="1" value="1" required></label><button type="submit">Book</button></form>
<p class="ga-result" role="status"></p>`;
    div.querySelector("h3").textContent = a.name;
    div.querySelector(".price").textContent = money(a.price_cents, a.currency) + " each";
    const left = div.querySelector("[data-ga-left]");
    left.dataset.gaLeft = a.code;
    left.textContent = a.left;
    const input = div.querySelector("input");
    input.max = a.max_per_booking;
    input.setAttribute("aria-label", "Places in " + a.name);
    const form = div.querySelector("form");
    if (!canBook) form.remove();
    form.onsubmit = async (ev) => {
      ev.preventDefault();
      const result = div.querySelector(".ga-result");
      const button = form.querySelector("button");
      button.disabled = true;
      try {
        const b = await api("POST", `/v1/events/${state.event.id}/bookings`, { area: a.code, quantity: Number(input.value) });
        // With a payment window the places are the buyer's until pay_by, while they pay
        // (on --demo, the test payment page); without one the booking is paid, its
        // tickets shown.
        if (b.status === "pending_payment") {
          location.assign("/pay/" + encodeURIComponent(b.booking_id));
          return;
        }
        result.textContent = "Booked " + b.quantity + " · " + money(b.total_cents, b.currency);
        showOrder(b);
        reveal($("order"));
        ordered();
      } catch (e) {
        if (turnOver(e)) await backInLine("Your turn had ended; it is your turn again. Book now.");
        else result.textContent = e instanceof Problem ? e.message : "Something went wrong.";
      } finally {
        button.disabled = false;
      }
    };
    box.append(div);
  }
}

// A standing area's places left, from the stream.
export function gaLeft(g) {
  const left = document.querySelector(`[data-ga-left="${CSS.escape(g.code)}"]`);
  if (left) left.textContent = g.left;
}
