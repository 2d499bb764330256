// The console's designer (/admin/venues/design, /admin/venues/{id}/design): an organizer
// draws a hall, blocks of rows, standing areas, shapes, texts and the focal point, with the
// mouse and the keyboard, undoes and redoes, sees what is wrong as it draws, and saves the
// venue through the API. The drawing is model.js's plain data; this module turns clicks,
// keys and forms into its edits and keeps the screen in step.

import { esc } from "../core/format.js";
import { $, api, errorBox, screen, go, organization, ofOrganization, onLeave } from "../admin/shared.js";
import * as M from "./model.js";
import { problems } from "./checks.js";
import * as H from "./history.js";
import { Canvas, describe } from "./canvas.js";
import { toolForm, itemForm, fields, showErrors } from "./forms.js";

// A venue from an import's preview, waiting to be opened in the designer.
const DRAFT = "boxoffice.design.draft";
export const openDraft = (venue) => { sessionStorage.setItem(DRAFT, JSON.stringify(venue)); go("/admin/venues/design?from=import"); };

const PHONE = "(max-width: 640px)";
const TURN = 5;

// Where a new item goes: below everything drawn (so blocks added one after another never
// overlap), in line with the middle of the hall; a stage goes above it all, in front.
function below(canvas, drawing, gap) {
  if (!drawing.items.length) return { x: 0, y: 0 };
  const boxes = [...canvas.boxes.values()];
  const bottom = Math.max(...boxes.map((b) => b.y + b.h));
  const left = Math.min(...boxes.map((b) => b.x)), right = Math.max(...boxes.map((b) => b.x + b.w));
  return { x: Math.round((left + right) / 2), y: Math.ceil(bottom + gap) };
}

function above(canvas, drawing, gap) {
  if (!drawing.items.length) return { x: 0, y: 0 };
  const boxes = [...canvas.boxes.values()];
  const top = Math.min(...boxes.map((b) => b.y));
  const left = Math.min(...boxes.map((b) => b.x)), right = Math.max(...boxes.map((b) => b.x + b.w));
  return { x: Math.round((left + right) / 2), y: Math.floor(top - gap) };
}

