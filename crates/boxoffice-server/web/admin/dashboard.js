// An event's live dashboard: the counters by status (kept as changes arrive: a change
// moves one seat between two), revenue, the door (tickets let in, inside now, by gate,
// read every few seconds), the report, the map in organizer mode and the orders, all
// following the event stream.

import { esc } from "../core/format.js";
import { PALETTE } from "../core/hall.js";
import { follow } from "../core/stream.js";
import { $, api, errorBox, screen, onLeave, money, when, may } from "./shared.js";
import { organizerMap } from "./seats.js";
import { showReport } from "./report.js";
import { orderList } from "./orders.js";

// Check-ins reach no event stream: the door's counts are read this often.
const DOOR_EVERY_MS = 5000;

async function doorCounts(path) {
  const summary = await api("GET", path + "/checkins/summary");
  for (const name of ["tickets", "entered", "inside", "duplicates"]) {
    const el = document.querySelector(`[data-door=${name}]`);
    if (el) el.textContent = summary[name].toLocaleString("en");
  }
  const gates = $("by-gate");
  if (gates) {
    gates.innerHTML = summary.by_gate.map((g) =>
      `<li data-gate="${esc(g.gate || "")}"><span>${esc(g.gate || "No gate named")}</span><span class="meta">${g.entered.toLocaleString("en")} let in</span></li>`).join("");
  }
}

