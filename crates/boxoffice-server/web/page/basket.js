// The buyer's basket: seats chosen on the map, or the best available chosen by the server,
// held all or nothing; the hold's countdown, extended, bought or released; and the order
// box, also for an order paid elsewhere.

import { Problem } from "../core/api.js";
import { money, eventClock } from "../core/format.js";
import { $, state, buyer, api, say, fail, onChange, typeOf, reveal, ordered } from "./shared.js";
import { setStatus, markMine, expireHolds, rove } from "./map.js";
import { backInLine, passEnded, turnOver } from "./line.js";
import { renderTickets } from "./tickets.js";

export function renderBasket() {
  const list = $("basket");
  list.replaceChildren();
  const ids = state.hold ? state.hold.seats : [...state.selected];
  let total = 0, currency = null;
  for (const id of ids) {
    const s = state.seats.get(id)?.seat;
    if (!s) continue;
    const type = s.ticket_type ? typeOf(s.ticket_type) : null;
    const li = document.createElement("li");
    li.dataset.seatId = id;
    const name = document.createElement("span");
    name.textContent = s.label + (type ? " (" + type.name + ")" : "");
    const price = document.createElement("span");
    price.textContent = type ? money(s.price_cents, type.currency) : "";
    li.append(name, price);
    list.append(li);
    if (type) { total += s.price_cents; currency = type.currency; }
  }
  if (!ids.length) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = "Choose seats on the map.";
    list.append(li);
  }
  $("total").textContent = ids.length ? "Total " + money(total, currency || "EUR") : "";
  const held = !!state.hold;
  // Without a buyer the page is for reading: nothing to hold with.
  // While seats are held the choice stays in sight, waiting for the hold to end.
  $("best").hidden = !buyer.token;
  $("best-hold").disabled = held;
  $("best-busy").hidden = !held;
  $("hold").hidden = held || !buyer.token;
  $("hold").disabled = !state.selected.size || state.pending.size > 0;
  for (const b of ["extend", "buy", "release"]) $(b).hidden = !held;
  // A waiting-list offer is bought by its deadline: it cannot be extended.
  if (held && state.hold.offer) $("extend").hidden = true;
  $("hold-info").hidden = !held;
}

onChange(renderBasket);

export function wirePanel() {
  $("hold").onclick = holdSelection;
  const quantity = $("best-quantity");
  quantity.replaceChildren();
  for (let n = 1; n <= state.event.max_seats_per_user; n++) quantity.append(new Option(String(n), String(n)));
  quantity.value = String(Math.min(2, state.event.max_seats_per_user));
  const type = $("best-type");
  type.replaceChildren(new Option("Any", ""));
  for (const t of state.event.ticket_types) type.append(new Option(t.name + " · " + money(t.price_cents, t.currency), t.code));
  $("best").onsubmit = (ev) => { ev.preventDefault(); holdBest(); };
  $("extend").onclick = () => once("extend", async () => {
    const r = await api("POST", `/v1/events/${state.event.id}/holds/${state.hold.token}/extend`);
    state.hold.expiresAt = Date.parse(r.expires_at);
    say("Extended.", "ok");
    expireHolds();
  });
  $("buy").onclick = () => once("buy", async () => {
    const order = await api("POST", `/v1/events/${state.event.id}/orders`, { hold_token: state.hold.token });
    // An event with a payment window: the seats are the buyer's until pay_by, while they
    // pay (on --demo, the test payment page).
    if (order.status === "pending_payment") {
      location.assign("/pay/" + encodeURIComponent(order.order_id));
      return;
    }
    showOrder(order);
    reveal($("order"));
    ordered();
    passEnded();
    state.hold = null;
    state.selected.clear();
    say("");
    markMine();
    renderBasket();
  });
  $("release").onclick = () => once("release", async () => {
    try {
      await api("DELETE", `/v1/events/${state.event.id}/holds/${state.hold.token}`);
    } catch (e) { if (!(e instanceof Problem && e.status === 404)) throw e; }
    const mine = state.hold.seats;
    state.hold = null;
    state.selected.clear();
    for (const id of mine) if (state.seats.get(id)?.status === "held") setStatus(id, "available", null);
    markMine();
    const hadTurn = !!state.pass;
    passEnded();
    say(hadTurn ? "Released. That ended your turn: choosing again means a new place in line." : "Released.", "ok");
    renderBasket();
  });
}

// Runs a button's call with the button disabled, so a buyer waiting out a busy server does
// not send it twice.
async function once(id, call) {
  const button = $(id);
  button.disabled = true;
  try {
    await call();
  } catch (e) {
    fail(e);
  } finally {
    button.disabled = false;
  }
}

