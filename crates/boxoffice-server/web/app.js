// The Boxoffice seat-map page: the event list, one event's map (its layout from
// GET /v1/events/{id}/layout, kept live by GET /v1/events/{id}/stream), a basket held all or nothing (chosen on the map, or the
// best available chosen by the server), checkout, GA bookings and the waiting list. An event
// with a waiting room shows the line first, and the map once the buyer's turn comes.
// Plain JavaScript, no build step. Every seat is one SVG circle carrying data-seat-id and
// data-status; changes touch single elements; one listener per kind of input on the map.
// One file because the page has no build step: each further script is
// one more request and one more tag to keep in order. What the hall looks like around the
// seats (shapes, row labels, section titles, wheelchair marks) is hall.js, which the
// console and the embeddable map share.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const SESSION_KEY = "boxoffice.session";
const PASS_KEY = "boxoffice.pass.";   // + event id: {ticket, pass, expires_at}
const WAITLIST_KEY = "boxoffice.waitlist."; // + event id: the buyer's entry id
const POLL_MS = 2000;
const PALETTE = ["#2f6fb3", "#c2571a", "#2a8a57", "#8a4fb5", "#b0306a", "#6b7a1f", "#1f7f8a", "#8a6a1f"];

const $ = (id) => document.getElementById(id);

const state = {
  event: null,          // GET /v1/events/{id}
  layout: null,         // GET /v1/events/{id}/layout: {version, seats}
  seats: new Map(),     // id -> {seat, el, status, heldUntil}
  rows: [],             // [[id...]] in venue order, for arrow keys
  rowOf: new Map(),     // id -> [row index, index in row]
  selected: new Set(),
  hold: null,           // {token, expiresAt, seats: [ids]}
  typeIndex: new Map(), // ticket type code -> palette index
  viewport: null,       // Hall.Viewport: zoom and pan
  stream: null,
  focusId: null,
  pending: new Set(),   // seats of a hold request on its way
  pass: null,           // the waiting room's {ticket, pass, expires_at}, while the queue is on
  paying: null,         // the seats of the buyer's order awaiting payment
};

window.boxoffice = { timings: {}, state };

// ---- money, time, session ----

// One formatter per currency: making one is far dearer than using it, and a map labels
// every seat with its price.
const formatters = new Map();

function money(cents, currency) {
  if (!formatters.has(currency)) {
    let format;
    try {
      format = new Intl.NumberFormat(undefined, { style: "currency", currency }).format;
    } catch (_) {
      format = (amount) => amount.toFixed(2) + " " + currency;
    }
    formatters.set(currency, format);
  }
  return formatters.get(currency)(cents / 100);
}

function typeOf(code) {
  return state.event.ticket_types.find((t) => t.code === code);
}

async function session() {
  try {
    const saved = JSON.parse(localStorage.getItem(SESSION_KEY) || "null");
    if (saved && Date.parse(saved.expires_at) - Date.now() > 60_000) return saved;
  } catch (_) { /* start a new one */ }
  const created = await api("POST", "/v1/sessions", null, false);
  localStorage.setItem(SESSION_KEY, JSON.stringify(created));
  return created;
}

class Problem extends Error {
  constructor(status, body) {
    super((body && body.detail) || "HTTP " + status);
    this.status = status;
    this.body = body || {};
  }
}