export async function dashboard(id) {
  const path = `/v1/events/${encodeURIComponent(id)}`;
  const event = await api("GET", path);
  const typeColour = new Map(event.ticket_types.map((t, i) => [t.code, PALETTE[i % PALETTE.length]]));
  const typeName = new Map(event.ticket_types.map((t) => [t.code, t.name]));
  const areaName = new Map(event.ga_areas.map((g) => [g.code, g.name]));
  const edits = may("write_catalog"), reads = may("read_orders");
  screen(event.name, `<div class="head"><h1>${esc(event.name)}</h1>
      <p class="meta">${esc(when(event.starts_at, event.time_zone))} · <a href="/?event=${esc(event.id)}">the buyers' page</a></p></div>
    <section class="counters" aria-label="The sale now">
      <div class="counter"><strong data-count="sold">–</strong><span>sold</span></div>
      <div class="counter"><strong data-count="held">–</strong><span>held</span></div>
      <div class="counter"><strong data-count="resale">–</strong><span>listed for resale</span></div>
      <div class="counter"><strong data-count="available">–</strong><span>available</span></div>
      <div class="counter"><strong data-count="not_for_sale">–</strong><span>held back</span></div>
      ${reads ? `<div class="counter"><strong id="revenue" data-revenue-cents="0">–</strong><span>revenue</span></div>` : ""}
      <div class="counter" id="queue-counter" hidden><strong id="queue-waiting">–</strong><span>waiting, <span id="queue-admitted">–</span> let in</span><span class="rate" id="queue-rate"></span></div>
      <div class="counter" id="waitlist-counter" hidden><strong id="waitlist-waiting">–</strong><span>on the waiting list, <span id="waitlist-offered">–</span> offered seats</span></div>
    </section>
    <section class="card door" aria-labelledby="door-title">
      <div class="head"><h2 id="door-title">At the door</h2><div class="door-actions">${may("check_in") ? `<a href="/scan?event=${esc(event.id)}">Open the scanner</a>` : ""}
        ${may("manage_keys") ? `<button type="button" id="pair-scanner">Pair a scanner</button>` : ""}</div></div>
      <div id="pairing" class="pairing" hidden aria-live="polite"></div>
      <div class="counters" aria-live="polite">
        <div class="counter"><strong data-door="entered">–</strong><span>let in, of <span data-door="tickets">–</span> tickets</span></div>
        <div class="counter"><strong data-door="inside">–</strong><span>inside now</span></div>
        <div class="counter"><strong data-door="duplicates">–</strong><span>let in twice (offline scanners)</span></div>
      </div>
      <ul id="by-gate" class="list gates"></ul>
    </section>
    ${reads && event.channels && event.channels.length ? `<section class="card" aria-labelledby="channels-title">
      <div class="head"><h2 id="channels-title">Sales channels</h2><p class="meta">Seats sold through a partner, to its buyers alone, until released.</p></div>
      <ul id="channels" class="list"></ul><div id="channels-result" aria-live="polite"></div></section>` : ""}
    ${reads ? `<div class="split">
      <section class="card" aria-labelledby="minute-title"><h2 id="minute-title">Seats sold a minute, last hour</h2>
        <svg id="chart" class="chart" role="img" aria-label="Seats sold a minute" viewBox="0 0 600 126" preserveAspectRatio="none"></svg>
        <div class="chart-axis"><span>an hour ago</span><span id="chart-most"></span></div></section>
      <section class="card" aria-labelledby="types-title"><h2 id="types-title">By ticket type</h2><div id="by-type" tabindex="0" role="region" aria-labelledby="types-title"></div></section>
    </div>
    <section class="card" aria-labelledby="sections-title"><h2 id="sections-title">By section</h2><div id="by-section" tabindex="0" role="region" aria-labelledby="sections-title"></div></section>` : ""}
    <section class="card organizer" aria-labelledby="map-title">
      ${edits ? `<div class="head"><h2 id="map-title">Seats</h2><p class="meta">Click a seat, shift-click to add, drag a box to select many; or arrow keys to move, Enter or Space to pick, Shift with an arrow to extend.</p></div>
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
      </div>` : `<div class="head"><h2 id="map-title">Seats</h2><p class="meta">As they stand now; this key may look, not change them.</p></div>`}
      <div id="map-result" aria-live="polite"></div>
      <svg id="map" role="group" aria-label="The event's seats. Arrow keys move between seats, Enter or Space picks, Shift with an arrow extends." xmlns="http://www.w3.org/2000/svg"></svg>
    </section>
    ${reads ? `<section class="card" aria-labelledby="orders-title">
      <div class="head"><h2 id="orders-title">Orders</h2><button type="button" id="csv">Download CSV</button></div>
      <form id="search" class="toolbar" role="search"><label>Find <input name="q" type="search" placeholder="order id, user id or seat" autocomplete="off"></label>
        <button type="submit">Search</button></form>
      <div id="orders-result" aria-live="polite"></div>
      <ul id="orders" class="list orders"></ul>
      <button type="button" id="more" hidden>More orders</button>
    </section>` : ""}`);


  const map = organizerMap(path, { typeName, typeColour });
  const names = { typeName, areaName, sectionName: map.sectionName };
  const tally = { sold: 0, held: 0, resale: 0, available: 0, not_for_sale: 0 };
  const counts = (recount) => {
    if (recount) {
      for (const k of Object.keys(tally)) tally[k] = 0;
      for (const st of known.values()) tally[st]++;
    }
    for (const [name, n] of Object.entries(tally)) document.querySelector(`[data-count=${name}]`).textContent = n.toLocaleString("en");
  };
  const known = new Map(); // seat id -> status, as the stream last said
  const orders = reads ? orderList(event, path, map) : { refresh() {} };

  // The report and the first page of orders, read again at most once a second after the
  // stream says something changed.
  let reportTimer = null;
  const soon = () => {
    reportTimer ??= setTimeout(() => {
      reportTimer = null;
      if (reads) showReport(event, path, names);
      orders.refresh();
    }, 1000);
  };
  const stream = follow(path, {
    token: null,
    snapshot: ({ seats, shapes }) => {
      map.show(seats, shapes);
      known.clear();
      for (const s of seats) known.set(s.id, s.status);
      counts(true);
      soon();
    },
    seats: (changes) => {
      for (const c of changes) {
        const was = known.get(c.id);
        if (was === undefined || was === c.status) continue;
        tally[was]--;
        tally[c.status]++;
        known.set(c.id, c.status);
        map.status(c.id, c.status);
      }
      counts();
      soon();
    },
    ga: soon,
    failed: (e) => { $("map-result").innerHTML = errorBox(e); },
  });
  const minuteTicker = setInterval(soon, 60000);
  if ($("pair-scanner")) $("pair-scanner").onclick = () => pairScanner(event);
  const door = () => doorCounts(path).catch(() => {});
  const doorTicker = setInterval(door, DOOR_EVERY_MS);
  door();
  onLeave(() => { stream.close(); clearTimeout(reportTimer); clearInterval(minuteTicker); clearInterval(doorTicker); });
  if (reads) showReport(event, path, names);
}

// "Pair a scanner": a check-in key for this event alone (until a day after it starts),
// shown as a QR code a phone's camera opens straight into the scanner, signed in, and as
// the link itself. The key is shown here once and kept nowhere.
async function pairScanner(event) {
  const box = $("pairing");
  const button = $("pair-scanner");
  button.disabled = true;
  try {
    const pairing = await api("POST", `/v1/events/${encodeURIComponent(event.id)}/scanner-pairings`, { json: { origin: location.origin } });
    box.hidden = false;
    box.innerHTML = `<img alt="QR code that opens the scanner for ${esc(event.name)} on a phone, signed in" width="220" height="220"
        src="data:image/svg+xml;base64,${btoa(pairing.qr_svg)}">
      <div><p><strong>Scan this with the phone's camera</strong>: it opens the scanner for this event, signed in. The key works for this event alone, until ${esc(when(pairing.expires_at, event.time_zone))}; revoke it under Keys.</p>
      <p class="hint">Or open this link on the phone (shown once):</p>
      <p><code class="pairing-url" data-pairing-url>${esc(pairing.url)}</code></p></div>`;
  } catch (err) {
    box.hidden = false;
    box.innerHTML = errorBox(err);
  } finally {
    button.disabled = false;
  }
}
