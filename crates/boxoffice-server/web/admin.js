// The organizer console: signed in with the server's admin token (kept in sessionStorage,
// for this browser session only, never in localStorage or a URL); venues (the list, an
// import from a pretix plan or a CSV file previewed on the map before it is saved, a
// venue's map and its pretix export); events (a form to create one, and its live
// dashboard: counters and revenue following the event stream, sales by section, ticket
// type and minute, the map in organizer mode to put seats on sale or hold them back, and
// the orders, searched, cancelled after a confirmation, downloaded as CSV). Plain
// JavaScript, no build step; the screens are routed in the browser under /admin. One
// file, for the same reason as the buyer's page: each further script is
// one more request and one more tag to keep in order.
"use strict";

const TOKEN_KEY = "boxoffice.console.token";
const PALETTE = ["#2f6fb3", "#c2571a", "#2a8a57", "#8a4fb5", "#b0306a", "#6b7a1f", "#1f7f8a", "#8a6a1f"];
const $ = (id) => document.getElementById(id);
const app = $("app");

/// What the current screen must stop when another is shown (its event stream, timers).
let leave = null;

class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `The server answered ${status}.`);
    this.status = status;
    this.body = body;
  }
}

function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]);
}

const formatters = new Map();
function money(cents, currency) {
  if (!formatters.has(currency)) {
    formatters.set(currency, new Intl.NumberFormat("en", { style: "currency", currency }));
  }
  return formatters.get(currency).format(cents / 100);
}

const when = (iso) => new Date(iso).toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

// A call to the API as the admin. A 401 signs out; any other failure throws a Problem
// carrying the API's problem document.
async function api(method, path, { json, body, type, blob } = {}) {
  const headers = { authorization: "Bearer " + token() };
  let payload;
  if (json !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(json);
  } else if (body !== undefined) {
    headers["content-type"] = type;
    payload = body;
  }
  const r = await fetch(path, { method, headers, body: payload });
  if (r.status === 401) {
    signOut("Your session has ended: sign in again.");
    throw new Problem(401, null);
  }
  if (r.ok && blob) return r.blob();
  const data = await r.json().catch(() => null);
  if (!r.ok) throw new Problem(r.status, data);
  return data;
}

// A problem document as the organizer reads it: what went wrong, and each field at fault.
function errorBox(e) {
  const fields = (e.body && e.body.errors) || [];
  const list = fields.length
    ? `<ul>${fields.map((f) => `<li>${f.field ? `<code>${esc(f.field)}</code>: ` : ""}${esc(f.message)}</li>`).join("")}</ul>`
    : "";
  return `<div class="error" role="alert"><p>${esc(e.message)}</p>${list}</div>`;
}

// ---- routing ----

function go(path) {
  history.pushState(null, "", path);
  route();
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-nav]");
  if (!a || e.metaKey || e.ctrlKey || e.shiftKey) return;
  e.preventDefault();
  go(a.getAttribute("href"));
});
window.addEventListener("popstate", route);

async function route() {
  if (leave) { leave(); leave = null; }
  if (!token()) return signIn();
  $("nav").hidden = false;
  const path = location.pathname.replace(/\/+$/, "") || "/admin";
  let m;
  try {
    if (path === "/admin") await home();
    else if (path === "/admin/venues/new") await venueNew();
    else if ((m = path.match(/^\/admin\/venues\/([^/]+)$/))) await venueShow(decodeURIComponent(m[1]));
    else if (path === "/admin/events/new") await eventNew();
    else if ((m = path.match(/^\/admin\/events\/([^/]+)$/))) await dashboard(decodeURIComponent(m[1]));
    else screen("Not found", `<h1>Not found</h1><p><a href="/admin" data-nav>Back to the console</a></p>`);
  } catch (e) {
    if (e.status !== 401) screen("Error", `<h1>That did not work</h1>${errorBox(e)}<p><a href="/admin" data-nav>Back to the console</a></p>`);
  }
}

