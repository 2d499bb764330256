// The organization's audit log: who changed what with a key, newest first, filtered by
// action and target, each change's fields as before → after, read on a page at a time.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, when, organization } from "./shared.js";

// The actions the log records, for the filter's suggestions.
const ACTIONS = [
  "organization.created", "key.created", "key.revoked", "signing_key.created", "signing_key.retired",
  "entry_key.created", "webhook.created", "webhook.updated", "webhook.deleted", "venue.created",
  "venue.updated", "event.created", "event.updated", "event.allocations_put", "event.allocations_withdrawn",
  "event.channel_released", "season.created", "order.paid", "order.cancelled", "order.changed",
  "order.listed", "order.unlisted", "order.night_released", "order.night_reclaimed", "booking.paid",
  "booking.cancelled",
];

// One value as the organizer reads it.
function shown(value) {
  if (value === null || value === undefined) return `<span class="none">none</span>`;
  if (typeof value === "string" && /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) {
    return `<time datetime="${esc(value)}">${esc(when(value))}</time>`;
  }
  if (typeof value === "string") return esc(value);
  return `<code>${esc(JSON.stringify(value))}</code>`;
}

// The fields a change set: `[before, after]` pairs as before → after, others as set.
function changes(entry) {
  const fields = Object.entries(entry.changes || {});
  if (!fields.length) return "";
  return `<table class="changes"><caption class="visually-hidden">Fields changed</caption>
    <thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col" aria-label="becomes"></th><th scope="col">After</th></tr></thead>
    <tbody>${fields.map(([field, value]) => {
      const pair = Array.isArray(value) && value.length === 2;
      return `<tr><th scope="row"><code>${esc(field)}</code></th>
        <td>${pair ? shown(value[0]) : `<span class="none">–</span>`}</td><td aria-hidden="true">→</td>
        <td>${shown(pair ? value[1] : value)}</td></tr>`;
    }).join("")}</tbody></table>`;
}

function entryItem(e) {
  // The server's own token (no key id) is the server administrator, as the header says.
  const by = `${e.actor.key_id ? e.actor.key_name : "Server administrator"} · ${e.actor.role}`;
  return `<li data-audit-id="${esc(e.id)}" data-audit-action="${esc(e.action)}"><div class="entry">
      <div><strong>${esc(e.action)}</strong> · ${esc(e.target.type)} <code>${esc(e.target.id)}</code></div>
      <div class="meta">${esc(when(e.at))} · by ${esc(by)}${e.request_id ? ` · request <code>${esc(e.request_id)}</code>` : ""}</div>
      ${changes(e)}</div></li>`;
}

export async function auditScreen() {
  const path = `/v1/organizations/${encodeURIComponent(organization())}/audit`;
  screen("Audit log", `<h1>Audit log</h1>
    <p class="hint">Every change made with a key, newest first. Entries are never changed or removed.</p>
    <form id="audit-filter" class="toolbar" role="search">
      <label>Action <input name="action" list="audit-actions" autocomplete="off" placeholder="event.updated"></label>
      <datalist id="audit-actions">${ACTIONS.map((a) => `<option value="${a}"></option>`).join("")}</datalist>
      <label>Target <input name="target" autocomplete="off" placeholder="an id"></label>
      <button type="submit">Filter</button>
    </form>
    <div id="audit-result" aria-live="polite"></div>
    <ol id="audit" class="list audit"></ol>
    <button type="button" id="more" hidden>Older entries</button>`);

  let cursor = null;
  const read = async (reset) => {
    const form = $("audit-filter");
    const query = new URLSearchParams({ limit: "50" });
    for (const name of ["action", "target"]) {
      const value = form[name].value.trim();
      if (value) query.set(name, value);
    }
    if (!reset && cursor) query.set("cursor", cursor);
    try {
      const page = await api("GET", `${path}?${query}`);
      cursor = page.next_cursor;
      $("more").hidden = !cursor;
      if (reset) $("audit").innerHTML = "";
      $("audit").insertAdjacentHTML("beforeend", page.entries.map(entryItem).join(""));
      $("audit-result").textContent = reset && !page.entries.length ? "No entries match." : "";
    } catch (e) {
      $("audit-result").innerHTML = errorBox(e);
    }
  };
  $("audit-filter").onsubmit = (e) => { e.preventDefault(); read(true); };
  $("more").onclick = () => read(false);
  await read(true);
}
