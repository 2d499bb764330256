// <boxoffice-seat-map>: the seat map as a custom element a ticketing platform puts in its
// own checkout, on its own origin (which BOXOFFICE_ALLOWED_ORIGINS must name). Served as
// /embed.js after hall.js, which draws the hall. The platform's page drives it through
// attributes (server, event, token, max-seats, locale, ticket-types, hold-on-select),
// methods (select, hold, release, clearSelection, checkout, holdBest; the selection
// property) and listens to its events (ready, selectionchange, hold, holdfailed, expired,
// order), whose detail is the API's own answer or problem. A failure is an event, never
// an exception in the host's page. The user token stays in the element's memory; the
// hold's token is kept in sessionStorage per event, so a reload brings a live hold back
// as the selection. With hold-on-select, each click holds its seat at once and each
// unclick frees it, all in one hold that grows and shrinks. Zoom, pan, pinch and arrow
// keys are hall.js's, as on the page at /.
"use strict";

(() => {
  const STRINGS = {
    en: {
      map: "Seat map. Arrow keys move between seats, Enter or Space selects.",
      chosen: (n) => (n === 1 ? "1 seat chosen" : `${n} seats chosen`),
      none: "No seats chosen",
      held: (n, until) => `${n} held until ${until}`,
      wheelchair: "wheelchair space", companion: "companion seat", restricted: "restricted view",
      zoomIn: "Zoom in", zoomOut: "Zoom out", fit: "Fit", tools: "Map",
      best: "Or let us choose", seats: "Seats", type: "Type", any: "Any", bestHold: "Best available",
      bestBusy: "Release your seats to let us choose",
      status: { available: "available", held: "held", sold: "sold", not_for_sale: "not for sale" },
    },
    de: {
      map: "Saalplan. Pfeiltasten wechseln den Platz, Eingabe oder Leertaste wählt.",
      chosen: (n) => (n === 1 ? "1 Platz gewählt" : `${n} Plätze gewählt`),
      none: "Keine Plätze gewählt",
      held: (n, until) => `${n} reserviert bis ${until}`,
      wheelchair: "Rollstuhlplatz", companion: "Begleitplatz", restricted: "eingeschränkte Sicht",
      zoomIn: "Vergrößern", zoomOut: "Verkleinern", fit: "Ganzer Saal", tools: "Saalplan",
      best: "Oder wir wählen für Sie", seats: "Plätze", type: "Kategorie", any: "Alle", bestHold: "Beste Plätze",
      bestBusy: "Geben Sie Ihre Plätze frei, um wählen zu lassen",
      status: { available: "frei", held: "reserviert", sold: "verkauft", not_for_sale: "nicht im Verkauf" },
    },
  };
  const STYLE = `
    :host { display: block; font-family: var(--bo-font, system-ui, sans-serif); color: #1d2125; }
    svg { width: 100%; height: auto; max-height: 80vh; display: block; touch-action: none; user-select: none; }
    svg.dragging { cursor: grabbing; }
    .tools { display: flex; gap: .3rem; justify-content: flex-end; margin-bottom: .3rem; }
    button, select { font: inherit; min-height: 2.25rem; min-width: 2.25rem; border-radius: .3rem;
      border: 1px solid #6c757d; background: #fff; color: #1d2125; padding: 0 .6rem; cursor: pointer; }
    button:disabled { color: #5c6670; cursor: not-allowed; }
    button:focus-visible, select:focus-visible { outline: 3px solid #0a58ca; outline-offset: 1px; }
    .best { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .6rem 0 0; padding: 0; border: 0; }
    .best legend { font-weight: 600; padding: 0; margin-bottom: .3rem; }
    .best label { display: flex; flex-direction: column; font-size: .85rem; gap: .15rem; }
    .seat[aria-busy="true"] { opacity: .55; }
    .seat { fill: var(--bo-available, #2f6fb3); stroke: #fff; stroke-width: .06; cursor: pointer; }
    .seat[data-status="held"] { fill: var(--bo-held, #aab2ba); cursor: not-allowed; }
    .seat[data-status="sold"] { fill: var(--bo-sold, #4a525a); cursor: not-allowed; }
    .seat[data-status="not_for_sale"] { fill: #fff; stroke: #b8c0c8; stroke-width: .05; stroke-dasharray: .12 .1; cursor: not-allowed; }
    .seat[aria-checked="true"], .seat.mine { fill: var(--bo-selected, #e0a800); stroke: #111; stroke-width: .16; }
    .seat:focus { outline: none; stroke: #0a58ca; stroke-width: .26; }
    .seat-mark, .shape, text { pointer-events: none; }
    .section-label { font-size: .9px; fill: #3d454d; font-weight: 700; text-anchor: middle; dominant-baseline: central; }
    .row-label { font-size: .55px; fill: #5c6670; text-anchor: middle; dominant-baseline: central; }
    .shape text { text-anchor: middle; dominant-baseline: central; fill: #3d454d; font-weight: 600; }
    .shape-stage rect, .shape-stage circle, .shape-stage polygon { fill: #e3e6ea; stroke: #8a949e; stroke-width: .08; }
    .shape-area rect, .shape-area circle, .shape-area polygon { fill: #f3f5f7; stroke: #b8c0c8; stroke-width: .06; stroke-dasharray: .3 .2; }
    .status { margin: .3rem 0 0; font-size: .9rem; }`;

  class BoxofficeSeatMap extends HTMLElement {
    static observedAttributes = ["server", "event", "token", "locale", "ticket-types", "max-seats"];

    constructor() {
      super();
      this.attachShadow({ mode: "open" });
      this._selected = new Set();
      this._seats = new Map(); // id -> {seat, status, el}
      this._rows = [];
      this._hold = null; // {hold_token, seats, expires_at}
      this._busy = Promise.resolve(); // hold-on-select's calls, one after another
      this._types = []; // the event's ticket types, for the picker
    }

    connectedCallback() { this._start(); }
    disconnectedCallback() { this._stop(); }
    attributeChangedCallback(name, before, after) {
      if (this.isConnected && before !== after && before !== null) { this._stop(); this._start(); }
    }

    get _text() {
      const locale = (this.getAttribute("locale") || navigator.language || "en").slice(0, 2);
      return STRINGS[locale] || STRINGS.en;
    }

    /// The chosen seats, with their labels, ticket types and prices.
    get selection() {
      return [...this._selected].map((id) => {
        const s = this._seats.get(id).seat;
        return { id: s.id, label: s.label, ticket_type: s.ticket_type, price_cents: s.price_cents };
      });
    }

    /// Chooses these seats (those free and of an offered type), instead of the selection.
    select(ids) {
      this._selected = new Set((ids || []).filter((id) => this._choosable(id)).slice(0, this._max()));
      this._render();
    }

    clearSelection() { this.select([]); }

    /// Holds the selection, all or none: `hold` with the hold, or `holdfailed` with the
    /// problem. Resolves to the hold, or null.
    async hold() {
      if (this._onSelect() && this._hold) return this._answerHold();
      const seats = [...this._selected];
      const answer = await this._call("POST", `/holds`, { seats });
      if (!answer.ok) return this._fail("holdfailed", answer.body);
      this._keep(answer.body);
      this._selected = new Set(this._hold.seats);
      this._render();
      this._emit("hold", answer.body);
      return answer.body;
    }

    /// Holds the best `quantity` seats free now (of `ticketType`, if given), side by side
    /// where a row has them, as the picker does: `hold` or `holdfailed`, as `hold()`.
    async holdBest(quantity, ticketType) {
      if (this._hold) return this._fail("holdfailed", { code: "hold_exists", detail: this._text.bestBusy });
      const best_available = { quantity: Number(quantity) };
      if (ticketType) best_available.ticket_type = ticketType;
      const answer = await this._call("POST", `/holds`, { best_available });
      if (!answer.ok) return this._fail("holdfailed", answer.body);
      this._keep(answer.body);
      this._selected = new Set(this._hold.seats);
      this._render();
      this._emit("selectionchange", { seats: this.selection });
      this._emit("hold", answer.body);
      return answer.body;
    }

    /// Releases the hold, if there is one.
    async release() {
      if (!this._hold) return;
      await this._call("DELETE", `/holds/${this._hold.hold_token}`);
      this._forget();
      if (this._onSelect()) {
        this._selected.clear();
        this._render();
        this._emit("selectionchange", { seats: this.selection });
      }
    }

    /// Turns the hold into an order: `order` with it, or `holdfailed` with the problem
    /// (`expired` when the hold has run out). Resolves to the order, or null.
    async checkout() {
      if (!this._hold) return this._fail("holdfailed", { code: "hold_not_live", detail: "nothing is held" });
      const answer = await this._call("POST", `/orders`, { hold_token: this._hold.hold_token });
      if (!answer.ok) {
        if (answer.body && answer.body.code === "hold_not_live") { this._forget(); this._emit("expired", answer.body); return null; }
        return this._fail("holdfailed", answer.body);
      }
      this._forget();
      this._selected.clear();
      this._render();
      this._emit("order", answer.body);
      return answer.body;
    }

    // ---- inside ----

    _emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true })); }
    _fail(type, problem) { this._emit(type, problem); return null; }
    _max() { return Number(this.getAttribute("max-seats")) || 8; }
    _onSelect() { return this.hasAttribute("hold-on-select") && this.getAttribute("hold-on-select") !== "false"; }
    _offered() { return (this.getAttribute("ticket-types") || "").split(",").map((t) => t.trim()).filter(Boolean); }
    _base() { return (this.getAttribute("server") || location.origin).replace(/\/+$/, ""); }
    _path() { return `${this._base()}/v1/events/${encodeURIComponent(this.getAttribute("event") || "")}`; }
    _key() { return `boxoffice.embed.hold.${this.getAttribute("event")}`; }

    _choosable(id) {
      const entry = this._seats.get(id);
      if (!entry || entry.status !== "available") return false;
      const offered = this._offered();
      return !offered.length || offered.includes(entry.seat.ticket_type);
    }

    // A call to the event's API as the buyer; never throws: {ok, status, body}.
    async _call(method, path, body) {
      try {
        const headers = { authorization: `Bearer ${this._token}` };
        if (body) headers["content-type"] = "application/json";
        const r = await fetch(this._path() + path, { method, headers, body: body ? JSON.stringify(body) : undefined });
        const data = r.status === 204 ? null : await r.json().catch(() => null);
        return { ok: r.ok, status: r.status, body: data };
      } catch (e) {
        return { ok: false, status: 0, body: { code: "unreachable", detail: String(e) } };
      }
    }

    _keep(hold) {
      this._hold = { hold_token: hold.hold_token, seats: hold.seats.map((s) => s.id), expires_at: hold.expires_at, answer: hold };
      sessionStorage.setItem(this._key(), JSON.stringify(this._hold));
      clearTimeout(this._expiry);
      this._expiry = setTimeout(() => { this._forget(); this._emit("expired", { hold_token: hold.hold_token }); },
        Math.max(0, Date.parse(hold.expires_at) - Date.now()));
      this._render();
    }

    _forget() {
      this._hold = null;
      clearTimeout(this._expiry);
      sessionStorage.removeItem(this._key());
      this._render();
    }

    async _start() {
      const text = this._text;
      this.shadowRoot.innerHTML = `<style>${STYLE}</style>
        <div class="tools" role="toolbar" aria-label="${text.tools}" part="tools">
          <button type="button" data-zoom="in" aria-label="${text.zoomIn}">+</button>
          <button type="button" data-zoom="out" aria-label="${text.zoomOut}">&minus;</button>
          <button type="button" data-zoom="fit">${text.fit}</button>
        </div>
        <svg role="group" part="map" aria-label="${text.map}" xmlns="http://www.w3.org/2000/svg"></svg>
        <p class="status" part="status" aria-live="polite"></p>
        <form part="best"><fieldset class="best">
          <legend>${text.best}</legend>
          <label>${text.seats} <select name="quantity"></select></label>
          <label>${text.type} <select name="type"><option value="">${text.any}</option></select></label>
          <button type="submit" name="go">${text.bestHold}</button>
        </fieldset></form>`;
      this._svg = this.shadowRoot.querySelector("svg");
      this._viewport = new Hall.Viewport(this._svg);
      this._viewport.wire();
      this._svg.addEventListener("click", (e) => {
        if (!this._viewport.tap(e)) return;
        const el = e.target.closest(".seat");
        if (el) this._toggle(el.dataset.seatId, el);
      });
      this._svg.addEventListener("keydown", (e) => this._key_(e));
      const zooms = { in: () => this._viewport.zoomIn(), out: () => this._viewport.zoomOut(), fit: () => this._viewport.reset() };
      for (const b of this.shadowRoot.querySelectorAll("[data-zoom]")) b.addEventListener("click", zooms[b.dataset.zoom]);
      const form = this.shadowRoot.querySelector("form");
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        this.holdBest(form.quantity.value, form.type.value);
      });
      this._token = this.getAttribute("token");
      if (!this._token) {
        const session = await fetch(`${this._base()}/v1/sessions`, { method: "POST" }).then((r) => r.json()).catch(() => null);
        if (!session || !session.token) return this._fail("holdfailed", { code: "unreachable", detail: "no session" });
        this._token = session.token;
      }
      const event = await this._call("GET", "");
      this._types = event.ok ? event.body.ticket_types || [] : [];
      this._picker();
      let layout = null;
      let queue = Promise.resolve();
      const inOrder = (handle) => (m) => { queue = queue.then(() => handle(m)).catch(() => {}); };
      // A platform's token reads as its buyer: a sales channel's buyer sees the channel's
      // seats on sale. (An anonymous session's reads are everyone's.)
      const reader = this.getAttribute("token") ? this._token : null;
      const auth = reader ? { headers: { authorization: `Bearer ${reader}` } } : {};
      const on = {};
      this._source = Hall.events(`${this._path()}/stream?snapshot=statuses`, reader, on);
      on.statuses = inOrder(async (m) => {
        const body = JSON.parse(m.data);
        if (!layout || layout.version < body.version) layout = await fetch(`${this._path()}/layout`, auth).then((r) => r.json());
        if (layout.version !== body.version) return;
        const first = !this._seats.size;
        this._draw(layout, body.statuses);
        if (first) {
          await this._restore();
          this._emit("ready", { event: this.getAttribute("event"), seats: layout.seats.length });
        }
      });
      on.seats = inOrder((m) => {
        for (const c of JSON.parse(m.data).seats) {
          const entry = this._seats.get(c.id);
          if (!entry) continue;
          entry.status = c.status;
          entry.el.dataset.status = c.status;
          if (c.status !== "available" && !this._mine(c.id) && !entry.el.hasAttribute("aria-busy")) this._selected.delete(c.id);
        }
        this._render();
      });
    }

    // The best-available picker: 1 to max-seats, of the offered types.
    _picker() {
      const form = this.shadowRoot.querySelector("form");
      const offered = this._offered();
      const types = this._types.filter((t) => !offered.length || offered.includes(t.code));
      form.quantity.innerHTML = Array.from({ length: this._max() }, (_, i) => `<option>${i + 1}</option>`).join("");
      form.type.innerHTML = `<option value="">${this._text.any}</option>` +
        types.map((t) => `<option value="${t.code.replace(/"/g, "&quot;")}">${t.name.replace(/</g, "&lt;")}</option>`).join("");
      if (types.length === 1) form.type.value = types[0].code;
    }

    _stop() {
      if (this._source) this._source.close();
      clearTimeout(this._expiry);
      this._seats = new Map();
    }

    _mine(id) { return !!this._hold && this._hold.seats.includes(id); }

    _draw(layout, runs) {
      const statuses = Hall.statuses(runs, layout.seats.length);
      const seats = layout.seats.map((s, i) => ({ ...s, status: statuses[i] }));
      const text = this._text;
      const name = (s) => [s.label, ...(s.accessible ? [text.wheelchair] : []), ...(s.companion ? [text.companion] : []),
        ...(s.restricted_view ? [text.restricted] : []), text.status[s.status]].join(", ");
      const els = Hall.draw(this._svg, seats, layout.shapes, () => "",
        (s) => `role="checkbox" aria-checked="false" tabindex="-1" aria-label="${name(s).replace(/"/g, "&quot;")}"`);
      const box = this._svg.viewBox.baseVal;
      this._viewport.reset({ x: box.x, y: box.y, w: box.width, h: box.height });
      this._seats = new Map(seats.map((s) => [s.id, { seat: s, status: s.status, el: els.get(s.id) }]));
      this._rows = [];
      this._rowOf = new Map();
      let key = null;
      for (const s of seats) {
        if (s.section + "\u0000" + s.row !== key) { key = s.section + "\u0000" + s.row; this._rows.push([]); }
        const row = this._rows[this._rows.length - 1];
        this._rowOf.set(s.id, [this._rows.length - 1, row.length]);
        row.push(s.id);
      }
      const first = seats.find((s) => s.status === "available") || seats[0];
      if (first) els.get(first.id).setAttribute("tabindex", "0");
      for (const id of [...this._selected]) if (!this._choosable(id) && !this._mine(id)) this._selected.delete(id);
      this._render();
    }

    // A live hold of this buyer kept from before a reload comes back as the selection.
    async _restore() {
      const kept = JSON.parse(sessionStorage.getItem(this._key()) || "null");
      if (!kept) return;
      const answer = await this._call("GET", `/holds/${kept.hold_token}`);
      if (!answer.ok) { sessionStorage.removeItem(this._key()); return; }
      this._keep(answer.body);
      this._selected = new Set(this._hold.seats);
      this._render();
      this._emit("hold", answer.body);
    }

    _toggle(id, el) {
      if (this._onSelect()) return this._toggleHeld(id, el);
      if (this._hold) return; // a held basket is released or bought, not edited
      if (this._selected.has(id)) this._selected.delete(id);
      else if (this._choosable(id) && this._selected.size < this._max()) this._selected.add(id);
      else return;
      if (el) el.focus();
      this._render();
      this._emit("selectionchange", { seats: this.selection });
    }

    // hold-on-select: a click holds the seat at once (a new hold, or the hold grown by it),
    // an unclick frees it (the hold shrunk, or gone with its last seat). One call at a
    // time, in the order of the clicks; a refusal is `holdfailed` and the seat is not
    // chosen.
    _toggleHeld(id, el) {
      const adding = !this._selected.has(id);
      if (adding && !(this._choosable(id) && this._selected.size < this._max())) return;
      if (adding) this._selected.add(id);
      else this._selected.delete(id);
      const entry = this._seats.get(id);
      entry.el.setAttribute("aria-busy", "true");
      if (el) el.focus();
      this._render();
      this._busy = this._busy.then(async () => {
        const token = this._hold && this._hold.hold_token;
        let answer;
        if (adding) {
          answer = token
            ? await this._call("POST", `/holds/${token}/seats`, { seats: [id] })
            : await this._call("POST", `/holds`, { seats: [id] });
        } else if (token && this._mine(id)) {
          answer = await this._call("DELETE", `/holds/${token}/seats/${encodeURIComponent(id)}`);
        } else {
          answer = { ok: true, status: 204, body: null };
        }
        entry.el.removeAttribute("aria-busy");
        if (!answer.ok) {
          if (adding) this._selected.delete(id);
          if (answer.body && (answer.body.code === "hold_not_live" || answer.status === 404)) {
            this._forget();
            this._emit("expired", answer.body);
          }
          this._render();
          this._emit("holdfailed", answer.body);
          return;
        }
        if (answer.status === 204) this._forget();
        else this._keep(answer.body);
        this._render();
        this._emit("selectionchange", { seats: this.selection });
        if (this._hold) this._emit("hold", answer.body);
      });
    }

    _answerHold() { return this._hold ? this._hold.answer : null; }

    _key_(e) {
      const el = e.target.closest(".seat");
      if (!el) return;
      const id = el.dataset.seatId;
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); this._toggle(id, el); return; }
      if (!e.key.startsWith("Arrow")) return;
      e.preventDefault();
      const next = Hall.neighbour(this._rows, this._rowOf, (seat) => this._seats.get(seat).seat.x, id, e.key);
      el.setAttribute("tabindex", "-1");
      const to = this._seats.get(next).el;
      to.setAttribute("tabindex", "0");
      to.focus();
    }

    _render() {
      for (const [id, entry] of this._seats) {
        entry.el.setAttribute("aria-checked", String(this._selected.has(id)));
        entry.el.classList.toggle("mine", this._mine(id));
      }
      const text = this._text;
      const status = this.shadowRoot.querySelector(".status");
      if (!status) return;
      const go = this.shadowRoot.querySelector("form [name=go]");
      if (go) {
        go.disabled = !!this._hold;
        go.title = this._hold ? text.bestBusy : "";
      }
      status.textContent = this._hold
        ? text.held(this._hold.seats.length, new Date(this._hold.expires_at).toLocaleTimeString(this.getAttribute("locale") || undefined, { timeStyle: "short" }))
        : this._selected.size ? text.chosen(this._selected.size) : text.none;
    }
  }

  if (!customElements.get("boxoffice-seat-map")) customElements.define("boxoffice-seat-map", BoxofficeSeatMap);
})();
