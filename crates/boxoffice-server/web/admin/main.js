// The organizer console: venues (imported from a pretix plan or a CSV file, previewed on
// the map before they are saved, exported again), events (created with a form, and each
// one's live dashboard), seasons (created from events; each one's sales and orders),
// routed in the browser under /admin. Each screen is a module of its own; this one routes
// between them.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, go, leave, token, signIn, signOut, when } from "./shared.js";
import { venueNew, venueShow } from "./venues.js";
import { eventNew } from "./event-new.js";
import { dashboard } from "./dashboard.js";
import { seasonsCard, seasonNew, seasonShow } from "./seasons.js";

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-nav]");
  if (!a || e.metaKey || e.ctrlKey || e.shiftKey) return;
  e.preventDefault();
  go(a.getAttribute("href"));
});
window.addEventListener("popstate", route);
$("sign-out").onclick = () => signOut();

async function route() {
  leave();
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
    else if (path === "/admin/seasons/new") await seasonNew();
    else if ((m = path.match(/^\/admin\/seasons\/([^/]+)$/))) await seasonShow(decodeURIComponent(m[1]));
    else screen("Not found", `<h1>Not found</h1><p><a href="/admin" data-nav>Back to the console</a></p>`);
  } catch (e) {
    if (e.status !== 401) screen("Error", `<h1>That did not work</h1>${errorBox(e)}<p><a href="/admin" data-nav>Back to the console</a></p>`);
  }
}

async function home() {
  const [venues, events, seasons] = await Promise.all([api("GET", "/v1/venues"), api("GET", "/v1/events"), api("GET", "/v1/seasons")]);
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
    </section>
    ${seasonsCard(seasons.seasons)}</div>`);
}

route();
