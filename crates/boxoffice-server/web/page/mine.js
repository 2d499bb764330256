// "Your orders" on the event's page: the buyer's own orders of seats and bookings of
// standing places in this event (`GET /v1/me/orders`), newest first; a pending one with
// "Pay now" (its seats marked the buyer's on the map), a paid one with "Show tickets".

import { money, eventClock } from "../core/format.js";
import { $, state, buyer, fail, reveal, onOrdered } from "./shared.js";
import { markMine } from "./map.js";
import { showOrder, placesIn } from "./basket.js";
import { myOrders } from "./tickets.js";

const STATUS = { paid: "Paid", pending_payment: "Awaiting payment", expired: "Not paid in time", cancelled: "Cancelled" };

// Lists the buyer's orders of the event shown, and again whenever they change; answers
// them.
export function wireMine() {
  onOrdered(() => { renderMine(); });
  return renderMine();
}

// Reads the buyer's orders of the event shown and lists them; answers them.
async function renderMine() {
  if (!buyer.token || !state.event) return [];
  let orders;
  try {
    orders = await myOrders(state.event.id);
  } catch (e) {
    fail(e);
    return [];
  }
  const section = $("mine");
  const list = $("mine-list");
  list.replaceChildren();
  section.hidden = orders.length === 0;
  for (const o of orders) list.append(item(o));
  // A pending order's seats read held to everyone: on this page they are the buyer's.
  state.paying = orders.filter((o) => o.status === "pending_payment" && o.seats).flatMap((o) => o.seats.map((s) => s.id));
  markMine();
  return orders;
}

function item(o) {
  const li = document.createElement("li");
  const id = o.order_id || o.booking_id;
  li.dataset.orderId = id;
  li.dataset.status = o.status;
  const what = document.createElement("span");
  what.className = "mine-what";
  what.textContent = o.seats ? o.seats.map((s) => s.label).join("; ") : placesIn(o);
  const how = document.createElement("span");
  how.className = "meta";
  how.textContent = (STATUS[o.status] || o.status) + " · " + money(o.total_cents, o.currency) +
    (o.status === "pending_payment" ? " · pay by " + eventClock(o.pay_by, state.event.time_zone) : "");
  li.append(what, how);
  if (o.status === "pending_payment") {
    const pay = document.createElement("a");
    pay.href = "/pay/" + encodeURIComponent(id);
    pay.className = "pay-now";
    pay.textContent = "Pay now";
    pay.setAttribute("aria-label", "Pay now: " + what.textContent);
    li.append(pay);
  } else if (o.status === "paid" && o.tickets > 0) {
    const show = document.createElement("button");
    show.type = "button";
    show.textContent = o.tickets === 1 ? "Show the ticket" : `Show the ${o.tickets} tickets`;
    show.setAttribute("aria-label", show.textContent + ": " + what.textContent);
    show.onclick = () => {
      showOrder(o);
      reveal($("order"));
    };
    li.append(show);
  }
  return li;
}
