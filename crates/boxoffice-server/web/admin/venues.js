// The venue screens: importing one from a pretix plan or a CSV file (previewed on the map,
// as the server would save it, before it is saved), and a venue's map with its pretix
// export.

import { esc } from "../core/format.js";
import { PALETTE, draw } from "../core/hall.js";
import { $, api, errorBox, screen, go, download, may, organization } from "./shared.js";
import { openDraft } from "../design/designer.js";

// A venue's seats as the map draws them, from its sections and rows.
function venueSeats(venue) {
  return venue.sections.flatMap((section) => section.rows.flatMap((row) =>
    row.seats.map((seat) => ({ ...seat, section: section.id, row: row.label, status: "available" }))));
}

export async function venueNew() {
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
      <div class="actions"><button type="button" data-action="save-venue" disabled>Save venue</button>
        <button type="button" data-action="open-in-designer" disabled>Open in designer</button></div>
    </div>`);
  const form = $("import");
  const save = document.querySelector("[data-action=save-venue]");
  const open = document.querySelector("[data-action=open-in-designer]");
  let file = null, previewed = null;
  const request = async (dryRun) => {
    const csv = /\.csv$/i.test(file.name) || file.type === "text/csv";
    const name = form.name.value.trim();
    const query = new URLSearchParams({ format: csv ? "csv" : "pretix", organization_id: organization() });
    if (name) query.set("name", name);
    if (dryRun) query.set("dry_run", "true");
    return api("POST", `/v1/venues/import?${query}`, { body: await file.text(), type: csv ? "text/csv" : "application/json" });
  };
  const preview = async () => {
    file = form.venue_file.files[0] || null;
    save.disabled = open.disabled = true;
    $("preview-card").hidden = true;
    if (!file) return;
    try {
      const venue = await request(true);
      $("import-result").innerHTML = "";
      $("preview-card").hidden = false;
      $("preview-summary").textContent = `${venue.name}: ${venue.seat_count.toLocaleString("en")} seats in ${venue.sections.length} sections`;
      draw($("map"), venueSeats(venue), venue.shapes, { colour: () => PALETTE[0] });
      save.disabled = open.disabled = false;
      previewed = venue;
      save.textContent = `Save ${venue.name} (${venue.seat_count.toLocaleString("en")} seats)`;
    } catch (e) {
      $("import-result").innerHTML = errorBox(e);
    }
  };
  form.venue_file.onchange = preview;
  form.name.onchange = () => file && preview();
  form.onsubmit = (e) => e.preventDefault();
  open.onclick = () => openDraft(previewed);
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

export async function venueShow(id) {
  const venue = await api("GET", `/v1/venues/${encodeURIComponent(id)}`);
  screen(venue.name, `<div class="head"><h1>${esc(venue.name)}</h1>
      <p class="meta">${venue.seat_count.toLocaleString("en")} seats in ${venue.sections.length} sections</p></div>
    <div class="toolbar">${may("write_catalog") ? `<a href="/admin/events/new?venue=${esc(venue.id)}" data-nav>New event in this venue</a>
      <a href="/admin/venues/${esc(venue.id)}/design" data-nav>Open in designer</a>` : ""}
      <button type="button" id="export">Download as a pretix plan</button></div>
    <div class="card"><svg id="map" role="img" aria-label="The venue's seats" xmlns="http://www.w3.org/2000/svg"></svg></div>`);
  draw($("map"), venueSeats(venue), venue.shapes, { colour: () => PALETTE[0] });
  $("export").onclick = async () => download(
    await api("GET", `/v1/venues/${encodeURIComponent(id)}/export?format=pretix`, { blob: true }),
    `${venue.name.replace(/[^A-Za-z0-9_-]+/g, "-")}.pretix.json`);
}