function screen(title, html) {
  document.title = `${title} · Boxoffice console`;
  app.innerHTML = html;
}

// ---- signing in ----

function signIn(message) {
  $("nav").hidden = true;
  screen("Sign in", `<section class="card signin" aria-labelledby="signin-title">
    <h1 id="signin-title">Sign in</h1>
    <p class="hint">The console signs in with this server's admin token. It is kept for this browser session only.</p>
    <form id="signin" class="form">
      <label>Admin token <input name="admin_token" type="password" autocomplete="off" required></label>
      <p id="signin-error" class="error" role="alert" ${message ? "" : "hidden"}>${esc(message)}</p>
      <button type="submit">Sign in</button>
    </form></section>`);
  $("signin").onsubmit = async (e) => {
    e.preventDefault();
    const value = e.target.admin_token.value.trim();
    const error = $("signin-error");
    let r;
    try {
      r = await fetch("/v1/venues", { headers: { authorization: "Bearer " + value } });
    } catch {
      r = null;
    }
    if (r && r.ok) {
      sessionStorage.setItem(TOKEN_KEY, value);
      route();
      return;
    }
    error.hidden = false;
    error.textContent = r && (r.status === 401 || r.status === 403)
      ? "That is not this server's admin token."
      : "The server did not answer: try again.";
  };
}

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  if (leave) { leave(); leave = null; }
  if (location.pathname !== "/admin") history.pushState(null, "", "/admin");
  signIn(message);
}
$("sign-out").onclick = () => signOut();

// ---- venues and events ----

async function home() {
  const [venues, events] = await Promise.all([api("GET", "/v1/venues"), api("GET", "/v1/events")]);
  const venueItems = venues.venues.map((v) => `<li data-venue-id="${esc(v.id)}">
      <a href="/admin/venues/${esc(v.id)}" data-nav>${esc(v.name)}</a>
      <span class="meta">${v.seat_count.toLocaleString("en")} seats</span></li>`).join("");
  const eventItems = events.events.map((ev) => `<li data-event-id="${esc(ev.id)}">
      <a href="/admin/events/${esc(ev.id)}" data-nav>${esc(ev.name)}</a>
      <span class="meta">${esc(when(ev.starts_at))}</span></li>`).join("");
  screen("Venues and events", `<h1>Venues and events</h1><div class="split">
    <section class="card" aria-labelledby="venues-title">
      <div class="head"><h2 id="venues-title">Venues</h2><a href="/admin/venues/new" data-nav>Import a venue</a></div>
      ${venueItems ? `<ul class="list">${venueItems}</ul>` : `<p class="hint">No venues yet: import one from a pretix plan or a spreadsheet.</p>`}
    </section>
    <section class="card" aria-labelledby="events-title">
      <div class="head"><h2 id="events-title">Events</h2><a href="/admin/events/new" data-nav>New event</a></div>
      ${eventItems ? `<ul class="list">${eventItems}</ul>` : `<p class="hint">No events yet.</p>`}
    </section></div>`);
}

// A venue's seats as the map draws them, from its sections and rows.
function venueSeats(venue) {
  return venue.sections.flatMap((section) => section.rows.flatMap((row) =>
    row.seats.map((seat) => ({ ...seat, section: section.id, row: row.label, status: "available" }))));
}

