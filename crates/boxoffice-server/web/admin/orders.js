// The dashboard's orders: the latest first, searched by order id, user id or seat, paged
// on, cancelled after a confirmation, downloaded as CSV.

import { esc } from "../core/format.js";
import { $, api, errorBox, confirmDialog, download, money, when, may } from "./shared.js";

const STATUS_NAMES = { paid: "paid", pending_payment: "awaiting payment", expired: "expired unpaid", cancelled: "cancelled" };

const orderItem = (o) => `<li data-order-id="${esc(o.order_id)}"><div>
    <strong>${esc(o.user_id)}</strong> · ${esc(when(o.created_at))} · <span class="status-${esc(o.status)}">${esc(STATUS_NAMES[o.status] || o.status)}</span>${o.status === "pending_payment" && o.pay_by ? ` · pay by ${esc(when(o.pay_by))}` : ""}
    <div class="seats">${esc(o.seats.map((s) => s.label).join("; "))}</div><code>${esc(o.order_id)}</code></div>
    <div>${esc(money(o.total_cents, o.currency))}
    ${(o.status === "paid" || o.status === "pending_payment") && may("change_orders") ? `<button type="button" data-action="cancel" aria-label="Cancel the order of ${esc(o.user_id)}">Cancel</button>` : ""}</div></li>`;

// Wires the orders of `event` (at `path`); answers `{refresh()}`, which reads the first
// page again unless the organizer is searching or has read further.
export function orderList(event, path) {
  let cursor = null, pagedOn = false;
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
      if (reset) $("orders").innerHTML = "";
      $("orders").insertAdjacentHTML("beforeend", page.orders.map(orderItem).join(""));
      $("orders-result").textContent = reset && !page.orders.length ? (q ? `No order matches “${q}”.` : "No orders yet.") : "";
    } catch (e) {
      $("orders-result").innerHTML = errorBox(e);
    }
  };
  $("search").onsubmit = (e) => { e.preventDefault(); orders(true); };
  $("more").onclick = () => orders(false);
  $("orders").onclick = async (e) => {
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
      $("orders-result").innerHTML = `<p class="ok" role="status">The order was cancelled; its seats are on sale again.</p>`;
      orders(true);
    } catch (err) {
      $("orders-result").innerHTML = errorBox(err);
    }
  };
  $("csv").onclick = async () => download(await api("GET", `${path}/orders.csv`, { blob: true }), `orders-${event.id}.csv`);
  orders(true);
  return { refresh: () => { if (!search() && !pagedOn) orders(true); } };
}