// The order box (on the map's panel, or `box` on the order's own page): what was bought,
// an order of seats or a booking of standing places, or what became of one paid
// elsewhere; once paid, its tickets. Times in the event's zone (`zone`, or the event
// shown).
export function showOrder(order, box = $("order"), zone = state.event && state.event.time_zone) {
  const booking = !!order.booking_id;
  const id = booking ? order.booking_id : order.order_id;
  box.hidden = false;
  box.textContent = "";
  const title = document.createElement("strong");
  const heading = {
    paid: booking ? "Booking confirmed" : "Order confirmed",
    pending_payment: "Awaiting payment",
    expired: "Payment window closed",
    cancelled: booking ? "Booking cancelled" : "Order cancelled",
  };
  title.textContent = heading[order.status] || order.status;
  const lines = document.createElement("ul");
  for (const text of booking ? [placesIn(order)] : order.seats.map((s) => s.label)) {
    const li = document.createElement("li");
    li.textContent = text;
    lines.append(li);
  }
  const total = document.createElement("p");
  const amount = money(order.total_cents, order.currency);
  const said = {
    paid: () => "Paid " + amount,
    pending_payment: () => amount + " to pay by " + eventClock(order.pay_by, zone),
    expired: () => `Not paid in time: the ${booking ? "places" : "seats"} went back on sale`,
    cancelled: () => "Cancelled",
  }[order.status];
  total.textContent = (said ? said() : order.status) + (booking ? " · booking " : " · order ") + id;
  box.append(title, lines, total);
  if (order.status === "pending_payment") {
    const pay = document.createElement("a");
    pay.href = "/pay/" + encodeURIComponent(id);
    pay.className = "pay-now";
    pay.textContent = "Pay now";
    box.append(pay);
  }
  const tickets = document.createElement("div");
  tickets.className = "tickets";
  box.append(tickets);
  renderTickets(order, tickets, zone).catch(fail);
  box.dataset.orderId = id;
  box.dataset.kind = booking ? "booking" : "order";
  box.dataset.status = order.status;
  if (!state.event || booking) return;
  state.paying = order.status === "pending_payment" ? order.seats.map((s) => s.id) : null;
  markMine();
}

// "2 places, Standing floor": a booking's line.
export function placesIn(booking) {
  const area = state.event && state.event.ga_areas.find((a) => a.code === booking.area);
  const n = booking.quantity;
  return `${n === 1 ? "1 place" : n + " places"}, ${area ? area.name : booking.area}`;
}

async function holdSelection() {
  const seats = [...state.selected];
  if (!seats.length || state.pending.size) return;
  state.pending = new Set(seats);
  renderBasket();
  try {
    took(await api("POST", `/v1/events/${state.event.id}/holds`, { seats }));
    say("Held. Buy before the time runs out.", "ok");
  } catch (e) {
    if (turnOver(e)) await backInLine("Your turn had ended; it is your turn again. Hold your seats now.");
    else refused(e);
  } finally {
    state.pending = new Set();
  }
  renderBasket();
}

// Asks the server for the best seats free now; what it holds replaces the selection.
async function holdBest() {
  const quantity = Number($("best-quantity").value);
  const type = $("best-type").value;
  const ask = { quantity };
  if (type) ask.ticket_type = type;
  $("best-hold").disabled = true;
  try {
    const hold = await api("POST", `/v1/events/${state.event.id}/holds`, { best_available: ask });
    state.selected = new Set(hold.seats.map((s) => s.id));
    took(hold);
    const n = hold.seats.length;
    say(hold.adjacent || n === 1
      ? `Held the best ${n === 1 ? "seat" : n + " seats together"}. Buy before the time runs out.`
      : `No ${n} seats together are free; held the ${n} closest. Buy before the time runs out.`, "ok");
    if (state.seats.has(hold.seats[0].id)) rove(hold.seats[0].id, false);
  } catch (e) {
    if (e instanceof Problem && e.code === "seat_unavailable") {
      say(`Not ${quantity === 1 ? "a seat" : quantity + " seats"}${type ? " of that type" : ""} left; try fewer.`, "warn");
    } else if (turnOver(e)) {
      await backInLine("Your turn had ended; it is your turn again.");
    } else {
      refused(e);
    }
  } finally {
    $("best-hold").disabled = false;
  }
  renderBasket();
}

// The buyer's new hold: its seats turn held and theirs.
export function took(hold) {
  state.hold = { token: hold.hold_token, expiresAt: Date.parse(hold.expires_at), seats: hold.seats.map((s) => s.id) };
  for (const id of state.hold.seats) setStatus(id, "held", hold.expires_at);
  markMine();
  expireHolds();
}

// A refused hold: seats that just went leave the selection (the stream shows who has them).
function refused(e) {
  if (e instanceof Problem && e.code === "seat_unavailable" && e.body.seats && e.body.seats.length) {
    const gone = e.body.seats;
    for (const s of gone) {
      state.selected.delete(s.id);
      const entry = state.seats.get(s.id);
      if (entry) entry.el.setAttribute("aria-checked", "false");
    }
    say(gone.map((s) => s.label).join("; ") + " just went.", "warn");
  } else {
    fail(e);
  }
}
