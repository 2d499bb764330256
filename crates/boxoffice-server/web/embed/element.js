// <boxoffice-seat-map>: the seat map as a custom element a ticketing platform puts in its
// own checkout, on its own origin (which BOXOFFICE_ALLOWED_ORIGINS must name). The
// platform's page drives it through attributes (server, event, token, max-seats, locale,
// ticket-types, hold-on-select), methods (select, hold, release, clearSelection, checkout,
// holdBest, book; the selection property) and listens to its events (ready,
// selectionchange, hold, holdfailed, expired, order, booking, bookingfailed), whose detail
// is the API's answer or problem. A failure is an event, never an exception in the host's
// page; a busy server's turn is waited out, saying so. The user token stays in memory; the
// hold's token is kept in sessionStorage per event, so a reload brings a live hold back.
// With hold-on-select, each click holds its seat at once and each unclick frees it, in one
// hold. Drawing, zoom, pan, arrow keys, the stream and times (in the event's zone) are the
// core modules', as on the page at /; standing areas are standing.js's.

import { Problem, request, patiently } from "../core/api.js";
import { esc, eventClock } from "../core/format.js";
import { follow, free } from "../core/stream.js";
import { draw } from "../core/hall.js";
import { Viewport, SeatKeys } from "../core/viewport.js";
import { STRINGS, STYLE } from "./strings.js";
import { standing, showLeft, showBooked } from "./standing.js";

class BoxofficeSeatMap extends HTMLElement {
  static observedAttributes = ["server", "event", "token", "locale", "ticket-types", "max-seats"];

