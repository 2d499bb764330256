// Creating an event: a venue, a name and a start, ticket types, every seat on sale as the
// first type (or none), holds and buyers' limits, sales channels and a waiting room.

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
    <label>Starts <input name="starts_at" type="datetime-local" required value="${local(tomorrow)}"></label>
    <fieldset id="types"><legend>Ticket types</legend></fieldset>
    <button type="button" id="add-type">Add a ticket type</button>
    <label class="check"><input type="checkbox" name="all_on_sale" checked> Put every seat on sale as the first ticket type (change it on the event's map afterwards)</label>
    <fieldset><legend>Holds and buyers</legend><div class="row">
      <label>Hold lasts (seconds) <input name="hold_ttl_seconds" type="number" min="1" max="3600" value="120"></label>
      <label>Longest hold with extensions (seconds) <input name="max_hold_seconds" type="number" min="1" value="900"></label>
      <label>Seats per buyer <input name="max_seats_per_user" type="number" min="1" max="100" value="8"></label></div></fieldset>
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
  $("add-type").onclick = () => addType("", "", "");
  $("event-form").onsubmit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const ticketTypes = readTicketTypes(f);
    const spec = {
      venue_id: f.venue_id.value, name: f.name.value.trim(),
      starts_at: f.starts_at.value ? new Date(f.starts_at.value).toISOString() : "",
      hold_ttl_seconds: Number(f.hold_ttl_seconds.value), max_hold_seconds: Number(f.max_hold_seconds.value),
      max_seats_per_user: Number(f.max_seats_per_user.value), ticket_types: ticketTypes, allocations: [],
      channels: f.channels.value.split(",").map((n) => n.trim()).filter(Boolean)
        .map((name) => ({ code: name.toLowerCase().replace(/[^a-z0-9_]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 32), name })),
    };
    if (f.all_on_sale.checked && ticketTypes.length) {
      const venue = await api("GET", `/v1/venues/${encodeURIComponent(spec.venue_id)}`);
      spec.allocations = venue.sections.map((s) => ({ ticket_type: ticketTypes[0].code, section: s.id }));
    }
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
