// The organizer console: venues (imported from a pretix plan or a CSV file, previewed on
// the map before they are saved, exported again), events (created with a form, and each
// one's live dashboard, and the scanner for a key that checks tickets in), seasons (created
// from events; each one's sales and orders), the organization's keys, signing keys and
// webhook, and its audit log, routed in the browser
// under /admin. Each screen is a module of its own; this one routes between them, shows
// only what the signed-in key's role may do, and has a platform key pick an organization.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, go, leave, token, signIn, signOut, when, whoAmI, may, organization, pickOrganization, ofOrganization } from "./shared.js";
import { keysScreen } from "./keys.js";
import { auditScreen } from "./audit.js";
import { venueNew, venueShow } from "./venues.js";
import { designer } from "../design/designer.js";
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
$("change-organization").onclick = () => { pickOrganization(null); go("/admin"); };

// Organizations by id, as read once (a name never matters enough to read it again).
const organizations = new Map();

async function organizationName(id) {
  if (!organizations.has(id)) organizations.set(id, (await api("GET", `/v1/organizations/${encodeURIComponent(id)}`)).name);
  return organizations.get(id);
}

// The screens a path needs a right for, and which.
const NEEDS = [
  [/^\/admin\/(venues|events|seasons)\/new$/, "write_catalog"],
  [/^\/admin\/venues\/([^/]+\/)?design$/, "write_catalog"],
  [/^\/admin\/keys$/, "manage_keys"],
  [/^\/admin\/audit$/, "read_audit"],
];

async function route() {
  leave();
  if (!token()) return signIn();
  const path = location.pathname.replace(/\/+$/, "") || "/admin";
  let m;
  try {
    const me = await whoAmI();
    const chosen = !!organization();
    $("nav").hidden = false;
    $("nav-home").hidden = !chosen;
    $("nav-keys").hidden = !chosen || !may("manage_keys");
    $("nav-audit").hidden = !chosen || !may("read_audit");
    $("change-organization").hidden = !chosen || me.role !== "platform";
    if (!chosen) {
      $("who").textContent = `${signedInAs(me)} · ${me.role}`;
      return await chooseOrganization();
    }
    const shown = await organizationName(organization()).catch((e) => {
      if (e.status !== 404) throw e;
      pickOrganization(null); // Gone, or never this key's: pick again.
      return null;
    });
    if (shown === null) return await chooseOrganization();
    $("who").textContent = `${signedInAs(me)} · ${me.role} · ${shown}`;
    const needed = NEEDS.find(([pattern]) => pattern.test(path));
    if (needed && !may(needed[1])) {
      screen("Not for this key", `<h1>Not for this key</h1><p>A key with the role <strong>${esc(me.role)}</strong> may not do this.</p><p><a href="/admin" data-nav>Back to the console</a></p>`);
    } else if (path === "/admin") await home();
    else if (path === "/admin/keys") await keysScreen();
    else if (path === "/admin/audit") await auditScreen();
    else if (path === "/admin/venues/new") await venueNew();
    else if (path === "/admin/venues/design") await designer(null);
    else if ((m = path.match(/^\/admin\/venues\/([^/]+)\/design$/))) await designer(decodeURIComponent(m[1]));
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

// A platform key acts in every organization: it picks the one the screens show (the only
// one, when there is one).
async function chooseOrganization() {
  const list = (await api("GET", "/v1/organizations")).organizations;
  if (list.length === 1) {
    organizations.set(list[0].id, list[0].name);
    pickOrganization(list[0].id);
    return route();
  }
  screen("Choose an organization", `<section class="card signin" aria-labelledby="organization-title">
    <h1 id="organization-title">Choose an organization</h1>
    <p class="hint">A platform key acts in every organization. The console shows one at a time; change it from the top bar.</p>
    <form id="organization-form" class="form">
      <label>Organization <select name="organization">${list.map((o) =>
        `<option value="${esc(o.id)}">${esc(o.name)} (${esc(o.slug)})</option>`).join("")}</select></label>
      <button type="submit">Open</button>
    </form></section>`);
  $("organization-form").onsubmit = (e) => {
    e.preventDefault();
    for (const o of list) organizations.set(o.id, o.name);
    pickOrganization(e.target.organization.value);
    go(location.pathname + location.search);
  };
}

async function home() {
  const [venues, events, seasons] = await Promise.all(
    ["/v1/venues", "/v1/events", "/v1/seasons"].map((path) => api("GET", ofOrganization(path))));
  const writes = may("write_catalog"), scans = may("check_in");
  const venueItems = venues.venues.map((v) => `<li data-venue-id="${esc(v.id)}">
      <a href="/admin/venues/${esc(v.id)}" data-nav>${esc(v.name)}</a>
      <span class="meta">${v.seat_count.toLocaleString("en")} seats</span></li>`).join("");
  const eventItems = events.events.map((ev) => `<li data-event-id="${esc(ev.id)}">
      <a href="/admin/events/${esc(ev.id)}" data-nav>${esc(ev.name)}</a>
      <span class="meta">${esc(when(ev.starts_at, ev.time_zone))}${scans ? ` · <a href="/scan?event=${esc(ev.id)}" data-scan>Scan tickets</a>` : ""}</span></li>`).join("");
  screen("Venues and events", `<h1>Venues and events</h1><div class="split">
    <section class="card" aria-labelledby="venues-title">
      <div class="head"><h2 id="venues-title">Venues</h2>${writes ? `<span><a href="/admin/venues/design" data-nav>Draw a venue</a> · <a href="/admin/venues/new" data-nav>Import a venue</a></span>` : ""}</div>
      ${venueItems ? `<ul class="list">${venueItems}</ul>` : `<p class="hint">No venues yet${writes ? ": draw one, or import one from a pretix plan or a spreadsheet" : ""}.</p>`}
    </section>
    <section class="card" aria-labelledby="events-title">
      <div class="head"><h2 id="events-title">Events</h2>${writes ? `<a href="/admin/events/new" data-nav>New event</a>` : ""}</div>
      ${eventItems ? `<ul class="list">${eventItems}</ul>` : `<p class="hint">No events yet.</p>`}
    </section>
    ${seasonsCard(seasons.seasons)}</div>`);
}

route();

// Who signed in, as the header names them: a key by its name; the server's own token (no
// key id) as what it is, not the setting that holds it.
function signedInAs(me) {
  return me.key_id ? me.name : "Server administrator";
}