async function venueNew() {
  screen("Import a venue", `<h1>Import a venue</h1>
    <div class="card"><form id="import" class="form">
      <label>Plan file <input type="file" name="venue_file" accept=".json,.csv,application/json,text/csv" required>
        <span class="hint">A pretix seating plan (JSON), or a CSV file whose header line names
        <code>section,row,number,x,y</code> and, if wanted, <code>category,accessible,companion,restricted_view</code>.</span></label>
      <label>Name <input name="name" autocomplete="off"><span class="hint">A pretix plan's own name is used when this is empty; a CSV file needs one.</span></label>
    </form></div>
    <div id="import-result" aria-live="polite"></div>
    <div class="card" id="preview-card" hidden>
      <div class="head"><h2>Preview</h2><p id="preview-summary" class="meta"></p></div>
      <svg id="map" role="img" aria-label="Preview of the venue's seats" xmlns="http://www.w3.org/2000/svg"></svg>
      <div class="actions"><button type="button" data-action="save-venue" disabled>Save venue</button></div>
    </div>`);
  const form = $("import");
  const save = document.querySelector("[data-action=save-venue]");
  let file = null;
  const request = async (dryRun) => {
    const csv = /\.csv$/i.test(file.name) || file.type === "text/csv";
    const name = form.name.value.trim();
    const query = new URLSearchParams({ format: csv ? "csv" : "pretix" });
    if (name) query.set("name", name);
    if (dryRun) query.set("dry_run", "true");
    return api("POST", `/v1/venues/import?${query}`, { body: await file.text(), type: csv ? "text/csv" : "application/json" });
  };
  const preview = async () => {
    file = form.venue_file.files[0] || null;
    save.disabled = true;
    $("preview-card").hidden = true;
    if (!file) return;
    try {
      const venue = await request(true);
      $("import-result").innerHTML = "";
      $("preview-card").hidden = false;
      $("preview-summary").textContent = `${venue.name}: ${venue.seat_count.toLocaleString("en")} seats in ${venue.sections.length} sections`;
      Hall.draw($("map"), venueSeats(venue), venue.shapes, () => PALETTE[0]);
      save.disabled = false;
      save.textContent = `Save ${venue.name} (${venue.seat_count.toLocaleString("en")} seats)`;
    } catch (e) {
      $("import-result").innerHTML = errorBox(e);
    }
  };
  form.venue_file.onchange = preview;
  form.name.onchange = () => file && preview();
  form.onsubmit = (e) => e.preventDefault();
  save.onclick = async () => {
    save.disabled = true;
    try {
      const created = await request(false);
      go(`/admin/venues/${created.id}`);
    } catch (e) {
      $("import-result").innerHTML = errorBox(e);
      save.disabled = false;
    }
  };
}

async function venueShow(id) {
  const venue = await api("GET", `/v1/venues/${encodeURIComponent(id)}`);
  screen(venue.name, `<div class="head"><h1>${esc(venue.name)}</h1>
      <p class="meta">${venue.seat_count.toLocaleString("en")} seats in ${venue.sections.length} sections</p></div>
    <div class="toolbar"><a href="/admin/events/new?venue=${esc(venue.id)}" data-nav>New event in this venue</a>
      <button type="button" id="export">Download as a pretix plan</button></div>
    <div class="card"><svg id="map" role="img" aria-label="The venue's seats" xmlns="http://www.w3.org/2000/svg"></svg></div>`);
  Hall.draw($("map"), venueSeats(venue), venue.shapes, () => PALETTE[0]);
  $("export").onclick = async () => download(
    await api("GET", `/v1/venues/${encodeURIComponent(id)}/export?format=pretix`, { blob: true }),
    `${venue.name.replace(/[^A-Za-z0-9_-]+/g, "-")}.pretix.json`);
}

function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// ---- creating an event ----

