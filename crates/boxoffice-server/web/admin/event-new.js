// Creating an event: a venue, a name and a start in the event's time zone, ticket types,
// every seat on sale as the first type (or none) and each seat category as a type of its
// choosing, the venue's standing areas to sell with their capacity and price, holds and
// buyers' limits, the payment window, sales channels and a waiting room.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, go, addTicketType, ticketTypes as readTicketTypes, organization, ofOrganization } from "./shared.js";

export async function eventNew() {
  const venues = (await api("GET", ofOrganization("/v1/venues"))).venues;
  const chosen = new URLSearchParams(location.search).get("venue");
  const tomorrow = new Date(Date.now() + 86400000);
  tomorrow.setHours(19, 30, 0, 0);
  const local = (d) => new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
  screen("New event", `<h1>New event</h1><div class="card"><form id="event-form" class="form" novalidate>
    <label>Venue <select name="venue_id" required>${venues.map((v) =>
      `<option value="${esc(v.id)}" ${v.id === chosen ? "selected" : ""}>${esc(v.name)} (${v.seat_count} seats)</option>`).join("")}</select></label>
    <label>Name <input name="name" required maxlength="200" autocomplete="off"></label>
    <div class="row"><label>Starts <input name="starts_at" type="datetime-local" required value="${local(tomorrow)}" aria-describedby="starts-hint"></label>
      <label>Time zone <input name="time_zone" list="zones" autocomplete="off" aria-describedby="starts-hint"></label></div>
    <span class="hint" id="starts-hint">The start is the local time in the event's time zone (the venue's unless you name another)</span>
    <datalist id="zones">${zoneNames().map((z) => `<option value="${esc(z)}">`).join("")}</datalist>
    <fieldset id="types"><legend>Ticket types</legend></fieldset>
    <button type="button" id="add-type">Add a ticket type</button>
    <label class="check"><input type="checkbox" name="all_on_sale" checked> Put every seat on sale as the first ticket type (change it on the event's map afterwards)</label>
    <fieldset id="categories" hidden><legend>Seat categories</legend>
      <p class="hint">Each category of the venue's seats on sale as a ticket type of its own, over the choice above.</p>
      <div id="category-rows"></div></fieldset>
    <fieldset id="areas" hidden><legend>Standing areas</legend>
      <p class="hint">The venue's standing areas, sold by number of places.</p>
      <div id="area-rows"></div></fieldset>
    <fieldset><legend>Holds and buyers</legend><div class="row">
      <label>Hold lasts (seconds) <input name="hold_ttl_seconds" type="number" min="1" max="3600" value="120"></label>
      <label>Longest hold with extensions (seconds) <input name="max_hold_seconds" type="number" min="1" value="900"></label>
      <label>Seats per buyer <input name="max_seats_per_user" type="number" min="1" max="100" value="8"></label>
      <label>Minutes to pay <input name="payment_minutes" type="number" min="0" max="1440" value="0" aria-describedby="pay-hint"></label></div>
      <span class="hint" id="pay-hint">0: a checkout is the sale. Otherwise buyers pay within these minutes, their seats kept meanwhile</span></fieldset>
    <label>Sales channels <input name="channels" autocomplete="off" placeholder="Partner A, Fan club" aria-describedby="channels-hint">
      <span class="hint" id="channels-hint">Partners who sell seats you give them, to their buyers alone; their code is the name in lower case with hyphens</span></label>
    <fieldset><legend>Waiting room</legend>
      <label class="check"><input type="checkbox" name="queue"> Buyers wait in line before they reach the map</label>
      <div class="row"><label>Opens <input name="opens_at" type="datetime-local" value="${local(new Date(Date.now() + 3600000))}"></label>
      <label>Admitted a minute <input name="admit_per_minute" type="number" min="1" value="600"></label></div></fieldset>
    <div id="event-error" aria-live="polite"></div>
    <button type="submit">Create event</button></form></div>`);
  const types = $("types");
  const addType = (code, name, price) => addTicketType(types, code, name, price, "code-hint");
  addType("standard", "Standard", "45.00");
  $("add-type").onclick = () => { addType("", "", ""); offerCategories(); };
  types.oninput = offerCategories;
  // What the venue chosen has: its zone, seat categories and standing areas.
  let venue = null;
  const offer = async () => {
    venue = await api("GET", `/v1/venues/${encodeURIComponent($("event-form").venue_id.value)}`);
    $("event-form").time_zone.placeholder = venue.time_zone;
    offerAreas(venue);
    offerCategories();
  };
  function offerCategories() {
    if (!venue) return;
    const rows = $("category-rows");
    const kept = new Map([...rows.querySelectorAll("[data-category]")].map((r) => [r.dataset.category, r.querySelector("select").value]));
    const codes = readTicketTypes($("event-form")).filter((t) => t.code);
    const categories = seatCategories(venue);
    $("categories").hidden = categories.length === 0;
    rows.innerHTML = categories.map((c, i) => `<div class="row" data-category="${esc(c.name)}">
      <label for="category-${i}">${esc(c.name)} <span class="hint">(${c.seats} seats)</span></label>
      <select id="category-${i}" name="category_type"><option value="">As above</option>${codes.map((t) =>
        `<option value="${esc(t.code)}">${esc(t.name || t.code)}</option>`).join("")}</select></div>`).join("");
    for (const r of rows.querySelectorAll("[data-category]")) {
      const was = kept.get(r.dataset.category);
      if (was && codes.some((t) => t.code === was)) r.querySelector("select").value = was;
    }
  }
  $("event-form").venue_id.onchange = () => offer().catch((err) => { $("event-error").innerHTML = errorBox(err); });
  await offer();
  $("event-form").onsubmit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const ticketTypes = readTicketTypes(f);
    const zone = f.time_zone.value.trim() || (venue && venue.time_zone) || "UTC";
    const spec = {
      venue_id: f.venue_id.value, name: f.name.value.trim(),
      starts_at: f.starts_at.value ? inZone(f.starts_at.value, zone) : "",
      payment_window_seconds: Math.round(Number(f.payment_minutes.value) * 60),
      hold_ttl_seconds: Number(f.hold_ttl_seconds.value), max_hold_seconds: Number(f.max_hold_seconds.value),
      max_seats_per_user: Number(f.max_seats_per_user.value), ticket_types: ticketTypes, allocations: [],
      channels: f.channels.value.split(",").map((n) => n.trim()).filter(Boolean)
        .map((name) => ({ code: name.toLowerCase().replace(/[^a-z0-9_]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 32), name })),
    };
    if (f.time_zone.value.trim()) spec.time_zone = f.time_zone.value.trim();
    if (f.all_on_sale.checked && ticketTypes.length) {
      spec.allocations = venue.sections.map((s) => ({ ticket_type: ticketTypes[0].code, section: s.id }));
    }
    // A category's entries come after the sections', so they override them.
    for (const r of f.querySelectorAll("[data-category]")) {
      const type = r.querySelector("select").value;
      if (type) spec.allocations.push({ ticket_type: type, category: r.dataset.category });
    }
    spec.ga_areas = [...f.querySelectorAll("[data-ga-area]")].filter((r) => r.querySelector("[name=area_sell]").checked)
      .map((r) => {
        const value = (name) => r.querySelector(`[name=${name}]`).value;
        const capacity = Number(value("area_capacity"));
        return { code: r.dataset.code, name: r.dataset.gaArea, capacity, price_cents: Math.round(Number(value("area_price")) * 100),
          currency: (ticketTypes[0] ? ticketTypes[0].currency : "EUR"), max_per_booking: Math.min(capacity, Number(value("area_max")) || 10) };
      });
    if (f.queue.checked) {
      spec.queue = { enabled: true, opens_at: new Date(f.opens_at.value).toISOString(), admit_per_minute: Number(f.admit_per_minute.value) };
    }
    try {
      const created = await api("POST", "/v1/events", { json: { ...spec, organization_id: organization() } });
      go(`/admin/events/${created.id}`);
    } catch (err) {
      $("event-error").innerHTML = errorBox(err);
    }
  };
}