export async function designer(id) {
  let venue = null, copy = false;
  const draft = new URLSearchParams(location.search).get("from") === "import" && sessionStorage.getItem(DRAFT);
  if (id) {
    venue = await api("GET", `/v1/venues/${encodeURIComponent(id)}`);
    const events = await api("GET", ofOrganization("/v1/events"));
    copy = events.events.some((e) => e.venue_id === id);
  } else if (draft) {
    venue = JSON.parse(draft);
  }
  const start = venue ? M.fromVenue(venue) : M.empty("");
  if (copy) start.name = `${venue.name} (copy)`;
  const title = !venue ? "Draw a venue" : copy ? `A copy of ${venue.name}` : draft ? `Imported: ${venue.name}` : `Edit ${venue.name}`;
  const readOnly = window.matchMedia(PHONE).matches;
  screen(title, `<div class="head"><h1>${esc(title)}</h1></div>
    ${copy ? `<p class="notice" role="note">Events use this venue, so its seats stay as they are: saving makes a new venue from this copy.</p>` : ""}
    ${readOnly ? `<p class="notice" role="note">Drawing a venue needs a larger screen (a tablet or a computer). This is the drawing as it is.</p>` : ""}
    <div class="designer${readOnly ? " read-only" : ""}">
      <div class="toolbar" role="toolbar" aria-label="Drawing" ${readOnly ? "hidden" : ""}>
        <label class="name">Venue name <input id="venue-name" value="${esc(start.name)}" autocomplete="off"></label>
        <button type="button" data-tool="rows">Add rows</button><button type="button" data-tool="area">Add area</button>
        <button type="button" data-tool="shape">Add shape</button><button type="button" data-tool="text">Add text</button>
        <button type="button" id="focal" aria-describedby="focal-hint">Focal point</button>
        <button type="button" id="undo" aria-keyshortcuts="Control+Z">Undo</button>
        <button type="button" id="redo" aria-keyshortcuts="Control+Shift+Z">Redo</button>
        <label class="check"><input type="checkbox" id="snap" checked> Snap to grid</label>
        <button type="button" id="save" class="primary">Save venue</button>
      </div>
      <p class="hint" id="focal-hint" ${readOnly ? "hidden" : ""}>The focal point (a cross) is where the seats look: best available prefers, among equal seats, those nearest it. It goes to the stage's centre, or to the middle of the view.</p>
      <div class="designer-body">
        <div class="drawing-box">
          <svg id="drawing" role="application" aria-label="The drawing: Tab to an item, arrow keys move it" xmlns="http://www.w3.org/2000/svg"></svg>
          <p class="empty-hint" id="empty-hint" hidden>Nothing is drawn yet. Start with <strong>Add rows</strong> (a block of seats) or <strong>Add area</strong> (a standing area), then a stage with <strong>Add shape</strong>.</p>
          <p class="hint legend" id="grid-legend" ${readOnly ? "hidden" : ""}></p>
        </div>
        <aside class="designer-side" ${readOnly ? "hidden" : ""}>
          <section class="card" id="tool" hidden></section>
          <section class="card" id="selection" aria-live="polite"><p class="hint">Click an item, or Tab to it, to change it.</p></section>
          <section class="card" aria-labelledby="problems-title"><h2 id="problems-title">Problems</h2><ul id="problems" class="list"></ul></section>
          <section class="card" aria-labelledby="drawn-title"><h2 id="drawn-title">Drawn</h2><ul id="drawn" class="list"></ul></section>
        </aside>
      </div>
      <div id="design-result" aria-live="polite"></div>
    </div>`);

  let history = H.start(start);
  let selected = null;
  let live = null; // the drawing while an item is dragged, before the drag is recorded
  const canvas = new Canvas($("drawing"), {
    select: (item) => { if (item !== selected) { selected = item; show(); } },
    drag: (item, dx, dy, done) => {
      const step = $("snap").checked ? 1 : 0;
      const snap = (v) => (step ? Math.round(v / step) * step : v);
      const moved = M.move(history.present, item, snap(dx), snap(dy));
      if (done) { live = null; change(moved); } else { live = moved; show(); }
    },
    key: (item, e) => onItemKey(item, e),
  }, { readOnly });

  const drawing = () => live || history.present;
  function show({ refit = false } = {}) {
    const d = drawing();
    if (selected && !d.items.some((i) => i.id === selected)) selected = null;
    canvas.draw(d, selected, { refit });
    $("empty-hint").hidden = readOnly || d.items.length > 0;
    if (readOnly) return;
    const step = canvas.step;
    $("grid-legend").textContent = step === 1
      ? "Grid: a square is 1 unit, a heavy line every 5. One unit is the usual distance between two seats of a row; items snap to it. Widths, heights and spacings are in units."
      : `Grid: a square is ${step} units, about the distance between two seats of a row in this plan's units; a heavy line every ${5 * step}. Widths, heights and spacings are in the same units.`;
    $("drawn").innerHTML = d.items.length
      ? d.items.map((i) => `<li><button type="button" class="item-link" data-pick="${esc(i.id)}" aria-current="${i.id === selected}">${esc(describe(i))}</button></li>`).join("")
      : `<li class="hint" data-nothing-drawn>Nothing yet.</li>`;
    $("undo").disabled = !H.canUndo(history);
    $("redo").disabled = !H.canRedo(history);
    const found = problems({ ...d, name: $("venue-name").value });
    $("problems").innerHTML = found.length
      ? found.map((p) => `<li data-problem="${esc(p.kind)}"${p.items.length ? ` data-items="${esc(p.items.join(" "))}"` : ""}>${esc(p.message)}</li>`).join("")
      : `<li class="hint" data-no-problems>Nothing stops saving.</li>`;
    $("save").setAttribute("aria-disabled", String(found.length > 0));
    const form = $("selection").querySelector("form");
    if (!live && (!form || form.dataset.itemForm !== selected)) {
      const item = d.items.find((i) => i.id === selected);
      $("selection").innerHTML = item ? itemForm(item, describe(item)) : `<p class="hint">Click an item, or Tab to it, to change it.</p>`;
    }
  }
  function change(next, { refit = false } = {}) {
    $("design-result").innerHTML = "";
    history = H.record(history, next);
    show({ refit });
  }
  function travel(step) {
    $("design-result").innerHTML = "";
    history = step(history);
    $("selection").innerHTML = "";
    show();
  }

  function onItemKey(item, e) {
    const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (arrows[e.key]) {
      e.preventDefault();
      const [dx, dy] = arrows[e.key];
      if (e.shiftKey) change(M.turnBy(history.present, item, (dx || dy) * TURN));
      else {
        const step = $("snap").checked ? 1 : 0.1;
        change(M.move(history.present, item, dx * step, dy * step));
      }
    } else if (e.key === "Delete" || e.key === "Backspace") {
      e.preventDefault();
      change(M.remove(history.present, item));
      $("drawing").focus();
    }
  }
  if (readOnly) return show();

  // Ctrl+Z and Ctrl+Shift+Z (or Ctrl+Y) anywhere on the screen, whatever has the focus (a
  // button just pressed, or nothing once the form it was in is gone), except a field,
  // whose own undo is the browser's.
  const keys = (e) => {
    if (!(e.ctrlKey || e.metaKey) || e.key.toLowerCase() !== "z" && e.key.toLowerCase() !== "y") return;
    if (e.target instanceof Element && e.target.matches("input, select, textarea")) return;
    e.preventDefault();
    travel(e.shiftKey || e.key.toLowerCase() === "y" ? H.redo : H.undo);
  };
  document.addEventListener("keydown", keys);
  onLeave(() => document.removeEventListener("keydown", keys));
  $("undo").onclick = () => travel(H.undo);
  $("redo").onclick = () => travel(H.redo);
  $("venue-name").addEventListener("change", (e) => change(M.rename(history.present, e.target.value)));
  $("venue-name").addEventListener("input", () => show());
  $("focal").onclick = () => {
    const stage = history.present.items.find((i) => i.kind === "shape" && i.shape === "stage");
    change(M.setFocal(history.present, stage ? { x: stage.x, y: stage.y } : canvas.centre()));
  };

  for (const button of document.querySelectorAll("[data-tool]")) {
    button.onclick = () => openTool(button.dataset.tool);
  }
  function openTool(tool) {
    const box = $("tool");
    box.hidden = false;
    box.innerHTML = toolForm(tool);
    const form = box.querySelector("form");
    form.querySelector("input, select").focus();
    form.querySelector("[data-action=cancel-tool]").onclick = () => { box.hidden = true; box.innerHTML = ""; };
    form.onsubmit = (e) => {
      e.preventDefault();
      const f = fields(form);
      try {
        const d = history.present;
        const added = tool === "rows" ? M.addBlock(d, f, below(canvas, d, 2))
          : tool === "text" ? M.addText(d, { text: f.text, size: Number(f.size) }, below(canvas, d, 1.5))
          : tool === "area" ? M.addShape(d, { shape: "area", form: "rect", w: Number(f.w), h: Number(f.h), text: f.text }, below(canvas, d, Number(f.h) / 2 + 1))
          : M.addShape(d, { shape: f.shape, form: f.form, w: Number(f.w), h: Number(f.h), text: f.text },
            (f.shape === "stage" ? above : below)(canvas, d, Number(f.h) / 2 + 2));
        if (tool === "area" && !f.text.trim()) throw new M.Refused({ text: "A standing area is named: events sell it by that name." });
        selected = added.id;
        box.hidden = true;
        box.innerHTML = "";
        change(added.drawing, { refit: true });
        $("drawing").querySelector(`[data-item="${CSS.escape(added.id)}"]`).focus();
      } catch (err) {
        if (!(err instanceof M.Refused)) throw err;
        showErrors(form, err.errors);
      }
    };
  }

  $("selection").addEventListener("submit", (e) => {
    e.preventDefault();
    const form = e.target;
    try {
      const patch = fields(form);
      change(M.edit(history.present, form.dataset.itemForm, patch));
      $("selection").innerHTML = "";
      show();
    } catch (err) {
      if (!(err instanceof M.Refused)) throw err;
      showErrors(form, err.errors);
    }
  });
  $("selection").addEventListener("click", (e) => {
    if (!e.target.matches("[data-action=remove-item]")) return;
    change(M.remove(history.present, e.target.closest("form").dataset.itemForm));
  });
  $("drawn").addEventListener("click", (e) => {
    const pick = e.target.closest("[data-pick]");
    if (!pick) return;
    selected = pick.dataset.pick;
    show();
    $("drawing").querySelector(`[data-item="${CSS.escape(selected)}"]`).focus();
  });
  $("problems").addEventListener("click", (e) => {
    const li = e.target.closest("[data-items]");
    if (li) { selected = li.dataset.items.split(" ")[0]; show(); }
  });

  $("save").onclick = async () => {
    const d = { ...history.present, name: $("venue-name").value };
    if (problems(d).length) {
      $("design-result").innerHTML = `<div class="error" role="alert">Fix the problems listed first: the venue is saved only as drawn and whole.</div>`;
      return;
    }
    const body = M.compile(d);
    $("save").disabled = true;
    try {
      const saved = id && !copy
        ? await api("PUT", `/v1/venues/${encodeURIComponent(id)}`, { json: body })
        : await api("POST", "/v1/venues", { json: { ...body, organization_id: organization() } });
      sessionStorage.removeItem(DRAFT);
      go(`/admin/venues/${saved.id}`);
    } catch (err) {
      if (err.status === 409 && id) copy = true;
      $("design-result").innerHTML = errorBox(err);
      $("save").disabled = false;
    }
  };
  show();
}
