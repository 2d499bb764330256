// The season screens: creating a season from events of one venue (its ticket types, the
// sections it sells, its partial seasons), and a season's page: its events, its sales by
// partial, and its orders, each found by order id, buyer or seat, cancelled, or released
// for one event.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, go, confirmDialog, money, when, addTicketType, ticketTypes as readTicketTypes, may, organization, ofOrganization } from "./shared.js";

const STATUS_NAMES = { paid: "paid", cancelled: "cancelled" };

// The seasons card of the console's home.
export function seasonsCard(seasons) {
  const items = seasons.map((s) => `<li data-season-id="${esc(s.id)}">
      <a href="/admin/seasons/${esc(s.id)}" data-nav>${esc(s.name)}</a>
      <span class="meta">${s.event_ids.length} events${s.partials.length ? ` · ${s.partials.length} partial` : ""}</span></li>`).join("");
  return `<section class="card" aria-labelledby="seasons-title">
      <div class="head"><h2 id="seasons-title">Seasons</h2>${may("write_catalog") ? `<a href="/admin/seasons/new" data-nav>New season</a>` : ""}</div>
      ${items ? `<ul class="list">${items}</ul>` : `<p class="hint">No seasons yet: a season sells the same seat for every event of a series.</p>`}
    </section>`;
}

export async function seasonNew() {
  const [venues, events] = await Promise.all([api("GET", ofOrganization("/v1/venues")), api("GET", ofOrganization("/v1/events"))]);
  const venueName = new Map(venues.venues.map((v) => [v.id, v.name]));
  const eventBoxes = (name, prefix) => events.events.map((ev, i) => `<label class="check">
      <input type="checkbox" name="${name}" value="${esc(ev.id)}" data-venue="${esc(ev.venue_id)}" id="${prefix}-${i}">
      ${esc(ev.name)} <span class="meta">${esc(when(ev.starts_at, ev.time_zone))} · ${esc(venueName.get(ev.venue_id) || "")}</span></label>`).join("");
  screen("New season", `<h1>New season</h1><div class="card"><form id="season-form" class="form" novalidate>
    <label>Name <input name="name" required maxlength="200" autocomplete="off"></label>
    <fieldset id="season-events"><legend>Events (of one venue)</legend>
      ${events.events.length ? eventBoxes("event_ids", "ev") : `<p class="hint">No events yet: create the events of the series first.</p>`}</fieldset>
    <fieldset id="types"><legend>Ticket types (price per seat for the whole series)</legend></fieldset>
    <button type="button" id="add-type">Add a ticket type</button>
    <label>Sections the season sells, as its first ticket type <input name="sections" autocomplete="off" aria-describedby="sections-hint">
      <span class="hint" id="sections-hint">Section ids, comma-separated; empty sells every section</span></label>
    <fieldset id="partials"><legend>Partial seasons</legend></fieldset>
    <button type="button" id="add-partial">Add a partial season</button>
    <div id="season-error" aria-live="polite"></div>
    <button type="submit">Create season</button></form></div>`);
  const types = $("types");
  const addType = (code, name, price) => addTicketType(types, code, name, price, "season-code-hint");
  const partials = $("partials");
  const addPartial = () => {
    const n = partials.querySelectorAll(".partial").length + 1;
    partials.insertAdjacentHTML("beforeend", `<fieldset class="partial" data-partial="${n}"><legend>Partial ${n}</legend>
      <div class="row"><label>Code <input name="partial_code" autocomplete="off"></label>
      <label>Name <input name="partial_name" autocomplete="off"></label>
      <label>Price per seat <input name="partial_price" type="number" min="0" step="0.01" aria-describedby="partial-price-hint-${n}">
        <span class="hint" id="partial-price-hint-${n}">Of the first ticket type; empty keeps the season's</span></label></div>
      ${eventBoxes("partial_events", `partial-${n}-ev`)}</fieldset>`);
  };
  addType("season", "Season seat", "");
  $("add-type").onclick = () => addType("", "", "");
  $("add-partial").onclick = addPartial;
  $("season-form").onsubmit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const ticketTypes = readTicketTypes(f);
    const eventIds = [...f.querySelectorAll("[name=event_ids]:checked")].map((i) => i.value);
    const sections = f.sections.value.split(",").map((s) => s.trim()).filter(Boolean);
    let allocations = [];
    if (ticketTypes.length) {
      let ids = sections;
      if (!ids.length && eventIds.length) {
        const venueId = f.querySelector(`[name=event_ids][value="${CSS.escape(eventIds[0])}"]`).dataset.venue;
        ids = (await api("GET", `/v1/venues/${encodeURIComponent(venueId)}`)).sections.map((s) => s.id);
      }
      allocations = ids.map((section) => ({ ticket_type: ticketTypes[0].code, section }));
    }
    const spec = {
      name: f.name.value.trim(), event_ids: eventIds, ticket_types: ticketTypes, allocations,
      partials: [...partials.querySelectorAll(".partial")].map((p) => {
        const price = p.querySelector("[name=partial_price]").value.trim();
        return {
          code: p.querySelector("[name=partial_code]").value.trim(),
          name: p.querySelector("[name=partial_name]").value.trim(),
          event_ids: [...p.querySelectorAll("[name=partial_events]:checked")].map((i) => i.value),
          prices: price && ticketTypes.length ? { [ticketTypes[0].code]: Math.round(Number(price) * 100) } : {},
        };
      }),
    };
    try {
      const created = await api("POST", "/v1/seasons", { json: { ...spec, organization_id: organization() } });
      go(`/admin/seasons/${created.id}`);
    } catch (err) {
      $("season-error").innerHTML = errorBox(err);
    }
  };
}