// The venue's standing areas (its shapes of kind `area`), each offered to sell with its
// capacity, price and places a booking at most.
function offerAreas(venue) {
  const areas = venue.shapes.filter((s) => s.kind === "area");
  $("areas").hidden = areas.length === 0;
  const codes = new Set();
  $("area-rows").innerHTML = areas.map((a, i) => {
    const name = (a.text || "").trim() || `Standing area ${i + 1}`;
    let code = name.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 28) || "area";
    while (codes.has(code)) code += "_" + (i + 1);
    codes.add(code);
    return `<fieldset class="row" data-ga-area="${esc(name)}" data-code="${esc(code)}"><legend>${esc(name)}</legend>
      <label class="check"><input type="checkbox" name="area_sell" checked> Sell</label>
      <label>Places <input name="area_capacity" type="number" min="1" value="100"></label>
      <label>Price <input name="area_price" type="number" min="0" step="0.01" value="25.00"></label>
      <label>Places a booking at most <input name="area_max" type="number" min="1" value="10"></label></fieldset>`;
  }).join("");
}

// The venue's seat categories with their number of seats, in the order first met.
function seatCategories(venue) {
  const counts = new Map();
  for (const section of venue.sections) {
    for (const row of section.rows) {
      for (const seat of row.seats) if (seat.category) counts.set(seat.category, (counts.get(seat.category) || 0) + 1);
    }
  }
  return [...counts].map(([name, seats]) => ({ name, seats }));
}

// Every IANA zone name the browser knows, for the time zone's suggestions.
function zoneNames() {
  try {
    return Intl.supportedValuesOf("timeZone");
  } catch {
    return ["UTC", "Europe/London", "Europe/Berlin", "America/New_York"];
  }
}

// `local` ("2027-01-06T20:30", from a datetime-local field) read as a wall-clock time in
// `zone`, as an ISO instant in UTC.
export function inZone(local, zone) {
  const [date, time] = local.split("T");
  const [y, mo, d] = date.split("-").map(Number);
  const [h, mi] = time.split(":").map(Number);
  const wall = Date.UTC(y, mo - 1, d, h, mi);
  // The zone's offset at an instant: its wall clock then, read as if it were UTC, less it.
  const offset = (at) => {
    const parts = {};
    for (const p of new Intl.DateTimeFormat("en-GB", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit",
      day: "2-digit", hour: "2-digit", minute: "2-digit" }).formatToParts(at)) parts[p.type] = Number(p.value);
    return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute) - at;
  };
  let at = wall - offset(wall);
  at = wall - offset(at);
  return new Date(at).toISOString();
}
