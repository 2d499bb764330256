// The designer's forms: adding rows, an area, a shape or a text, and the fields of the item
// selected. Each is HTML from plain data; the designer reads them back with `fields`.

import { esc } from "../core/format.js";
import { NUMBERINGS } from "./geometry.js";
import { FORMS, SHAPES, marksOf } from "./model.js";

const options = (table, chosen) =>
  Object.entries(table).map(([v, label]) => `<option value="${v}"${v === chosen ? " selected" : ""}>${esc(label)}</option>`).join("");

const field = (label, name, value, extra = "") =>
  `<label>${label} <input name="${name}" value="${esc(value ?? "")}" autocomplete="off" ${extra}></label>`;

// The fields of a block of rows, filled from `b` (a block, or the defaults).
function blockFields(b) {
  return `${field("Section", "section", b.section, "required")}
    <div class="row">${field("Rows", "rows", b.rows, 'inputmode="numeric" size="4"')}
      ${field("Seats per row", "seatsPerRow", b.seatsPerRow, 'inputmode="numeric" size="4"')}
      ${field("First row", "firstRow", b.firstRow, 'size="4"')}</div>
    <label>Numbering <select name="numbering">${options(NUMBERINGS, b.numbering)}</select></label>
    <div class="row">${field("Curve", "curve", b.curve, 'inputmode="decimal" size="4" aria-describedby="curve-hint"')}
      ${field("Seat spacing", "spacing", b.spacing, 'inputmode="decimal" size="4"')}</div>
    <p class="hint" id="curve-hint">Curve: degrees from 0 (straight) to 180; each row bends about one centre, towards the stage.</p>
    ${field("Category", "category", b.category, 'aria-describedby="category-hint"')}
    <p class="hint" id="category-hint">Optional: the price zone events can allocate by.</p>`;
}

export const BLOCK_DEFAULTS = { section: "", rows: "5", seatsPerRow: "10", firstRow: "A", numbering: "ltr", curve: "0", spacing: "1", category: "" };

// The form of a tool: "rows", "area", "shape" or "text".
export function toolForm(tool) {
  const body = {
    rows: `<h2 id="tool-title">Add rows</h2>${blockFields(BLOCK_DEFAULTS)}`,
    area: `<h2 id="tool-title">Add area</h2>${field("Name", "text", "", 'required aria-describedby="area-hint"')}
      <p class="hint" id="area-hint">A standing area: events sell it as a general-admission area with their own capacity.</p>
      <div class="row">${field("Width", "w", "12", 'inputmode="decimal" size="4"')}${field("Height", "h", "8", 'inputmode="decimal" size="4"')}</div>`,
    shape: `<h2 id="tool-title">Add shape</h2>
      <label>Kind <select name="shape">${options(SHAPES, "stage")}</select></label>
      <label>Form <select name="form">${options(FORMS, "rect")}</select></label>
      ${field("Text", "text", "STAGE")}
      <div class="row">${field("Width", "w", "16", 'inputmode="decimal" size="4"')}${field("Height", "h", "4", 'inputmode="decimal" size="4"')}</div>`,
    text: `<h2 id="tool-title">Add text</h2>${field("Text", "text", "", "required")}${field("Size", "size", "1", 'inputmode="decimal" size="4"')}`,
  }[tool];
  return `<form class="form" data-tool-form="${tool}" aria-labelledby="tool-title" novalidate>${body}
    <div class="toolbar"><button type="submit">Add</button><button type="button" data-action="cancel-tool">Cancel</button></div>
    <div data-form-errors aria-live="polite"></div></form>`;
}

// The fields of the selected item, to change it.
export function itemForm(item, title) {
  let body = "";
  if (item.kind === "rows") body = blockFields(item);
  else if (item.kind === "seats") {
    body = field("Section", "section", item.section, "required");
    if (item.rows.length === 1) body += field("Row", "label", item.rows[0].label, "required");
  } else body = field("Text", "text", item.text, item.kind === "text" ? "required" : "");
  if (item.kind === "rows" || item.kind === "seats") {
    const marks = marksOf(item);
    body += `${field("Wheelchair spaces", "accessible", marks.accessible, 'aria-describedby="marks-hint"')}
      ${field("Companion seats", "companion", marks.companion, 'aria-describedby="marks-hint"')}
      <p class="hint" id="marks-hint">Seats as row-number, such as A-1 A-2. Best available keeps them for buyers who ask.</p>`;
  }
  return `<form class="form" data-item-form="${esc(item.id)}" aria-labelledby="selection-title" novalidate>
    <h2 id="selection-title">${esc(title)}</h2>${body}
    ${field("Rotation", "rotation", item.rotation, 'inputmode="decimal" size="4" aria-describedby="rotation-hint"')}
    <p class="hint" id="rotation-hint">Degrees; Shift with the arrow keys turns by 5. Arrow keys move it, Delete removes it.</p>
    <div class="toolbar"><button type="submit">Apply</button><button type="button" data-action="remove-item">Remove</button></div>
    <div data-form-errors aria-live="polite"></div></form>`;
}

// A form's fields by name, as text.
export function fields(form) {
  const out = {};
  for (const el of form.elements) if (el.name) out[el.name] = el.value;
  return out;
}

// Shows `errors` ({field: message}) beside the form's fields, or clears them.
export function showErrors(form, errors) {
  for (const el of form.elements) {
    if (!el.name) continue;
    if (errors[el.name]) el.setAttribute("aria-invalid", "true");
    else el.removeAttribute("aria-invalid");
  }
  const box = form.querySelector("[data-form-errors]");
  const messages = Object.values(errors);
  box.innerHTML = messages.length ? `<div class="error" role="alert"><ul>${messages.map((m) => `<li>${esc(m)}</li>`).join("")}</ul></div>` : "";
  const first = [...form.elements].find((el) => errors[el.name]);
  if (first) first.focus();
}
