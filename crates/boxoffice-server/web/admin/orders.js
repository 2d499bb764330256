// The dashboard's orders: the latest first, searched by order id, user id or seat, paged
// on, cancelled after a confirmation, downloaded as CSV; a paid order's seats moved to the
// seats picked on the map ("Move seats").

import { esc } from "../core/format.js";
import { $, api, errorBox, confirmDialog, download, money, when, may } from "./shared.js";

const STATUS_NAMES = { paid: "paid", pending_payment: "awaiting payment", expired: "expired unpaid", cancelled: "cancelled" };

const orderItem = (o, zone) => `<li data-order-id="${esc(o.order_id)}"><div>
    <strong>${esc(o.user_id)}</strong> · ${esc(when(o.created_at, zone))} · <span class="status-${esc(o.status)}">${esc(STATUS_NAMES[o.status] || o.status)}</span>${o.status === "pending_payment" && o.pay_by ? ` · pay by ${esc(when(o.pay_by, zone))}` : ""}
    <div class="seats">${esc(o.seats.map((s) => s.label).join("; "))}</div><code>${esc(o.order_id)}</code></div>
    <div>${esc(money(o.total_cents, o.currency))}
    ${o.status === "paid" && may("change_orders") ? `<button type="button" data-action="move" aria-label="Move seats of the order of ${esc(o.user_id)}">Move seats</button>` : ""}
    ${(o.status === "paid" || o.status === "pending_payment") && may("change_orders") ? `<button type="button" data-action="cancel" aria-label="Cancel the order of ${esc(o.user_id)}">Cancel</button>` : ""}</div></li>`;

// The panel of a move: which of the order's seats move, and where the new ones come from.
const movePanel = (o) => `<div class="move" data-move>
    <fieldset><legend>Seats to move</legend>${o.seats.map((s) =>
      `<label><input type="checkbox" name="from" value="${esc(s.id)}" checked> ${esc(s.label)}</label>`).join("")}</fieldset>
    <p class="hint">Pick the new seats on the map, as many as the seats to move: the first seat moves to the first picked, and so on.</p>
    <button type="button" data-action="move-here">Move to the seats picked</button>
    <button type="button" data-action="move-cancel">Close</button>
    <div class="move-result" aria-live="polite"></div></div>`;

// What a move came to, said to the organizer.
const moved = (o) => {
  const d = o.price_difference_cents;
  const price = d === 0 ? "The total is the same." : d > 0
    ? `The order costs ${money(d, o.currency)} more: charge the buyer.`
    : `The order costs ${money(-d, o.currency)} less: refund the buyer.`;
  return `<p class="ok" role="status">Moved. The order has ${esc(o.seats.map((s) => s.label).join("; "))}. ${esc(price)}</p>`;
};

// Wires the orders of `event` (at `path`); answers `{refresh()}`, which reads the first
// page again unless the organizer is searching or has read further.
export function orderList(event, path, map) {
  let cursor = null, pagedOn = false;
  const shown = new Map(); // order id -> order, as listed
  let rendered = null; // the list's HTML as drawn
  const search = () => document.querySelector("#search [name=q]").value.trim();
  const orders = async (reset) => {
    pagedOn = !reset;
    if (reset) cursor = null;
    const q = search();
    const query = new URLSearchParams({ limit: "20" });
    if (q) query.set("q", q);
    if (cursor) query.set("cursor", cursor);
    try {
      const page = await api("GET", `${path}/orders?${query}`);
      cursor = page.next_cursor;
      $("more").hidden = !cursor;
      if (reset) shown.clear();
      for (const o of page.orders) shown.set(o.order_id, o);
      const html = page.orders.map((o) => orderItem(o, event.time_zone)).join("");
      // A first page read again as it was is left as it is: the buttons under the
      // organizer's pointer, and the message above them, stay.
      if (reset && html === rendered) return;
      if (reset) {
        $("orders").innerHTML = html;
        rendered = html;
      } else {
        $("orders").insertAdjacentHTML("beforeend", html);
        rendered += html;
      }
      $("orders-result").textContent = reset && !page.orders.length ? (q ? `No order matches “${q}”.` : "No orders yet.") : "";
    } catch (e) {
      $("orders-result").innerHTML = errorBox(e);
    }
  };
  $("search").onsubmit = (e) => { e.preventDefault(); orders(true); };
  $("more").onclick = () => orders(false);
  $("orders").onclick = async (e) => {
    if (await move(e)) return;
    const button = e.target.closest("[data-action=cancel]");
    if (!button) return;
    const item = button.closest("[data-order-id]");
    const orderId = item.dataset.orderId;
    const seatsText = item.querySelector(".seats").textContent;
    const yes = await confirmDialog("Cancel this order?",
      `The order of ${item.querySelector("strong").textContent} is cancelled and its seats go back on sale: ${seatsText}. This cannot be undone.`,
      "Cancel the order");
    if (!yes) return;
    try {
      await api("POST", `/v1/orders/${encodeURIComponent(orderId)}/cancel`);
      await orders(true);
      $("orders-result").innerHTML = `<p class="ok" role="status">The order was cancelled; its seats are on sale again.</p>`;
    } catch (err) {
      $("orders-result").innerHTML = errorBox(err);
    }
  };
  // "Move seats" opens the order's panel; "Move to the seats picked" pairs the seats
  // checked with the seats picked on the map, in order. Answers whether it was a move's
  // button.
  const move = async (e) => {
    const button = e.target.closest("[data-action^=move]");
    if (!button) return false;
    const item = button.closest("[data-order-id]");
    const order = shown.get(item.dataset.orderId);
    const panel = item.querySelector("[data-move]");
    if (button.dataset.action === "move") {
      if (!panel) {
        item.insertAdjacentHTML("beforeend", movePanel(order));
        item.querySelector("[data-move]").onchange = (ev) => { ev.currentTarget.querySelector(".move-result").replaceChildren(); };
      }
      item.querySelector("[data-move] input").focus();
      return true;
    }
    if (button.dataset.action === "move-cancel") {
      panel.remove();
      return true;
    }
    const from = [...panel.querySelectorAll("input[name=from]:checked")].map((i) => i.value);
    const to = map.picked();
    const result = panel.querySelector(".move-result");
    if (!from.length || from.length !== to.length) {
      result.innerHTML = `<p class="error" role="alert">Pick ${from.length} seat${from.length === 1 ? "" : "s"} on the map for the ${from.length === 1 ? "seat" : "seats"} checked: ${to.length} picked.</p>`;
      return true;
    }
    try {
      const after = await api("POST", `/v1/orders/${encodeURIComponent(order.order_id)}/moves`,
        { json: { moves: from.map((f, i) => ({ from: f, to: to[i] })) } });
      map.clear();
      await orders(true);
      $("orders-result").innerHTML = moved(after);
    } catch (err) {
      result.innerHTML = errorBox(err);
    }
    return true;
  };
  $("csv").onclick = async () => download(await api("GET", `${path}/orders.csv`, { blob: true }), `orders-${event.id}.csv`);
  orders(true);
  // Not while a move is being made: its panel would go with the list.
  return { refresh: () => { if (!search() && !pagedOn && !document.querySelector("#orders [data-move]")) orders(true); } };
}