async function api(method, path, body, auth = true) {
  const headers = { Accept: "application/json" };
  if (body !== null && body !== undefined) headers["Content-Type"] = "application/json";
  if (auth) headers.Authorization = "Bearer " + (await session()).token;
  if (auth && state.pass) headers["Boxoffice-Pass"] = state.pass.pass;
  const response = await fetch(path, {
    method,
    headers,
    body: body === null || body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new Problem(response.status, parsed);
  return parsed;
}

function say(text, kind) {
  const m = $("message");
  m.textContent = text;
  m.dataset.kind = kind || "warn";
  m.hidden = !text;
}

// ---- event list ----

async function showEvents() {
  $("events").hidden = false;
  const { events } = await api("GET", "/v1/events", null, false);
  const list = $("event-list");
  list.replaceChildren();
  for (const e of events) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "/?event=" + encodeURIComponent(e.id);
    a.innerHTML = "<strong></strong><br><span class=\"when\"></span>";
    a.querySelector("strong").textContent = e.name;
    a.querySelector(".when").textContent = new Date(e.starts_at).toLocaleString();
    li.append(a);
    list.append(li);
  }
  $("events-empty").hidden = events.length > 0;
}

// ---- one event ----

async function showEvent(id) {
  state.event = await api("GET", "/v1/events/" + encodeURIComponent(id), null, false);
  const e = state.event;
  document.title = e.name + " · Boxoffice";
  if (e.queue && e.queue.enabled) await waitForTurn();
  $("event-name").textContent = e.name;
  $("event-meta").textContent = new Date(e.starts_at).toLocaleString() +
    " · up to " + e.max_seats_per_user + " seats per buyer";
  e.ticket_types.forEach((t, i) => state.typeIndex.set(t.code, i % PALETTE.length));
  $("event").hidden = false;
  renderLegend();
  renderGa();
  renderBasket();
  renderPass();
  wireMap();
  wirePanel();
  wireWaitlist();
  connect();
  // Back from paying elsewhere: what became of the order.
  const paying = new URLSearchParams(location.search).get("order");
  if (paying) {
    try {
      showOrder(await api("GET", "/v1/orders/" + encodeURIComponent(paying), null));
    } catch (e) { fail(e); }
  }
}

// ---- the waiting room ----

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function savedPass() {
  try {
    const saved = JSON.parse(localStorage.getItem(PASS_KEY + state.event.id) || "null");
    if (saved && Date.parse(saved.expires_at) - Date.now() > 5_000) return saved;
  } catch (_) { /* none */ }
  return null;
}

function minutes(seconds) {
  if (seconds < 60) return "less than a minute";
  const m = Math.round(seconds / 60);
  if (m < 60) return m === 1 ? "about a minute" : `about ${m} minutes`;
  const h = Math.floor(m / 60), rest = m % 60;
  return `about ${h} h ${rest} min`;
}

// Joins the event's line (or finds this buyer's ticket) and polls it until admitted,
// showing the place and the estimated wait; the pass is kept for the page's holds.
async function waitForTurn() {
  state.pass = savedPass();
  if (state.pass) return;
  const e = state.event;
  $("event").hidden = true;
  const screen = $("waiting");
  screen.hidden = false;
  $("waiting-name").textContent = e.name;
  const base = `/v1/events/${e.id}/queue`;
  let ticket = null, first = null;
  for (;;) {
    let standing;
    try {
      if (!ticket) ticket = (await api("POST", base, null)).ticket;
      standing = await api("GET", `${base}/${ticket}`, null);
    } catch (err) {
      if (err instanceof Problem && err.body.code === "ticket_not_found") { ticket = null; continue; }
      // The line is not open (any more): the sale is open to all.
      if (err instanceof Problem && err.body.code === "queue_not_found") break;
      $("waiting-estimate").textContent = "Reconnecting to the waiting room…";
      await sleep(POLL_MS);
      continue;
    }
    screen.dataset.ticket = ticket;
    if (standing.admitted) {
      state.pass = { ticket, pass: standing.pass, expires_at: standing.pass_expires_at };
      localStorage.setItem(PASS_KEY + e.id, JSON.stringify(state.pass));
      break;
    }
    const position = standing.position;
    screen.dataset.position = position ?? "";
    if (position === null || position === undefined) {
      const opens = new Date(e.queue.opens_at);
      $("waiting-position").textContent = "The sale opens at " + opens.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      $("waiting-estimate").textContent = "Everyone here before then gets a random place in line when it opens: there is no need to hurry.";
    } else {
      first ??= position;
      $("waiting-position").textContent = position === 1
        ? "You are next in line"
        : `You are number ${position.toLocaleString()} in line`;
      $("waiting-estimate").textContent = "Estimated wait: " + minutes(standing.estimated_wait_seconds);
      $("waiting-progress").style.width = `${Math.round(100 * (1 - (position - 1) / Math.max(first, 1)))}%`;
    }
    // Spread, so pages that arrived together do not poll together.
    await sleep(POLL_MS * (0.75 + Math.random() / 2));
  }
  screen.hidden = true;
  $("event").hidden = false;
  say("");
}

// The pass was refused or ended: back to the line, then on with the map.
async function backInLine(text) {
  state.pass = null;
  localStorage.removeItem(PASS_KEY + state.event.id);
  await waitForTurn();
  say(text, "warn");
  renderPass();
}

// The pass ended on the server (a checkout, or the last hold released).
function passEnded() {
  if (!state.pass) return;
  state.pass = null;
  localStorage.removeItem(PASS_KEY + state.event.id);
  renderPass();
}

function renderPass() {
  const info = $("pass-info");
  const left = state.pass ? Date.parse(state.pass.expires_at) - Date.now() : 0;
  if (state.pass && left <= 0) passEnded();
  info.hidden = !state.pass;
  if (!state.pass) return;
  const s = Math.floor(left / 1000);
  $("pass-left").textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

// A refusal that means the buyer's turn is over.
function turnOver(e) {
  return e instanceof Problem && e.body.code === "queue_required";
}

function connect() {
  const live = $("live");
  const path = "/v1/events/" + encodeURIComponent(state.event.id);
  // Statuses alone: the layout comes from GET /layout, which the browser keeps and
  // revalidates, so a 100,000-seat map costs its statuses, not 18 MB, on every load.
  const source = new EventSource(path + "/stream?snapshot=statuses");
  state.stream = source;
  // One event after another: a snapshot may wait for its layout, and the changes after it
  // must not overtake it.
  let queue = Promise.resolve();
  const inOrder = (handle) => (m) => {
    queue = queue.then(() => handle(m)).catch((e) => say(e.message, "error"));
  };
  source.addEventListener("statuses", inOrder(async (m) => {
    const body = JSON.parse(m.data);
    const layout = await layoutAt(path, body.version);
    // A layout newer than the statuses: the statuses for it are on their way.
    if (layout.version !== body.version) return;
    window.boxoffice.timings.snapshotArrived ??= performance.now();
    live.textContent = "Live";
    live.dataset.state = "live";
    applySnapshot({ seats: withStatuses(layout.seats, body), shapes: layout.shapes });
  }));
  source.addEventListener("seats", inOrder((m) => {
    for (const c of JSON.parse(m.data).seats) setStatus(c.id, c.status, c.held_until);
    renderBasket();
  }));
  source.addEventListener("ga", inOrder((m) => {
    const g = JSON.parse(m.data);
    const left = document.querySelector(`[data-ga-left="${CSS.escape(g.code)}"]`);
    if (left) left.textContent = g.left;
  }));
  source.onerror = () => {
    live.textContent = "Reconnecting…";
    live.dataset.state = "reconnecting";
  };
}

// The event's layout at `version` or newer: the one kept, or a fresh one (the browser
// revalidates it with its ETag, a 304 while the allocations stand).
async function layoutAt(path, version) {
  if (!state.layout || state.layout.version < version) {
    state.layout = await api("GET", path + "/layout", null, false);
  }
  return state.layout;
}

// The layout's seats with the statuses of a `statuses` event (see Hall.statuses), and each
// held seat's expiry in seconds after `held_until_base`.
function withStatuses(seats, body) {
  const statuses = Hall.statuses(body.statuses, seats.length);
  let held = 0;
  return seats.map((s, i) => {
    const seat = { ...s, status: statuses[i] };
    if (seat.status === "held") {
      const at = body.held_until_base + body.held_until_offsets[held++];
      seat.held_until = new Date(at * 1000).toISOString();
    }
    return seat;
  });
}

function applySnapshot(body) {
  const first = state.seats.size === 0;
  const sameSeats = !first && body.seats.length === state.seats.size &&
    body.seats.every((s) => state.seats.has(s.id) && state.seats.get(s.id).seat.ticket_type === s.ticket_type);
  if (sameSeats) {
    for (const s of body.seats) setStatus(s.id, s.status, s.held_until);
  } else {
    drawMap(body.seats, body.shapes || []);
  }
  for (const id of [...state.selected]) {
    if (!isFree(id)) state.selected.delete(id);
  }
  renderBasket();
  if (first) {
    window.boxoffice.timings.mapDrawn = performance.now();
    requestAnimationFrame(() => { window.boxoffice.timings.firstPaint = performance.now(); });
  }
}

// ---- the map ----

function ariaLabel(s) {
  const type = s.ticket_type ? typeOf(s.ticket_type) : null;
  const price = type ? type.name + ", " + money(s.price_cents, type.currency) : "not for sale";
  return [s.label, ...Hall.spoken(s), price].join(", ");
}

// The map: shapes behind, then every seat (with its marks), row labels and section
// titles, in seat units (see hall.js); one string, parsed once, far faster than 20,000
// createElement calls.
function drawMap(seats, shapes) {
  const svg = $("map");
  const unit = Hall.unitOf(seats);
  const taken = new Hall.Taken();
  const drawn = Hall.shapes(shapes, unit, taken);
  const R = Hall.SEAT_R;
  let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
  const grow = (b) => {
    minX = Math.min(minX, b.x); minY = Math.min(minY, b.y);
    maxX = Math.max(maxX, b.x + b.w); maxY = Math.max(maxY, b.y + b.h);
  };
  const seatParts = [];
  const rows = [];
  state.rows = [];
  state.rowOf = new Map();
  let rowKey = null;
  for (const s of seats) {
    const cx = s.x / unit, cy = s.y / unit;
    const key = s.section + "\u0000" + s.row;
    if (key !== rowKey) {
      state.rows.push([]);
      rows.push({ section: s.section, sectionName: s.label.split(", Row ")[0], label: s.row, seats: [], box: null });
      rowKey = key;
    }
    const ids = state.rows[state.rows.length - 1];
    state.rowOf.set(s.id, [state.rows.length - 1, ids.length]);
    ids.push(s.id);
    const row = rows[rows.length - 1];
    row.seats.push({ cx, cy });
    const box = { x: cx - R, y: cy - R, w: 2 * R, h: 2 * R };
    row.box = row.box ? union(row.box, box) : box;
    taken.add(box);
    grow(box);
    const colour = s.ticket_type ? PALETTE[state.typeIndex.get(s.ticket_type) ?? 0] : "#fff";
    seatParts.push(`<circle class="seat" cx="${cx}" cy="${cy}" r="${R}" fill="${colour}" data-seat-id="${esc(s.id)}" data-status="${s.status}" role="checkbox" aria-checked="false" tabindex="-1" aria-label="${esc(ariaLabel(s))}"/>` + Hall.marks(s, cx, cy));
  }
  const rowLabels = Hall.rowLabels(rows, taken);
  const titles = Hall.titles(rows, taken);
  for (const b of [...drawn.boxes, ...titles.boxes]) grow(b);
  if (!seats.length && !drawn.boxes.length) { minX = minY = 0; maxX = maxY = 1; }
  const t = window.boxoffice.timings;
  t.built = performance.now();
  svg.innerHTML = defs() + drawn.svg + seatParts.join("") + rowLabels + titles.svg;
  t.parsed = performance.now();
  // The circles come out in the order they went in: pair them with their seats by index.
  const circles = svg.getElementsByClassName("seat");
  state.seats = new Map();
  seats.forEach((s, i) => {
    state.seats.set(s.id, {
      el: circles[i],
      seat: s,
      status: s.status,
      heldUntil: s.held_until ? Date.parse(s.held_until) : null,
    });
  });
  t.indexed = performance.now();
  markMine();
  t.marked = performance.now();
  const pad = 1.5;
  const fit = { x: minX - pad, y: minY - pad, w: maxX - minX + 2 * pad, h: maxY - minY + 2 * pad };
  // On a narrow screen the map is as tall as the hall is at its width, so the first view
  // shows the whole hall without bands above and below.
  svg.style.aspectRatio = `${fit.w} / ${fit.h}`;
  state.viewport.reset(fit);
  renderLegend(seats);
  const firstFree = seats.find((s) => s.status === "available") || seats[0];
  if (firstFree) rove(firstFree.id, false);
}

function union(a, b) {
  const x = Math.min(a.x, b.x), y = Math.min(a.y, b.y);
  return { x, y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
}

function defs() {
  return `<defs>${Hall.MARK_DEFS}
<pattern id="pat-held" patternUnits="userSpaceOnUse" width="0.25" height="0.25" patternTransform="rotate(45)"><rect width="0.25" height="0.25" fill="#d9dee3"/><rect width="0.1" height="0.25" fill="#8a949e"/></pattern>
<pattern id="pat-sold" patternUnits="userSpaceOnUse" width="0.3" height="0.3"><rect width="0.3" height="0.3" fill="#4a525a"/><path d="M0 0L0.3 0.3M0.3 0L0 0.3" stroke="#9aa3ab" stroke-width="0.05"/></pattern>
<pattern id="pat-mine" patternUnits="userSpaceOnUse" width="0.25" height="0.25" patternTransform="rotate(45)"><rect width="0.25" height="0.25" fill="#ffd24d"/><rect width="0.1" height="0.25" fill="#e0a800"/></pattern>
</defs>`;
}

function esc(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" })[c]);
}

function setStatus(id, status, heldUntil) {
  const entry = state.seats.get(id);
  if (!entry) return;
  entry.status = status;
  entry.heldUntil = heldUntil ? Date.parse(heldUntil) : null;
  entry.el.setAttribute("data-status", status);
  if (status !== "available" && state.selected.has(id) && !isMine(id) && !state.pending.has(id)) {
    state.selected.delete(id);
    entry.el.setAttribute("aria-checked", "false");
    say(entry.seat.label + " just went", "warn");
  }
  entry.el.classList.toggle("mine", isMine(id) && status === "held");
  entry.el.setAttribute("aria-disabled", String(status !== "available" && !isMine(id)));
}

// The buyer's own: held by their hold, or kept for their order while they pay.
function isMine(id) {
  return (!!state.hold && state.hold.seats.includes(id)) || (!!state.paying && state.paying.includes(id));
}

function isFree(id) {
  const e = state.seats.get(id);
  return !!e && e.status === "available";
}

// Marks the seats of the buyer's hold and selection, and unmarks any others marked before.
function markMine() {
  const svg = $("map");
  for (const el of [...svg.querySelectorAll(".seat.mine, .seat[aria-checked=\"true\"]")]) {
    el.classList.remove("mine");
    el.setAttribute("aria-checked", "false");
  }
  for (const id of [...(state.hold ? state.hold.seats : []), ...(state.paying || []), ...state.selected]) {
    const e = state.seats.get(id);
    if (!e) continue;
    e.el.classList.toggle("mine", isMine(id) && e.status === "held");
    e.el.setAttribute("aria-checked", String(state.selected.has(id)));
  }
}

// Holds lapse without a message: turn their seats available at held_until.
function expireHolds() {
  const now = Date.now();
  for (const [id, e] of state.seats) {
    if (e.status === "held" && e.heldUntil !== null && e.heldUntil <= now) setStatus(id, "available", null);
  }
  if (state.hold) {
    const left = Math.max(0, Math.round((state.hold.expiresAt - now) / 1000));
    $("countdown").textContent = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
    if (left === 0) {
      state.hold = null;
      say("Your hold expired; the seats are back on sale.", "warn");
      state.selected.clear();
      markMine();
      renderBasket();
    }
  }
}

function toggle(id) {
  const entry = state.seats.get(id);
  if (!entry || state.hold) return;
  if (state.selected.has(id)) {
    state.selected.delete(id);
  } else if (entry.status !== "available") {
    say(entry.seat.label + " is " + entry.status.replace(/_/g, " ") + ".", "warn");
    return;
  } else if (state.selected.size >= state.event.max_seats_per_user) {
    say("You can choose at most " + state.event.max_seats_per_user + " seats.", "warn");
    return;
  } else {
    state.selected.add(id);
    say("");
  }
  entry.el.setAttribute("aria-checked", String(state.selected.has(id)));
  renderBasket();
}

function rove(id, focus) {
  if (state.focusId && state.seats.has(state.focusId)) state.seats.get(state.focusId).el.setAttribute("tabindex", "-1");
  state.focusId = id;
  const el = state.seats.get(id).el;
  el.setAttribute("tabindex", "0");
  if (focus) el.focus();
}

function neighbour(id, key) {
  return Hall.neighbour(state.rows, state.rowOf, (seat) => state.seats.get(seat).seat.x, id, key);
}

function wireMap() {
  const svg = $("map");
  state.viewport = new Hall.Viewport(svg);
  state.viewport.wire();
  svg.addEventListener("click", (e) => {
    if (!state.viewport.tap(e)) return;
    const el = e.target.closest(".seat");
    if (!el) return;
    rove(el.dataset.seatId, true);
    toggle(el.dataset.seatId);
  });
  svg.addEventListener("keydown", (e) => {
    const el = e.target.closest(".seat");
    if (!el) return;
    const id = el.dataset.seatId;
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      toggle(id);
    } else if (e.key.startsWith("Arrow")) {
      e.preventDefault();
      rove(neighbour(id, e.key), true);
    }
  });
  $("zoom-in").onclick = () => state.viewport.zoomIn();
  $("zoom-out").onclick = () => state.viewport.zoomOut();
  $("zoom-fit").onclick = () => state.viewport.reset();
}

function renderLegend(seats) {
  const legend = $("legend");
  const swatch = (fill, extra, cls, mark) =>
    `<svg viewBox="-0.5 -0.5 1 1" aria-hidden="true">${defs()}<circle r="0.4" class="seat ${cls || ""}" ${extra || ""} fill="${fill}"/>${mark ? `<use href="#${mark}"/>` : ""}</svg>`;
  const items = state.event.ticket_types.map((t) =>
    `<li>${swatch(PALETTE[state.typeIndex.get(t.code)])}${esc(t.name)} · ${esc(money(t.price_cents, t.currency))}</li>`);
  items.push(`<li>${swatch("#fff", "aria-checked=\"true\"")}Your choice</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"held\"", "mine")}Your hold</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"held\"")}Held</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"sold\"")}Sold</li>`);
  items.push(`<li>${swatch("#fff", "data-status=\"not_for_sale\"")}Not for sale</li>`);
  const marked = (attr, mark, name) => {
    if ((seats || []).some((s) => s[attr])) items.push(`<li>${swatch("#5c6670", "", "", mark)}${name}</li>`);
  };
  marked("accessible", "mark-wheelchair", "Wheelchair space");
  marked("companion", "mark-companion", "Companion seat");
  marked("restricted_view", "mark-restricted", "Restricted view");
  legend.innerHTML = items.join("");
}

// ---- the basket ----

function renderBasket() {
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
  $("best").hidden = held;
  $("hold").hidden = held;
  $("hold").disabled = !state.selected.size;
  for (const b of ["extend", "buy", "release"]) $(b).hidden = !held;
  // A waiting-list offer is bought by its deadline: it cannot be extended.
  if (held && state.hold.offer) $("extend").hidden = true;
  $("hold-info").hidden = !held;
}

function wirePanel() {
  $("hold").onclick = holdSelection;
  const quantity = $("best-quantity");
  quantity.replaceChildren();
  for (let n = 1; n <= state.event.max_seats_per_user; n++) quantity.append(new Option(String(n), String(n)));
  quantity.value = String(Math.min(2, state.event.max_seats_per_user));
  const type = $("best-type");
  type.replaceChildren(new Option("Any", ""));
  for (const t of state.event.ticket_types) type.append(new Option(t.name + " · " + money(t.price_cents, t.currency), t.code));
  $("best").onsubmit = (ev) => { ev.preventDefault(); holdBest(); };
  $("extend").onclick = async () => {
    try {
      const r = await api("POST", `/v1/events/${state.event.id}/holds/${state.hold.token}/extend`, null);
      state.hold.expiresAt = Date.parse(r.expires_at);
      say("Extended.", "ok");
      expireHolds();
    } catch (e) { fail(e); }
  };
  $("buy").onclick = async () => {
    try {
      const order = await api("POST", `/v1/events/${state.event.id}/orders`, { hold_token: state.hold.token });
      // An event with a payment window: the seats are the buyer's until pay_by, while
      // they pay (on --demo, the test payment page).
      if (order.status === "pending_payment") {
        location.assign("/pay/" + encodeURIComponent(order.order_id));
        return;
      }
      showOrder(order);
      passEnded();
      state.hold = null;
      state.selected.clear();
      say("");
      markMine();
      renderBasket();
    } catch (e) { fail(e); }
  };
  $("release").onclick = async () => {
    try {
      await api("DELETE", `/v1/events/${state.event.id}/holds/${state.hold.token}`, null);
    } catch (e) { if (!(e instanceof Problem && e.status === 404)) { fail(e); return; } }
    const mine = state.hold.seats;
    state.hold = null;
    state.selected.clear();
    for (const id of mine) if (state.seats.get(id)?.status === "held") setStatus(id, "available", null);
    markMine();
    const hadTurn = !!state.pass;
    passEnded();
    say(hadTurn ? "Released. That ended your turn: choosing again means a new place in line." : "Released.", "ok");
    renderBasket();
  };
}

// The order box: what was bought, or what became of an order paid elsewhere.
function showOrder(order) {
  const box = $("order");
  box.hidden = false;
  box.textContent = "";
  const title = document.createElement("strong");
  const heading = {
    paid: "Order confirmed",
    pending_payment: "Awaiting payment",
    expired: "Payment window closed",
    cancelled: "Order cancelled",
  };
  title.textContent = heading[order.status] || order.status;
  const lines = document.createElement("ul");
  for (const s of order.seats) {
    const li = document.createElement("li");
    li.textContent = s.label;
    lines.append(li);
  }
  const total = document.createElement("p");
  const amount = money(order.total_cents, order.currency);
  total.textContent = {
    paid: "Paid " + amount,
    pending_payment: amount + " to pay by " + new Date(order.pay_by).toLocaleTimeString(),
    expired: "Not paid in time: the seats went back on sale",
    cancelled: "Cancelled",
  }[order.status] + " · order " + order.order_id;
  box.append(title, lines, total);
  if (order.status === "pending_payment") {
    const pay = document.createElement("a");
    pay.href = "/pay/" + encodeURIComponent(order.order_id);
    pay.textContent = "Pay now";
    box.append(pay);
  }
  box.dataset.orderId = order.order_id;
  box.dataset.status = order.status;
  state.paying = order.status === "pending_payment" ? order.seats.map((s) => s.id) : null;
  markMine();
}

async function holdSelection() {
  const seats = [...state.selected];
  if (!seats.length) return;
  $("hold").disabled = true;
  state.pending = new Set(seats);
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
    const first = state.seats.get(hold.seats[0].id);
    if (first) rove(first.seat.id, false);
  } catch (e) {
    if (e instanceof Problem && e.body.code === "seat_unavailable") {
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
function took(hold) {
  state.hold = { token: hold.hold_token, expiresAt: Date.parse(hold.expires_at), seats: hold.seats.map((s) => s.id) };
  for (const id of state.hold.seats) setStatus(id, "held", hold.expires_at);
  markMine();
  expireHolds();
}

// A refused hold: seats that just went leave the selection (the stream shows who has them).
function refused(e) {
  if (e instanceof Problem && e.body.code === "seat_unavailable" && e.body.seats && e.body.seats.length) {
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

function fail(e) {
  say(e instanceof Problem ? e.message : "Something went wrong: " + e.message, "warn");
}

// ---- the waiting list ----

// Nothing that suits the buyer: they wait in line, and seats that come back are offered
// to them here as a hold of theirs (their basket, with its countdown and Buy).
function wireWaitlist() {
  const id = state.event.id;
  const path = `/v1/events/${encodeURIComponent(id)}/waitlist`;
  $("waitlist").hidden = false;
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
const WAITLIST_POLL_MS = 3000;

// Shows where the buyer's entry stands; answers whether it is still in line.
async function showEntry(entry) {
  const status = entry ? entry.status : null;
  const waiting = status === "waiting";
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
    const until = new Date(entry.offer.expires_at).toLocaleTimeString([], { timeStyle: "short" });
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

// ---- general admission ----

function renderGa() {
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
    div.querySelector("form").onsubmit = async (ev) => {
      ev.preventDefault();
      const result = div.querySelector(".ga-result");
      try {
        const b = await api("POST", `/v1/events/${state.event.id}/bookings`, { area: a.code, quantity: Number(input.value) });
        result.textContent = "Booked " + b.quantity + " · " + money(b.total_cents, b.currency);
      } catch (e) {
        if (turnOver(e)) await backInLine("Your turn had ended; it is your turn again. Book now.");
        else result.textContent = e instanceof Problem ? e.message : "Something went wrong.";
      }
    };
    box.append(div);
  }
}

// ---- start ----

async function start() {
  window.boxoffice.timings.start = performance.now();
  const id = new URLSearchParams(location.search).get("event");
  try {
    await session();
    if (id) await showEvent(id);
    else await showEvents();
  } catch (e) {
    const fatal = $("fatal");
    fatal.hidden = false;
    fatal.textContent = e instanceof Problem && e.status === 404 ? "No such event." : "Could not load: " + e.message;
  }
  setInterval(() => { expireHolds(); if (state.event) renderPass(); }, 1000);
}

start();