  constructor() {
    super();
    this.attachShadow({ mode: "open" });
    this._selected = new Set();
    this._seats = new Map(); // id -> {seat, status, el}
    this._hold = null; // {hold_token, seats, expires_at, answer}
    this._busy = Promise.resolve(); // hold-on-select's calls, one after another
    this._types = []; // the event's ticket types, for the picker; `_zone` its time zone
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

  /// Chooses these seats instead of the selection; answers those it could not take, with
  /// why: `[{id, reason: "taken" | "not_for_sale" | "unknown" | "limit"}]`.
  select(ids) {
    const refused = [];
    const chosen = new Set();
    for (const id of ids || []) {
      const reason = this._whyNot(id);
      if (reason) refused.push({ id, reason });
      else if (chosen.size >= this._max()) refused.push({ id, reason: "limit" });
      else chosen.add(id);
    }
    this._selected = chosen;
    this._render();
    return refused;
  }

  clearSelection() { this.select([]); }

  /// Holds the selection, all or none: `hold` with the hold, or `holdfailed` with the
  /// problem (`nothing_selected`, sending nothing, when nothing is chosen). Resolves to the
  /// hold, or null.
  async hold() {
    if (this._onSelect() && this._hold) return this._hold.answer;
    const seats = [...this._selected];
    if (!seats.length) return this._fail("holdfailed", { code: "nothing_selected", detail: this._text.none });
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

  /// Books `quantity` places in the standing area `area`: `booking` with the API's answer
  /// (`paid`, or `pending_payment` with `pay_by`), or `bookingfailed` with the problem.
  async book(area, quantity) {
    const answer = await this._call("POST", `/bookings`, { area, quantity: Number(quantity) });
    showBooked(this.shadowRoot, area, this._text, answer, this.getAttribute("locale") || undefined);
    if (!answer.ok) return this._fail("bookingfailed", answer.body);
    this._emit("booking", answer.body);
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

  // Why a seat cannot be chosen, or null when it can.
  _whyNot(id) {
    const entry = this._seats.get(id);
    if (!entry) return "unknown";
    if (entry.status === "not_for_sale") return "not_for_sale";
    if (!free(entry.status)) return "taken";
    const offered = this._offered();
    return !offered.length || offered.includes(entry.seat.ticket_type) ? null : "not_for_sale";
  }

  _choosable(id) { return this._whyNot(id) === null; }

  // A call to the event's API as the buyer, a busy server's turn waited out; never throws:
  // {ok, status, body}.
  async _call(method, path, json) {
    try {
      const body = await patiently(() => request(method, this._path() + path, { token: this._token, json }),
        { waiting: (ms) => this._showBusy(ms) });
      return { ok: true, status: body === null ? 204 : 200, body };
    } catch (e) {
      if (!(e instanceof Problem)) return { ok: false, status: 0, body: { code: "unreachable", detail: String(e) } };
      return { ok: false, status: e.status, body: e.body.code ? e.body : { code: e.code, detail: e.message } };
    }
  }

  _showBusy(ms) {
    const busy = this.shadowRoot.querySelector(".busy");
    if (!busy) return;
    clearInterval(this._busyTimer);
    busy.hidden = !ms;
    if (!ms) return;
    const at = Date.now() + ms;
    const show = () => { busy.textContent = this._text.busy((Math.max(0, at - Date.now()) / 1000).toFixed(1)); };
    show();
    this._busyTimer = setInterval(show, 100);
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
      <div class="tools" role="toolbar" aria-label="${esc(text.tools)}" part="tools">
        <button type="button" data-zoom="in" aria-label="${esc(text.zoomIn)}">+</button>
        <button type="button" data-zoom="out" aria-label="${esc(text.zoomOut)}">&minus;</button>
        <button type="button" data-zoom="fit">${esc(text.fit)}</button>
      </div>
      <svg role="group" part="map" aria-label="${esc(text.map)}" xmlns="http://www.w3.org/2000/svg"></svg>
      <p class="status" part="status" aria-live="polite"></p>
      <p class="busy" part="busy" role="status" hidden></p>
      <form part="best"><fieldset class="best">
        <legend>${esc(text.best)}</legend>
        <label>${esc(text.seats)} <select name="quantity"></select></label>
        <label>${esc(text.type)} <select name="type"><option value="">${esc(text.any)}</option></select></label>
        <button type="submit" name="go">${esc(text.bestHold)}</button>
      </fieldset></form>
      <div class="standing-box"></div>`;
    this._svg = this.shadowRoot.querySelector("svg");
    this._viewport = new Viewport(this._svg);
    this._viewport.wire();
    this._keys = new SeatKeys(this._svg, { choose: (id, el) => this._toggle(id, el) });
    this._svg.addEventListener("click", (e) => {
      if (!this._viewport.tap(e)) return;
      const el = e.target.closest(".seat");
      if (el) this._toggle(el.dataset.seatId, el);
    });
    const zooms = { in: () => this._viewport.zoomIn(), out: () => this._viewport.zoomOut(), fit: () => this._viewport.reset() };
    for (const b of this.shadowRoot.querySelectorAll("[data-zoom]")) b.addEventListener("click", zooms[b.dataset.zoom]);
    const form = this.shadowRoot.querySelector("form");
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.holdBest(form.quantity.value, form.type.value);
    });
    // A platform's token reads as its buyer: a sales channel's buyer sees the channel's
    // seats on sale. (An anonymous session's reads are everyone's.)
    const reader = (this._token = this.getAttribute("token"));
    if (!this._token) {
      const session = await request("POST", `${this._base()}/v1/sessions`).catch(() => null);
      if (!session || !session.token) return this._fail("holdfailed", { code: "unreachable", detail: "no session" });
      this._token = session.token;
    }
    const event = await this._call("GET", "");
    this._types = event.ok ? event.body.ticket_types || [] : [];
    this._zone = event.ok ? event.body.time_zone || null : null;
    this._picker();
    standing(this.shadowRoot.querySelector(".standing-box"), event.ok ? event.body.ga_areas || [] : [],
      this._text, this.getAttribute("locale") || undefined, (area, quantity) => this.book(area, quantity));
    this._source = follow(this._path(), {
      token: reader,
      snapshot: async ({ seats, shapes }) => {
        const first = !this._seats.size;
        this._draw(seats, shapes);
        if (first) {
          await this._restore();
          this._emit("ready", { event: this.getAttribute("event"), seats: seats.length });
        }
      },
      seats: (changes) => {
        for (const c of changes) {
          const entry = this._seats.get(c.id);
          if (!entry) continue;
          entry.status = c.status;
          entry.el.dataset.status = c.status;
          if (!free(c.status) && !this._mine(c.id) && !entry.el.hasAttribute("aria-busy")) this._selected.delete(c.id);
        }
        this._render();
      },
      ga: (g) => showLeft(this.shadowRoot, g, this._text),
    });
  }

  // The best-available picker: 1 to max-seats, of the offered types.
  _picker() {
    const form = this.shadowRoot.querySelector("form");
    const offered = this._offered();
    const types = this._types.filter((t) => !offered.length || offered.includes(t.code));
    form.quantity.innerHTML = Array.from({ length: this._max() }, (_, i) => `<option>${i + 1}</option>`).join("");
    form.type.innerHTML = `<option value="">${esc(this._text.any)}</option>` +
      types.map((t) => `<option value="${esc(t.code)}">${esc(t.name)}</option>`).join("");
    if (types.length === 1) form.type.value = types[0].code;
  }

  _stop() {
    if (this._source) this._source.close();
    clearTimeout(this._expiry);
    clearInterval(this._busyTimer);
    this._seats = new Map();
  }

  _mine(id) { return !!this._hold && this._hold.seats.includes(id); }

  _draw(seats, shapes) {
    const text = this._text;
    const name = (s) => [s.label, ...(s.accessible ? [text.wheelchair] : []), ...(s.companion ? [text.companion] : []),
      ...(s.restricted_view ? [text.restricted] : []), text.status[s.status]].join(", ");
    const drawn = draw(this._svg, seats, shapes, {
      attributes: (s) => `role="checkbox" aria-checked="false" tabindex="-1" aria-label="${esc(name(s))}"`,
    });
    this._viewport.reset(drawn.fit);
    this._seats = new Map(seats.map((s) => [s.id, { seat: s, status: s.status, el: drawn.els.get(s.id) }]));
    const first = seats.find((s) => free(s.status)) || seats[0];
    this._keys.reset(drawn, first && first.id);
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
    this._keys.rove(id, true);
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
    if (el) this._keys.rove(id, true);
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
      ? text.held(this._hold.seats.length, eventClock(this._hold.expires_at, this._zone))
      : this._selected.size ? text.chosen(this._selected.size) : text.none;
  }
}

if (!customElements.get("boxoffice-seat-map")) customElements.define("boxoffice-seat-map", BoxofficeSeatMap);