async function eventNew() {
  const venues = (await api("GET", "/v1/venues")).venues;
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
  const addType = (code, name, price) => {
    const n = types.querySelectorAll(".row").length + 1;
    types.insertAdjacentHTML("beforeend", `<div class="row">
      <label>Code <input name="type_code" value="${esc(code)}" pattern="[A-Za-z0-9_]{1,32}" aria-describedby="code-hint-${n}"></label>
      <label>Name <input name="type_name" value="${esc(name)}"></label>
      <label>Price <input name="type_price" type="number" min="0" step="0.01" value="${esc(price)}"></label>
      <label>Currency <input name="type_currency" value="EUR" maxlength="3" size="4"></label>
      <span class="hint" id="code-hint-${n}">Letters, digits, _</span></div>`);
  };
  addType("standard", "Standard", "45.00");
  $("add-type").onclick = () => addType("", "", "");
  $("event-form").onsubmit = async (e) => {
    e.preventDefault();
    const f = e.target;
    const all = (name) => [...f.querySelectorAll(`[name=${name}]`)].map((i) => i.value.trim());
    const [codes, names, prices, currencies] = ["type_code", "type_name", "type_price", "type_currency"].map(all);
    const ticketTypes = codes.map((code, i) => ({ code, name: names[i], price_cents: Math.round(Number(prices[i]) * 100), currency: currencies[i].toUpperCase() }))
      .filter((t) => t.code || t.name);
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
      const created = await api("POST", "/v1/events", { json: spec });
      go(`/admin/events/${created.id}`);
    } catch (err) {
      $("event-error").innerHTML = errorBox(err);
    }
  };
}

// ---- an event's dashboard ----