export async function seasonShow(id) {
  const path = `/v1/seasons/${encodeURIComponent(id)}`;
  const [season, events] = await Promise.all([api("GET", path), api("GET", ofOrganization("/v1/events"))]);
  const changes = may("change_orders");
  const eventName = new Map(events.events.map((ev) => [ev.id, ev.name]));
  const nameOf = (eventId) => eventName.get(eventId) || eventId;
  const eventItems = season.event_ids.map((eventId) => `<li data-event-id="${esc(eventId)}">
      <a href="/admin/events/${esc(eventId)}" data-nav>${esc(nameOf(eventId))}</a>
      <span class="meta">${esc(season.partials.filter((p) => p.event_ids.includes(eventId)).map((p) => p.name).join(", "))}</span></li>`).join("");
  screen(season.name, `<div class="head"><h1>${esc(season.name)}</h1>
      <p class="meta">${season.event_ids.length} events · ${esc(season.ticket_types.map((t) => `${t.name} ${money(t.price_cents, t.currency)}`).join(" · "))}</p></div>
    <div class="split">
      <section class="card" aria-labelledby="season-events-title"><h2 id="season-events-title">Events</h2>
        <ul class="list">${eventItems}</ul></section>
      ${may("read_orders") ? `<section class="card" aria-labelledby="sales-title"><h2 id="sales-title">Sales</h2><div id="sales"></div></section>` : ""}
    </div>
    ${may("read_orders") ? `<section class="card" aria-labelledby="orders-title">
      <div class="head"><h2 id="orders-title">Season orders</h2></div>
      <form id="search" class="toolbar" role="search"><label>Find an order <input name="q" autocomplete="off" placeholder="Order id, buyer or seat"></label>
        <button type="submit">Find</button></form>
      <div id="orders-result" aria-live="polite"></div>
      <ul id="orders" class="list orders"></ul>
    </section>` : ""}`);
  if (!may("read_orders")) return;

  const sales = async () => {
    const s = await api("GET", `${path}/sales`);
    $("sales").innerHTML = `<table><caption class="hint">Orders not cancelled</caption>
      <thead><tr><th scope="col">Sold as</th><th scope="col" class="num">Orders</th><th scope="col" class="num">Seats</th><th scope="col" class="num">Revenue</th></tr></thead>
      <tbody>${s.lines.map((l) => `<tr data-partial="${esc(l.partial || "")}"><th scope="row">${esc(l.partial ? l.name : "Whole season")}</th>
        <td class="num">${l.orders}</td><td class="num">${l.seats}</td><td class="num">${esc(money(l.revenue_cents, s.currency))}</td></tr>`).join("")}</tbody>
      <tfoot><tr><th scope="row">Together</th><td class="num">${s.orders}</td><td class="num">${s.seats}</td><td class="num" id="revenue">${esc(money(s.revenue_cents, s.currency))}</td></tr></tfoot></table>`;
  };

  const orderItem = (o) => {
    const released = new Set(o.released.map((r) => r.event_id));
    const live = o.status === "paid";
    const nights = o.event_ids.map((eventId) => released.has(eventId)
      ? `<li>${esc(nameOf(eventId))}: <span class="status-cancelled">released</span></li>`
      : `<li>${esc(nameOf(eventId))}${live && changes ? ` <button type="button" data-action="release" data-event-id="${esc(eventId)}"
          aria-label="Release the seats of ${esc(o.user_id)} for ${esc(nameOf(eventId))}">Release</button>` : ""}</li>`).join("");
    const partial = o.partial && season.partials.find((p) => p.code === o.partial);
    const partialName = o.partial ? ` · ${esc(partial ? partial.name : o.partial)}` : "";
    return `<li data-order-id="${esc(o.order_id)}"><div>
      <strong>${esc(o.user_id)}</strong> · ${esc(when(o.created_at))} · <span class="status-${esc(o.status)}">${esc(STATUS_NAMES[o.status] || o.status)}</span>${partialName}
      <div class="seats">${esc(o.seats.map((s) => s.label).join("; "))}</div><code>${esc(o.order_id)}</code>
      <ul class="nights">${nights}</ul></div>
      <div>${esc(money(o.total_cents, o.currency))}
      ${live && changes ? `<button type="button" data-action="cancel" aria-label="Cancel the season order of ${esc(o.user_id)}">Cancel</button>` : ""}</div></li>`;
  };
  const orders = async () => {
    const q = document.querySelector("#search [name=q]").value.trim();
    const query = new URLSearchParams({ limit: "50" });
    if (q) query.set("q", q);
    try {
      const list = await api("GET", `${path}/orders?${query}`);
      $("orders").innerHTML = list.orders.map(orderItem).join("");
      if (!list.orders.length) $("orders-result").textContent = q ? `No order matches “${q}”.` : "No season orders yet.";
    } catch (e) {
      $("orders-result").innerHTML = errorBox(e);
    }
  };
  $("search").onsubmit = (e) => { e.preventDefault(); $("orders-result").textContent = ""; orders(); };
  $("orders").onclick = async (e) => {
    const button = e.target.closest("button[data-action]");
    if (!button) return;
    const item = button.closest("[data-order-id]");
    const orderId = item.dataset.orderId;
    const buyer = item.querySelector("strong").textContent;
    const seats = item.querySelector(".seats").textContent;
    const release = button.dataset.action === "release";
    const night = release ? nameOf(button.dataset.eventId) : "";
    const yes = release
      ? await confirmDialog("Release these seats for one event?",
        `The seats of ${buyer} (${seats}) go on sale for ${night} alone, offered first to its waiting list; the season order keeps every other event. This cannot be undone.`,
        "Release for this event")
      : await confirmDialog("Cancel this season order?",
        `The season order of ${buyer} is cancelled and its seats go back on sale in every event it still covers: ${seats}. This cannot be undone.`,
        "Cancel the order");
    if (!yes) return;
    try {
      if (release) {
        await api("POST", `/v1/orders/${encodeURIComponent(orderId)}/events/${encodeURIComponent(button.dataset.eventId)}/release`);
        $("orders-result").innerHTML = `<p class="ok" role="status">The seats of ${esc(buyer)} are on sale for ${esc(night)}.</p>`;
      } else {
        await api("POST", `/v1/orders/${encodeURIComponent(orderId)}/cancel`);
        $("orders-result").innerHTML = `<p class="ok" role="status">The season order was cancelled; its seats are on sale again.</p>`;
      }
      await Promise.all([orders(), sales()]);
    } catch (err) {
      $("orders-result").innerHTML = errorBox(err);
    }
  };
  await Promise.all([sales(), orders()]);
}
