// The Boxoffice seat-map page: the event list, or one event's map (its layout and statuses
// followed live), a basket held all or nothing, checkout and the tickets, standing areas
// and the waiting list, and the buyer's own orders there; or, at `?order=<id>` (or
// `?booking=<id>`), one order's tickets. An event with a waiting room shows the line
// first. Reading is open to all; holding
// needs a buyer: a platform's token handed to the page, or an anonymous session where the
// server hands those out.

import { Problem } from "../core/api.js";
import { eventTime } from "../core/format.js";
import { follow } from "../core/stream.js";
import { PALETTE } from "../core/hall.js";
import { $, state, buyer, signIn, read, api, say, fail, changed, timed, reveal } from "./shared.js";
import { applySnapshot, setStatus, wireMap, expireHolds, renderLegend } from "./map.js";
import { wirePanel, showOrder } from "./basket.js";
import { waitForTurn, renderPass } from "./line.js";
import { wireWaitlist, renderGa, gaLeft } from "./extras.js";
import { showOrderPage } from "./tickets.js";
import { wireMine } from "./mine.js";

async function showEvents() {
  $("events").hidden = false;
  const { events } = await read("/v1/events");
  const list = $("event-list");
  list.replaceChildren();
  for (const e of events) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = "/?event=" + encodeURIComponent(e.id);
    a.innerHTML = "<strong></strong><br><span class=\"when\"></span>";
    a.querySelector("strong").textContent = e.name;
    a.querySelector(".when").textContent = eventTime(e.starts_at, e.time_zone);
    li.append(a);
    list.append(li);
  }
  $("events-empty").hidden = events.length > 0;
}

async function showEvent(id) {
  state.event = await read("/v1/events/" + encodeURIComponent(id));
  const e = state.event;
  document.title = e.name + " · Boxoffice";
  // The line is for buyers who may hold: a reader goes straight to the map.
  if (buyer.token && e.queue && e.queue.enabled) await waitForTurn();
  $("event-name").textContent = e.name;
  $("event-meta").textContent = eventTime(e.starts_at, e.time_zone) + " · up to " + e.max_seats_per_user + " seats per buyer";
  e.ticket_types.forEach((t, i) => state.typeIndex.set(t.code, i % PALETTE.length));
  $("event").hidden = false;
  renderLegend();
  renderGa(!!buyer.token);
  wireMap();
  if (buyer.token) {
    wirePanel();
    wireWaitlist();
  } else {
    readOnly();
  }
  changed();
  renderPass();
  connect();
  // The buyer's own orders here; and back from paying elsewhere, what became of the order
  // (or the booking), in view.
  const orders = await wireMine();
  const query = new URLSearchParams(location.search);
  const paying = query.get("order") || query.get("booking");
  if (paying && buyer.token) {
    try {
      const mine = orders.find((o) => (o.order_id || o.booking_id) === paying);
      showOrder(mine && mine.booking_id ? mine : await api("GET", "/v1/orders/" + encodeURIComponent(paying)));
      reveal($("order"));
    } catch (err) { fail(err); }
  }
}

// No buyer to hold seats for: the map is for reading, and the panel says why and how a
// platform signs its buyer in.
function readOnly() {
  for (const id of ["basket", "total", "hold", "best", "extend", "buy", "release", "hold-info", "waitlist"]) $(id).hidden = true;
  $("signin-needed").hidden = false;
}

function connect() {
  const live = $("live");
  const show = (now) => {
    live.textContent = now === "live" ? "Live" : "Reconnecting…";
    live.dataset.state = now;
  };
  state.stream = follow("/v1/events/" + encodeURIComponent(state.event.id), {
    token: buyer.handed ? buyer.token : null,
    snapshot: (body) => {
      timed("snapshotArrived");
      show("live");
      applySnapshot(body);
    },
    seats: (changes) => {
      for (const c of changes) setStatus(c.id, c.status, c.held_until);
      changed();
    },
    ga: gaLeft,
    state: (now) => { if (now !== "live" || state.seats.size) show(now); },
    failed: (e) => say(e.message, "error"),
  });
}

async function start() {
  timed("start");
  const query = new URLSearchParams(location.search);
  const id = query.get("event"), order = query.get("order"), booking = query.get("booking");
  try {
    await signIn();
    if (id) await showEvent(id);
    else if ((order || booking) && buyer.token) await showOrderPage(order || booking, showOrder, booking ? "booking" : "order");
    else await showEvents();
  } catch (e) {
    const fatal = $("fatal");
    fatal.hidden = false;
    fatal.textContent = e instanceof Problem && e.status === 404 ? (id ? "No such event." : "No such order.")
      : e instanceof Problem && e.status === 403 ? "This order is another buyer's."
      : "Could not load: " + e.message;
  }
  setInterval(() => { expireHolds(); if (state.event) renderPass(); }, 1000);
}

start();