async function dashboard(id) {
  const path = `/v1/events/${encodeURIComponent(id)}`;
  const event = await api("GET", path);
  const currency = (event.ticket_types[0] || event.ga_areas[0] || { currency: "EUR" }).currency;
  const typeColour = new Map(event.ticket_types.map((t, i) => [t.code, PALETTE[i % PALETTE.length]]));
  const typeName = new Map(event.ticket_types.map((t) => [t.code, t.name]));
  const areaName = new Map(event.ga_areas.map((g) => [g.code, g.name]));
  const sectionName = new Map();
  screen(event.name, `<div class="head"><h1>${esc(event.name)}</h1>
      <p class="meta">${esc(when(event.starts_at))} · <a href="/?event=${esc(event.id)}">the buyers' page</a></p></div>
    <section class="counters" aria-label="The sale now">
      <div class="counter"><strong data-count="sold">–</strong><span>sold</span></div>
      <div class="counter"><strong data-count="held">–</strong><span>held</span></div>
      <div class="counter"><strong data-count="available">–</strong><span>available</span></div>
      <div class="counter"><strong data-count="not_for_sale">–</strong><span>held back</span></div>
      <div class="counter"><strong id="revenue" data-revenue-cents="0">–</strong><span>revenue</span></div>
      <div class="counter" id="queue-counter" hidden><strong id="queue-waiting">–</strong><span>waiting, <span id="queue-admitted">–</span> let in</span></div>
      <div class="counter" id="waitlist-counter" hidden><strong id="waitlist-waiting">–</strong><span>on the waiting list, <span id="waitlist-offered">–</span> offered seats</span></div>
    </section>
    ${event.channels && event.channels.length ? `<section class="card" aria-labelledby="channels-title">
      <div class="head"><h2 id="channels-title">Sales channels</h2><p class="meta">Seats sold through a partner, to its buyers alone, until released.</p></div>
      <ul id="channels" class="list"></ul><div id="channels-result" aria-live="polite"></div></section>` : ""}
    <div class="split">
      <section class="card" aria-labelledby="minute-title"><h2 id="minute-title">Seats sold a minute, last hour</h2>
        <svg id="chart" class="chart" role="img" aria-label="Seats sold a minute" viewBox="0 0 600 126" preserveAspectRatio="none"></svg>
        <div class="chart-axis"><span>an hour ago</span><span id="chart-most"></span></div></section>
      <section class="card" aria-labelledby="types-title"><h2 id="types-title">By ticket type</h2><div id="by-type" tabindex="0" role="region" aria-labelledby="types-title"></div></section>
    </div>
    <section class="card" aria-labelledby="sections-title"><h2 id="sections-title">By section</h2><div id="by-section" tabindex="0" role="region" aria-labelledby="sections-title"></div></section>
    <section class="card organizer" aria-labelledby="map-title">
      <div class="head"><h2 id="map-title">Seats</h2><p class="meta">Click a seat, shift-click to add, drag a box to select many.</p></div>
      <div class="toolbar" role="toolbar" aria-label="Selected seats">
        <span id="picked" aria-live="polite">No seats selected</span>
        <label>Ticket type <select name="ticket_type">${event.ticket_types.map((t) =>
          `<option value="${esc(t.code)}">${esc(t.name)} · ${esc(money(t.price_cents, t.currency))}</option>`).join("")}</select></label>
        ${event.channels && event.channels.length ? `<label>Sold in <select name="channel"><option value="">general sale</option>${
          event.channels.map((c) => `<option value="${esc(c.code)}">${esc(c.name)}</option>`).join("")}</select></label>` : ""}
        <button type="button" data-action="put-on-sale" disabled>Put on sale</button>
        <button type="button" data-action="hold-back" disabled>Hold back</button>
        <button type="button" id="clear" disabled>Clear</button>
        <label>Select a section <select id="pick-section"><option value="">…</option></select></label>
      </div>
      <div id="map-result" aria-live="polite"></div>
      <svg id="map" role="group" aria-label="The event's seats" xmlns="http://www.w3.org/2000/svg"></svg>
    </section>
    <section class="card" aria-labelledby="orders-title">
      <div class="head"><h2 id="orders-title">Orders</h2><button type="button" id="csv">Download CSV</button></div>
      <form id="search" class="toolbar" role="search"><label>Find <input name="q" type="search" placeholder="order id, user id or seat" autocomplete="off"></label>
        <button type="submit">Search</button></form>
      <div id="orders-result" aria-live="polite"></div>
      <ul id="orders" class="list orders"></ul>
      <button type="button" id="more" hidden>More orders</button>
    </section>`);

  const seats = { list: [], status: new Map(), el: new Map(), picked: new Set() };
  // The counts by status, kept as changes arrive: a change moves one seat between two.
  const tally = { sold: 0, held: 0, available: 0, not_for_sale: 0 };
  const counts = (recount) => {
    if (recount) {
      for (const k of Object.keys(tally)) tally[k] = 0;
      for (const st of seats.status.values()) tally[st]++;
    }
    for (const [name, n] of Object.entries(tally)) document.querySelector(`[data-count=${name}]`).textContent = n.toLocaleString("en");
  };
  const colour = (s) => (s.ticket_type ? typeColour.get(s.ticket_type) : "#fff");
  const draw = (list, shapes) => {
    seats.list = list;
    seats.status = new Map(list.map((s) => [s.id, s.status]));
    seats.el = Hall.draw($("map"), list, shapes, colour);
    seats.picked = new Set([...seats.picked].filter((id) => seats.el.has(id)));
    for (const s of list) if (!sectionName.has(s.section)) sectionName.set(s.section, s.label.split(", Row ")[0]);
    const chosen = $("pick-section").value;
    $("pick-section").innerHTML = `<option value="">…</option>` + [...sectionName.entries()].map(([sid, name]) =>
      `<option value="${esc(sid)}" ${sid === chosen ? "selected" : ""}>${esc(name)}</option>`).join("");
    showPicked();
    counts(true);
  };
  const showPicked = () => {
    for (const [sid, el] of seats.el) el.classList.toggle("picked", seats.picked.has(sid));
    const n = seats.picked.size;
    const type = document.querySelector("select[name=ticket_type]");
    const typeLabel = typeName.get(type.value) || "";
    $("picked").textContent = n ? `${n} seat${n === 1 ? "" : "s"} selected` : "No seats selected";
    const sale = document.querySelector("[data-action=put-on-sale]");
    const back = document.querySelector("[data-action=hold-back]");
    sale.disabled = back.disabled = $("clear").disabled = !n || !type.value;
    sale.textContent = n ? `Put ${n} on sale as ${typeLabel}` : "Put on sale";
    back.textContent = n ? `Hold back ${n}` : "Hold back";
  };

  // Selecting: a click picks one seat, shift-click adds or removes one, a dragged box
  // picks every seat in it (added to the selection with shift).
  const svg = $("map");
  let band = null;
  const at = (e) => {
    const p = svg.createSVGPoint();
    p.x = e.clientX; p.y = e.clientY;
    return p.matrixTransform(svg.getScreenCTM().inverse());
  };
  svg.addEventListener("pointerdown", (e) => {
    const seat = e.target.closest(".seat");
    band = { from: at(e), shift: e.shiftKey, seat: seat && seat.dataset.seatId, el: null };
    try { svg.setPointerCapture(e.pointerId); } catch { /* a pointer the browser does not track */ }
  });
  svg.addEventListener("pointermove", (e) => {
    if (!band) return;
    const p = at(e);
    if (!band.el && Math.hypot(p.x - band.from.x, p.y - band.from.y) < 0.3) return;
    if (!band.el) {
      band.el = document.createElementNS("http://www.w3.org/2000/svg", "rect");
      band.el.setAttribute("class", "band");
      svg.append(band.el);
    }
    const x = Math.min(p.x, band.from.x), y = Math.min(p.y, band.from.y);
    band.el.setAttribute("x", x); band.el.setAttribute("y", y);
    band.el.setAttribute("width", Math.abs(p.x - band.from.x)); band.el.setAttribute("height", Math.abs(p.y - band.from.y));
    band.to = p;
  });
  svg.addEventListener("pointerup", () => {
    if (!band) return;
    if (band.el) {
      const [x0, x1] = [band.from.x, band.to.x].sort((a, b) => a - b);
      const [y0, y1] = [band.from.y, band.to.y].sort((a, b) => a - b);
      if (!band.shift) seats.picked.clear();
      for (const [sid, el] of seats.el) {
        const cx = Number(el.getAttribute("cx")), cy = Number(el.getAttribute("cy"));
        if (cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1) seats.picked.add(sid);
      }
      band.el.remove();
    } else if (band.seat) {
      if (band.shift) {
        if (!seats.picked.delete(band.seat)) seats.picked.add(band.seat);
      } else {
        seats.picked = new Set([band.seat]);
      }
    }
    band = null;
    showPicked();
  });
  $("clear").onclick = () => { seats.picked.clear(); showPicked(); };
  document.querySelector("select[name=ticket_type]").onchange = showPicked;
  $("pick-section").onchange = (e) => {
    if (!e.target.value) return;
    seats.picked = new Set(seats.list.filter((s) => s.section === e.target.value).map((s) => s.id));
    showPicked();
  };
  const change = async (action) => {
    const ids = [...seats.picked];
    const type = document.querySelector("select[name=ticket_type]").value;
    const channelSelect = document.querySelector("select[name=channel]");
    const channel = channelSelect && channelSelect.value;
    const entry = { ticket_type: type, seats: ids, ...(channel ? { channel } : {}) };
    try {
      const answer = action === "sale"
        ? await api("PUT", `${path}/allocations`, { json: { allocations: [entry] } })
        : await api("POST", `${path}/allocations/withdraw`, { json: { seats: ids } });
      const channelName = channel ? ` in ${channelSelect.selectedOptions[0].textContent}` : "";
      const done = action === "sale" ? `put on sale as ${typeName.get(type)}${channelName}` : "held back";
      const skipped = answer.skipped.length
        ? `<p>Left as they are (held or sold): ${answer.skipped.map((s) => `${esc(s.label)} (${esc(s.status)})`).join("; ")}.</p>`
        : "";
      $("map-result").innerHTML = `<div class="ok" role="status"><p>${answer.changed} seat${answer.changed === 1 ? "" : "s"} ${done}.</p>${skipped}</div>`;
      seats.picked.clear();
      showPicked();
    } catch (e) {
      $("map-result").innerHTML = errorBox(e);
    }
  };
  document.querySelector("[data-action=put-on-sale]").onclick = () => change("sale");
  document.querySelector("[data-action=hold-back]").onclick = () => change("withdraw");

  // The report: revenue, sections, ticket types, the chart; read again after the stream
  // says something changed, at most once a second.
  let reportTimer = null;
  const report = async () => {
    reportTimer = null;
    const r = await api("GET", `${path}/report`).catch(() => null);
    if (!r) return;
    const revenue = $("revenue");
    revenue.dataset.revenueCents = r.revenue_cents;
    revenue.textContent = money(r.revenue_cents, r.currency);
    $("by-type").innerHTML = `<table><thead><tr><th>Ticket type</th><th class="num">Sold</th><th class="num">Revenue</th></tr></thead><tbody>${
      r.by_ticket_type.map((t) => `<tr><td>${esc(typeName.get(t.ticket_type) || t.ticket_type)}</td><td class="num">${t.sold}</td><td class="num">${esc(money(t.revenue_cents, r.currency))}</td></tr>`).join("")}${
      r.ga.map((g) => `<tr><td>${esc(areaName.get(g.code) || g.code)} (standing, ${g.left} of ${g.capacity} left)</td><td class="num">${g.capacity - g.left}</td><td class="num">${esc(money(g.revenue_cents, r.currency))}</td></tr>`).join("")}</tbody></table>`;
    $("by-section").innerHTML = `<table><thead><tr><th>Section</th><th class="num">Sold</th><th class="num">Held</th><th class="num">Available</th><th class="num">Revenue</th></tr></thead><tbody>${
      r.by_section.map((s) => `<tr data-section="${esc(s.section)}"><td>${esc(sectionName.get(s.section) || s.section)}</td><td class="num">${s.sold}</td><td class="num">${s.held}</td><td class="num">${s.available}</td><td class="num">${esc(money(s.revenue_cents, r.currency))}</td></tr>`).join("")}</tbody></table>`;
    const most = Math.max(1, ...r.sales_per_minute.map((m) => m.seats));
    $("chart").innerHTML = r.sales_per_minute.map((m, i) => {
      const h = (m.seats / most) * 120;
      return `<rect x="${i * 10 + 1}" y="${125 - h}" width="8" height="${h}"><title>${esc(new Date(m.minute).toLocaleTimeString("en-GB", { timeStyle: "short" }))}: ${m.seats}</title></rect>`;
    }).join("");
    $("chart-most").textContent = `now · at most ${most} a minute`;
    const waitlist = r.waitlist || { waiting: 0, offered: 0 };
    $("waitlist-counter").hidden = !(waitlist.waiting || waitlist.offered);
    $("waitlist-waiting").textContent = waitlist.waiting.toLocaleString("en");
    $("waitlist-offered").textContent = waitlist.offered.toLocaleString("en");
    if ($("channels")) {
      $("channels").innerHTML = (r.channels || []).map((c) => `<li data-channel="${esc(c.code)}"><span><strong>${esc(c.name)}</strong>
        · ${c.seats} seat${c.seats === 1 ? "" : "s"}: ${c.available} available, ${c.held} held, ${c.sold} sold</span>
        <button type="button" data-release="${esc(c.code)}" ${c.available ? "" : "disabled"}>${c.available ? `Release ${c.available} to general sale` : "Nothing to release"}</button></li>`).join("");
      for (const b of document.querySelectorAll("[data-release]")) b.onclick = () => release(b.dataset.release);
    }
    $("queue-counter").hidden = !r.queue;
    if (r.queue) {
      $("queue-waiting").textContent = r.queue.waiting.toLocaleString("en");
      $("queue-admitted").textContent = r.queue.admitted.toLocaleString("en");
    }
  };
  // Releasing a channel: its free seats go on general sale (to the waiting list first).
  const release = async (code) => {
    const channel = event.channels.find((c) => c.code === code);
    const yes = await confirmDialog(`Release ${channel.name}'s seats?`,
      "Its seats that are neither held nor sold go on general sale now (to the waiting list first). Held and sold seats stay with the channel.",
      "Release");
    if (!yes) return;
    try {
      const answer = await api("POST", `${path}/channels/${encodeURIComponent(code)}/release`);
      $("channels-result").innerHTML = `<div class="ok" role="status"><p>${answer.released} seat${answer.released === 1 ? "" : "s"} of ${esc(channel.name)} released to general sale.</p></div>`;
      report();
    } catch (e) {
      $("channels-result").innerHTML = errorBox(e);
    }
  };
  // The first page of orders follows the sale too, unless the organizer is searching or
  // has read further.
  const soon = () => {
    reportTimer ??= setTimeout(() => {
      report();
      if (!document.querySelector("#search [name=q]").value.trim() && !pagedOn) orders(true);
    }, 1000);
  };

  // The event stream, one event after another: a `statuses` snapshot (first, after a
  // reconnection, and after the allocations change) redraws from the layout of its
  // version; each `seats` change after it moves its seats and the counts at once.
  const source = new EventSource(`${path}/stream?snapshot=statuses`);
  let layout = null;
  let queue = Promise.resolve();
  const inOrder = (handle) => (m) => {
    queue = queue.then(() => handle(m)).catch((e) => { $("map-result").innerHTML = errorBox(e); });
  };
  source.addEventListener("statuses", inOrder(async (m) => {
    const body = JSON.parse(m.data);
    if (!layout || layout.version < body.version) layout = await api("GET", `${path}/layout`);
    // A layout newer than these statuses: the statuses for it are on their way.
    if (layout.version !== body.version) return;
    const statuses = Hall.statuses(body.statuses, layout.seats.length);
    draw(layout.seats.map((s, i) => ({ ...s, status: statuses[i] })), layout.shapes);
    soon();
  }));
  source.addEventListener("seats", inOrder((m) => {
    for (const c of JSON.parse(m.data).seats) {
      const was = seats.status.get(c.id);
      if (was === undefined || was === c.status) continue;
      tally[was]--;
      tally[c.status]++;
      seats.status.set(c.id, c.status);
      const el = seats.el.get(c.id);
      if (el) el.dataset.status = c.status;
    }
    counts();
    soon();
  }));
  source.addEventListener("ga", soon);
  const minuteTicker = setInterval(soon, 60000);
  leave = () => { source.close(); clearTimeout(reportTimer); clearInterval(minuteTicker); };
  report();

  // Orders.
  const STATUS_NAMES = { paid: "paid", pending_payment: "awaiting payment", expired: "expired unpaid", cancelled: "cancelled" };
  let cursor = null, pagedOn = false;
  const orders = async (reset) => {
    pagedOn = !reset;
    if (reset) cursor = null;
    const q = document.querySelector("#search [name=q]").value.trim();
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
  const orderItem = (o) => `<li data-order-id="${esc(o.order_id)}"><div>
      <strong>${esc(o.user_id)}</strong> · ${esc(when(o.created_at))} · <span class="status-${esc(o.status)}">${esc(STATUS_NAMES[o.status] || o.status)}</span>${o.status === "pending_payment" && o.pay_by ? ` · pay by ${esc(when(o.pay_by))}` : ""}
      <div class="seats">${esc(o.seats.map((s) => s.label).join("; "))}</div><code>${esc(o.order_id)}</code></div>
      <div>${esc(money(o.total_cents, o.currency))}
      ${o.status === "paid" || o.status === "pending_payment" ? `<button type="button" data-action="cancel" aria-label="Cancel the order of ${esc(o.user_id)}">Cancel</button>` : ""}</div></li>`;
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
}

// Asks before an action that cannot be undone; resolves to whether the organizer agreed.
function confirmDialog(title, text, yes) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true });
  });
}

route();
